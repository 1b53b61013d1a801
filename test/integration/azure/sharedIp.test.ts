// One address shared by several Services, as cloud-provider-azure allows: Services naming the same public IP
// (azure-pip-name, or its address) serve different ports of it through one frontend, which stays while any of
// them uses it. A user's public IP is never changed or deleted; one Portico made for the name records who
// shares it and goes with the last of them, also when several of them are deleted at once.
import {
  expect,
  expectRefused,
  test,
  waitFor,
  type TestAzure,
  type TestCluster,
} from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const PIP_NAME = "service.beta.kubernetes.io/azure-pip-name";
const port = (n: number) => [{ name: "p", port: n, targetPort: 8080, protocol: "TCP" as const }];
const feOf = (uid: string) => `a${uid.replace(/-/g, "")}`;

test("Services naming the same public IP share its frontend on different ports; it stays until the last one goes", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const pip = await azure.createPublicIp("shared-ip", { team: "web" });
  await startPortico(cluster, { provider: "azure" });
  const web = await cluster.createService("web", lbService(port(80)), { [PIP_NAME]: "shared-ip" });
  expect(await waitForIP(cluster, "web")).toBe(pip.ipAddress);
  const api = await cluster.createService("api", lbService(port(443)), { [PIP_NAME]: "shared-ip" });
  // The address named another way: spec.loadBalancerIP, as cloud-provider-azure also matches it.
  const dns = await cluster.createService(
    "dns",
    lbService([{ name: "dns", port: 53, targetPort: 5353, protocol: "UDP" }], {
      loadBalancerIP: pip.ipAddress!,
    }),
  );
  expect(await waitForIP(cluster, "api")).toBe(pip.ipAddress);
  expect(await waitForIP(cluster, "dns")).toBe(pip.ipAddress);
  const [webFe, apiFe, dnsFe] = [web, api, dns].map((s) => feOf(s.metadata!.uid!));
  let lb = (await inventory(azure)).loadBalancers[0]!;
  expect(lb.frontends.map((f) => [f.name, f.publicIp])).toEqual([[webFe, "shared-ip"]]);
  expect(lb.rules.map((r) => [r.name, r.frontend]).sort()).toEqual(
    [
      [`${webFe}-TCP-80`, webFe],
      [`${apiFe}-TCP-443`, webFe],
      [`${dnsFe}-UDP-53`, webFe],
    ].sort(),
  );

  // The same port again is refused before anything is written, and the others keep serving.
  await cluster.createService("clash", lbService(port(443)), { [PIP_NAME]: "shared-ip" });
  await expectRefused(cluster, "clash", {
    reason: "SharedIPPortInUse",
    mentions: ["spec.ports", "TCP port 443"],
  });
  expect((await inventory(azure)).loadBalancers[0]!.rules).toHaveLength(3);
  await cluster.core.deleteNamespacedService({ name: "clash", namespace: cluster.namespace });

  // The first Service goes: its frontend is handed to a Service still using it, in the same write.
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("web's rule gone", async () => (await inventory(azure)).loadBalancers[0]?.rules.length === 2);
  lb = (await inventory(azure)).loadBalancers[0]!;
  expect(lb.frontends).toHaveLength(1);
  const heir = lb.frontends[0]!.name;
  expect([apiFe, dnsFe]).toContain(heir);
  expect(lb.frontends[0]!.publicIp).toBe("shared-ip");
  expect(lb.rules.every((r) => r.frontend === heir)).toBe(true);
  for (const name of ["api", "dns"])
    expect((await cluster.getService(name)).status?.loadBalancer?.ingress?.[0]?.ip).toBe(pip.ipAddress);

  for (const name of ["api", "dns"])
    await cluster.core.deleteNamespacedService({ name, namespace: cluster.namespace });
  await waitFor("the load balancer gone", async () => (await inventory(azure)).loadBalancers.length === 0);
  expect((await inventory(azure)).publicIps).toEqual([
    {
      name: "shared-ip",
      address: pip.ipAddress,
      tags: { team: "web" },
      usedBy: undefined,
      fqdn: undefined,
      ipTags: [],
    },
  ]);
});

