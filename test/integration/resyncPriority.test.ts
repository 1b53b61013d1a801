// The periodic resync is background work: the provider is told so, and can let changes users wait for go first.
// A change to the Service while its resync pass is queued makes that pass a user's again.
import type { EnsureResult, LoadBalancerIntent, LoadBalancerProvider } from "../../providers/provider.ts";
import { expect, mergePatch, test, waitFor } from "../harness/index.ts";
import { startPortico } from "../harness/controller.ts";

class RecordingProvider implements LoadBalancerProvider {
  readonly name = "recording";
  readonly passes: { service: string; background: boolean; claimedNow: boolean }[] = [];
  ensure(intent: LoadBalancerIntent, context: { background?: boolean } = {}): Promise<EnsureResult> {
    this.passes.push({
      service: intent.service.name,
      background: context.background === true,
      claimedNow: intent.claimedNow === true,
    });
    return Promise.resolve({ ingress: [{ hostname: "lb.example" }], changes: [], notices: [] });
  }
  plan() {
    return Promise.resolve({ operations: [] });
  }
  delete() {
    return Promise.resolve();
  }
  ownedServices() {
    return Promise.resolve([]);
  }
}

test("resync passes are marked background, passes for changes are not, and only the first is told the Service is new", async ({
  cluster,
}) => {
  const provider = new RecordingProvider();
  await startPortico(cluster, { resyncPeriodMs: 1000 }, { provider });
  await cluster.createService("web", {
    type: "LoadBalancer",
    loadBalancerClass: "portico.io/aws-nlb",
    ports: [{ port: 80, targetPort: 8080 }],
  });
  await waitFor("a resync pass", () => provider.passes.some((p) => p.background));
  // The first pass, for the new Service, was a user's, and the one that claimed it: the provider may skip looking
  // for what it has made, since the finalizer is on before anything is. Every later pass finds the finalizer on.
  expect(provider.passes[0]).toEqual({ service: "web", background: false, claimedNow: true });
  expect(provider.passes.slice(1).filter((p) => p.claimedNow)).toEqual([]);
  const seen = provider.passes.length;
  await cluster.core.patchNamespacedService(
    {
      name: "web",
      namespace: cluster.namespace,
      body: {
        metadata: { annotations: { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal" } },
      },
    },
    mergePatch,
  );
  await waitFor("a pass for the change", () => provider.passes.slice(seen).some((p) => !p.background));
});
