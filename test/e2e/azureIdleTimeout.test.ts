// Azure's idle timeout through the load balancer Portico configured: a connection that carries nothing for the
// rule's idle timeout is forgotten, and its next request is reset (TCP reset, on by default as on AKS) or goes
// unanswered (`azure-load-balancer-disable-tcp-reset`); a connection in use for longer than the timeout goes on.
// The edge's minute lasts a second (azureIdle.ts), so the default 4 minutes are 4 s here.
import { onTestFinished } from "vitest";
import { AKS_CLASS, aksOnEmulator } from "../harness/cloudEdge/aksOnEmulator.ts";
import { HeldConnection } from "../harness/heldConnection.ts";
import { clientGet, describe, expect, test, waitFor } from "../harness/e2e.ts";

const DISABLE_TCP_RESET = "service.beta.kubernetes.io/azure-load-balancer-disable-tcp-reset";

describe("the Azure load balancer's idle timeout", () => {
  test("an idle connection is reset with TCP reset and dropped without it; a busy one outlives the timeout", async ({
    ns,
  }) => {
    await aksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("reset", "echo", { loadBalancerClass: AKS_CLASS });
    await ns.createLoadBalancer(
      "quiet",
      "echo",
      { loadBalancerClass: AKS_CLASS },
      { [DISABLE_TCP_RESET]: "true" },
    );
    const addresses = {
      reset: await ns.waitForAddress("reset", 120_000),
      quiet: await ns.waitForAddress("quiet", 120_000),
    };
    for (const address of Object.values(addresses))
      await waitFor(`an answer through ${address}`, () => clientGet(ns.context, `http://${address}/`), {
        timeoutMs: 120_000,
        intervalMs: 250,
      });

    const open = async (address: string) => {
      const held = await HeldConnection.open(ns.context.client.namespace, address, 80);
      onTestFinished(() => held.close());
      expect(await held.get()).toMatchObject({ ok: true });
      return held;
    };
    const reset = await open(addresses.reset);
    const quiet = await open(addresses.quiet);
    const busy = await open(addresses.reset);

    // Twice the timeout: the busy connection asks every second and is answered every time.
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      expect(await busy.get(), `the busy connection after ${i + 1} s`).toMatchObject({ ok: true });
    }
    // The idle ones have carried nothing for 8 s, and the edge has had passes enough to forget them.
    await new Promise((r) => setTimeout(r, 2000));
    // The reset shows the edge has swept the idle flows since; the busy connection, idle 2 s, is still there.
    expect(await reset.get()).toEqual({ ok: false, error: "ECONNRESET" });
    expect(await busy.get()).toMatchObject({ ok: true });
    // Its request waits the client's 5 s for an answer that never comes.
    expect(await quiet.get()).toEqual({ ok: false, error: "no answer" });
  });
});