test("internal Services asking for the same static private address share its frontend on different ports", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const annotations = {
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
    "service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.0.1.50",
  };
  const web = await cluster.createService("web", lbService(port(80)), annotations);
  const api = await cluster.createService("api", lbService(port(443)), annotations);
  expect(await waitForIP(cluster, "web")).toBe("10.0.1.50");
  expect(await waitForIP(cluster, "api")).toBe("10.0.1.50");
  const lb = (await inventory(azure)).loadBalancers[0]!;
  expect(lb.name).toBe(`${cluster.namespace}-internal`);
  expect(lb.frontends).toHaveLength(1);
  expect(lb.frontends[0]).toMatchObject({ privateIp: "10.0.1.50", allocation: "Static" });
  const owner = lb.frontends[0]!.name;
  expect([web, api].map((s) => feOf(s.metadata!.uid!))).toContain(owner);
  expect(lb.rules.map((r) => r.frontend)).toEqual([owner, owner]);
});

test("a public IP Portico makes for a name is shared by the Services naming it, handed over when its first Service goes, and deleted with the last", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const web = await cluster.createService("web", lbService(port(80)), { [PIP_NAME]: "made-ip" });
  const ip = await waitForIP(cluster, "web");
  const api = await cluster.createService("api", lbService(port(443)), { [PIP_NAME]: "made-ip" });
  expect(await waitForIP(cluster, "api")).toBe(ip);
  const webUid = web.metadata!.uid!;
  const apiUid = api.metadata!.uid!;
  let pips = (await inventory(azure)).publicIps;
  expect(pips).toHaveLength(1);
  expect(pips[0]!.tags).toMatchObject({
    "portico.io-service-uid": webUid,
    "portico.io-service": `${cluster.namespace}/web`,
    "portico.io-shared-with": apiUid,
  });

  // The owner's own tags change from a fresh read: the list of who shares the public IP is kept.
  await patchService(cluster, "web", {
    metadata: { annotations: { "service.beta.kubernetes.io/azure-pip-tags": "team=web" } },
  });
  await waitFor("the owner's tag", async () => (await inventory(azure)).publicIps[0]?.tags.team === "web");
  expect((await inventory(azure)).publicIps[0]!.tags["portico.io-shared-with"]).toBe(apiUid);

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor(
    "the public IP handed to api",
    async () => (await inventory(azure)).publicIps[0]?.tags["portico.io-service-uid"] === apiUid,
  );
  pips = (await inventory(azure)).publicIps;
  expect(pips).toHaveLength(1);
  expect(pips[0]).toMatchObject({ address: ip, usedBy: feOf(apiUid) });
  expect(pips[0]!.tags["portico.io-service"]).toBe(`${cluster.namespace}/api`);
  expect(pips[0]!.tags["portico.io-shared-with"]).toBeUndefined();
  expect((await cluster.getService("api")).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ip);

  await cluster.core.deleteNamespacedService({ name: "api", namespace: cluster.namespace });
  await waitFor("nothing left", async () => {
    const inv = await inventory(azure);
    return inv.publicIps.length === 0 && inv.loadBalancers.length === 0;
  });
});

const IPV4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const SHARERS = ["s1", "s2", "s3"];

/**
 * An owner with Portico's public IP and three Services sharing its address (azure-load-balancer-ipv4), as
 * cloud-provider-azure users write them. Orphan collection is off for the test (an hour apart, after the one at
 * start): only deletion itself may clean up.
 */
