// What a user sees, with kubectl and porticoctl, of a Service Portico serves on the local cluster and of one
// it cannot serve: the address in `kubectl get`, the condition and Events in `kubectl describe`, and
// porticoctl's status and diagnosis. The Events come from the controller and speaker pods themselves.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { main as porticoctl } from "../../controller/cli/porticoctl.ts";
import { describe, expect, test, waitFor, type E2eNamespace } from "../harness/e2e.ts";
import { ensureTools } from "../harness/tools.ts";

const run = promisify(execFile);

async function kubectl(ns: E2eNamespace, ...args: string[]): Promise<string> {
  const { kubectl: binary } = await ensureTools("cluster");
  const { stdout } = await run(binary, ["--kubeconfig", ns.context.kubeconfig, "-n", ns.name, ...args]);
  return stdout;
}

async function ctl(ns: E2eNamespace, ...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await porticoctl(
    [...args, "--kubeconfig", ns.context.kubeconfig, "--controller-namespace", "portico-system"],
    (s) => (out += s),
  );
  return { code, out };
}

describe("as a user sees it", () => {
  test("a served Service: its address in kubectl get, the controller's and the announcing speaker's Events in describe, porticoctl agrees", async ({
    ns,
  }) => {
    await ns.deployEcho("echo", 1);
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");

    const table = await kubectl(ns, "get", "service", "web", "-o", "wide");
    expect(table).toMatch(
      new RegExp(`^web\\s+LoadBalancer\\s+\\S+\\s+${address.replace(/\./g, "\\.")}\\s+80:\\d+/TCP`, "m"),
    );

    // The speaker pod of the announcing node says so in an Event once it announces.
    const described = await waitFor(
      "kubectl describe to show the controller's and the speaker's Events",
      async () => {
        const text = await kubectl(ns, "describe", "service", "web");
        return /EnsuredLoadBalancer/.test(text) && /nodeAssigned/.test(text) ? text : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(described).toContain(`LoadBalancer Ingress:     ${address}`);
    expect(described).toMatch(/nodeAssigned\s+.*worker-\d/);

    const status = await ctl(ns, "status", "-n", ns.name);
    expect(status.out).toContain(address);
    expect(status.code).toBe(0);
    const doctor = await ctl(ns, "doctor", `${ns.name}/web`);
    expect(doctor.out).not.toMatch(/✗/);
    expect(doctor.code).toBe(0);
  });

  test("a Service asking for an address outside every pool: a Warning in describe, and porticoctl doctor says why", async ({
    ns,
  }) => {
    await ns.deployEcho("echo", 1);
    await ns.createLoadBalancer("web", "echo", { loadBalancerIP: "198.51.100.7" });
    const described = await waitFor(
      "kubectl describe to show a Warning Event naming the address",
      async () => {
        const text = await kubectl(ns, "describe", "service", "web");
        return /Warning\s+AddressNotInAnyPool/.test(text) ? text : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(described).toContain("198.51.100.7");
    expect(described).not.toContain("LoadBalancer Ingress");
    const table = await kubectl(ns, "get", "service", "web");
    expect(table).toMatch(/^web\s+LoadBalancer\s+\S+\s+<pending>/m);

    const doctor = await ctl(ns, "doctor", `${ns.name}/web`);
    expect(doctor.code).toBe(1);
    expect(doctor.out).toMatch(/✗ .*198\.51\.100\.7/);
  });

  test("kubectl logs and exec reach Portico's pods: the apiserver dials the kubelets through its egress proxy on the LAN", async ({
    ns,
  }) => {
    const system = { ...ns, name: "portico-system" } as E2eNamespace;
    // Either replica's log: both log as the controller from their start.
    const logs = await kubectl(system, "logs", "deployment/portico-controller", "--tail=20");
    expect(logs).toContain('"name":"portico-controller"');
    const speakers = JSON.parse(
      await kubectl(system, "get", "pods", "-l", "app.kubernetes.io/component=speaker", "-o", "json"),
    ) as {
      items: { metadata: { name: string }; spec: { nodeName: string } }[];
    };
    expect(speakers.items.length).toBe(ns.context.nodes.length);
    // Each speaker runs on its own node's kubelet: exec reaches every node. The speaker learns its node from
    // NODE_NAME, so the answer is the node's, read inside the container.
    for (const pod of speakers.items) {
      const out = await kubectl(
        system,
        "exec",
        pod.metadata.name,
        "-c",
        "speaker",
        "--",
        "node",
        "-p",
        "process.env.NODE_NAME",
      );
      expect(out.trim()).toBe(pod.spec.nodeName);
    }
  });
});
