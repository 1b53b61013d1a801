// The check both clouds' source-range tests make, with its negative control: the same pods behind two Services,
// one admitting the LAN's client and one admitting another range; the first answers, the second drops the client
// (once the edge has applied everything the cloud holds), and answers once its range is widened to the client.
import { expect } from "vitest";
import { mergePatch } from "../kube.ts";
import { clientGet, clientStatus, type E2eNamespace } from "../localCluster/usage.ts";
import { waitFor } from "../wait.ts";

export async function onlyAdmittedClientsAnswered(
  ns: E2eNamespace,
  edge: { settled(): Promise<void> },
  urls: { open: string; closed: string },
  /** The merge patch to the "closed" Service that admits the client too. */
  widen: object,
): Promise<void> {
  await waitFor(
    "the admitted client to be answered",
    async () => (await clientGet(ns.context, urls.open)) ?? undefined,
    {
      timeoutMs: 120_000,
      intervalMs: 500,
    },
  );
  // The same pods behind both, passing their checks (one answered); two passes since: all the cloud holds applied.
  await edge.settled();
  for (let i = 0; i < 3; i++) expect(await clientStatus(ns.context, urls.closed)).toBe(0);
  await ns.core.patchNamespacedService({ name: "closed", namespace: ns.name, body: widen }, mergePatch);
  await waitFor(
    "the client to be admitted once the range includes it",
    async () => (await clientGet(ns.context, urls.closed)) ?? undefined,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}