async function ownerAndSharers(cluster: TestCluster, azure: TestAzure) {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure", orphanCollectionPeriodMs: 3_600_000 });
  const owner = await cluster.createService("owner", lbService(port(80)));
  const ip = await waitForIP(cluster, "owner");
  const uids: Record<string, string> = { owner: owner.metadata!.uid! };
  for (const [i, name] of SHARERS.entries()) {
    const svc = await cluster.createService(name, lbService(port(81 + i)), { [IPV4]: ip });
    uids[name] = svc.metadata!.uid!;
  }
  for (const name of SHARERS) expect(await waitForIP(cluster, name)).toBe(ip);
  await waitFor("every sharer on the public IP's list", async () => {
    const tags = (await inventory(azure)).publicIps[0]?.tags ?? {};
    return SHARERS.every((s) => tags["portico.io-shared-with"]?.includes(uids[s]!));
  });
  const tags = (await inventory(azure)).publicIps[0]!.tags;
  expect(tags["portico.io-service-uid"]).toBe(uids.owner);
  // The sharers in the order the list has them, which is the order they joined.
  const listed = tags["portico.io-shared-with"]!.split(",").map((u) => SHARERS.find((s) => uids[s] === u)!);
  return { ip, uids, listed };
}

/** Waits until ARM holds nothing of the Services; fails naming what is left, and whose tags it carries. */
async function nothingLeft(azure: TestAzure, uids: Record<string, string>): Promise<void> {
  const who = (uid: string | undefined) => Object.keys(uids).find((n) => uids[n] === uid) ?? uid;
  await waitFor(
    "no public IP and no load balancer left",
    async () => {
      const inv = await inventory(azure);
      if (!inv.publicIps.length && !inv.loadBalancers.length) return true;
      const ips = inv.publicIps.map(
        (p) =>
          `public IP ${p.name} owned by ${who(p.tags["portico.io-service-uid"])}, shared with ` +
          `${(p.tags["portico.io-shared-with"] ?? "").split(",").filter(Boolean).map(who).join(",") || "nobody"}`,
      );
      throw new Error([...ips, ...inv.loadBalancers.map((l) => `load balancer ${l.name}`)].join("; "));
    },
    { timeoutMs: 15_000 },
  );
}

/** Deletes the Services at once, as `kubectl delete svc --all` or deleting their namespace does. */
async function deleteAtOnce(cluster: TestCluster, names: string[]): Promise<void> {
  await Promise.all(
    names.map((name) => cluster.core.deleteNamespacedService({ name, namespace: cluster.namespace })),
  );
  await waitFor(`${names.join(", ")} gone (finalizers released)`, async () => {
    const left = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items;
    return !left.some((s) => names.includes(s.metadata!.name!));
  });
}

test("an owner and the three Services sharing its public IP, deleted at once, leave nothing behind", async ({
  cluster,
  azure,
}) => {
  const { uids } = await ownerAndSharers(cluster, azure);
  await deleteAtOnce(cluster, ["owner", ...SHARERS]);
  // Their reconciles ran side by side, each from its own observation; the last one out deleted the public IP.
  await nothingLeft(azure, uids);
});

test("an owner deleted at once with two of its sharers hands its public IP to the one that stays", async ({
  cluster,
  azure,
}) => {
  const { ip, uids, listed } = await ownerAndSharers(cluster, azure);
  // The first two on the list go with the owner: the first sharer listed is no heir, being deleted.
  const [first, second, stays] = listed as [string, string, string];
  await deleteAtOnce(cluster, ["owner", first, second]);
  const pip = await waitFor(
    `the public IP owned by ${stays} alone`,
    async () => {
      const p = (await inventory(azure)).publicIps[0];
      if (p && p.tags["portico.io-service-uid"] === uids[stays] && !p.tags["portico.io-shared-with"])
        return p;
      throw new Error(`public IP tagged ${JSON.stringify(p?.tags)}`);
    },
    { timeoutMs: 15_000 },
  );
  expect(pip).toMatchObject({ address: ip, usedBy: feOf(uids[stays]!) });
  expect(pip.tags["portico.io-service"]).toBe(`${cluster.namespace}/${stays}`);
  const lb = (await inventory(azure)).loadBalancers[0]!;
  expect(lb.frontends.map((f) => f.name)).toEqual([feOf(uids[stays]!)]);
  expect(lb.rules.map((r) => r.frontend)).toEqual([feOf(uids[stays]!)]);
  expect((await cluster.getService(stays)).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ip);

  await deleteAtOnce(cluster, [stays]);
  await nothingLeft(azure, uids);
});
