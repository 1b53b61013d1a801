import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { recordTag } from "../loadBalancer/loadBalancerEdit.ts";
import type { Observed, PublicIPAddress } from "../model.ts";
import { frontendName, ownershipTags, TAG } from "../names.ts";
import { plan, planDeletion } from "../plan/plan.ts";
import {
  assertRoomToShare,
  leaveOutcome,
  MAX_SHARERS,
  observedHolders,
  tagsAfterJoining,
  tagsAfterLeaving,
  type Holders,
} from "./shared.ts";
import {
  CLUSTER,
  config,
  desired,
  FE,
  intent,
  OTHER_UID,
  publicIp,
  UID,
  written,
} from "../../../test/unit/support/azure.ts";

const PIP_NAME = "service.beta.kubernetes.io/azure-pip-name";
const web = { namespace: "shop", name: "web", uid: UID };
const api = { namespace: "shop", name: "api", uid: OTHER_UID };
const OTHER_FE = frontendName(OTHER_UID);
const noNsg = config({ securityGroupName: undefined });

/** Portico's public IP made for `web` (it named `shared-ip` first), shared with `sharers`. */
const made = (sharers: string[] = []): PublicIPAddress =>
  publicIp("shared-ip", {
    tags: {
      ...ownershipTags(CLUSTER, web, "publicip"),
      ...(sharers.length ? { [TAG.sharedWith]: sharers.join(",") } : {}),
    },
  });
const apiDesired = (pip: PublicIPAddress) =>
  desired(
    intent(
      {
        annotations: { [PIP_NAME]: "shared-ip" },
        ports: [{ name: "p", protocol: "TCP", port: 443, nodePort: 30443 }],
      },
      OTHER_UID,
      "api",
    ),
    {
      publicIps: [pip],
      config: noNsg,
    },
  );
const webDesired = (pip: PublicIPAddress) =>
  desired(intent({ annotations: { [PIP_NAME]: "shared-ip" } }), { publicIps: [pip], config: noNsg });

describe("a Service sharing Portico's public IP of another Service", () => {
  it("records itself on the public IP before its rules use it, and is recorded on the load balancer", () => {
    const pip = made();
    const lb = written(webDesired(pip));
    const d = apiDesired(pip);
    expect(d.publicIp).toMatchObject({ kind: "shared" });
    expect(d.recordOnLoadBalancer).toBe(true);
    const ops = plan(d, { loadBalancers: [lb], publicIps: [pip] }).operations;
    expect(ops.map((o) => o.kind)).toEqual(["sharePublicIp", "updateLoadBalancer"]);
    expect(ops[0]).toEqual({
      kind: "sharePublicIp",
      name: "shared-ip",
      resourceGroup: "cluster-rg",
      uid: OTHER_UID,
    });
    // Once recorded and in place, nothing more.
    const shared = made([OTHER_UID]);
    expect(
      plan(apiDesired(shared), { loadBalancers: [written(apiDesired(shared), lb)], publicIps: [shared] })
        .operations,
    ).toEqual([]);
  });

  it("joins a public IP nobody owns (its owner left while those on its list are being deleted)", () => {
    const { [TAG.serviceUid]: _uid, [TAG.service]: _name, ...tags } = made([UID]).tags!;
    const unowned = publicIp("shared-ip", { tags });
    const d = apiDesired(unowned);
    expect(d.publicIp).toMatchObject({ kind: "shared" });
    const ops = plan(d, { loadBalancers: [written(webDesired(made()))], publicIps: [unowned] }).operations;
    expect(ops[0]).toMatchObject({ kind: "sharePublicIp", uid: OTHER_UID });
  });

  it("takes itself off the list when it goes, and the public IP stays", () => {
    const pip = made([OTHER_UID]);
    const lb = written(apiDesired(pip), written(webDesired(pip)));
    const observed: Observed = { loadBalancers: [lb], publicIps: [pip] };
    const ops = planDeletion(api, OTHER_FE, CLUSTER, observed);
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "leavePublicIp"]);
    expect(ops[1]).toMatchObject({ uid: OTHER_UID, expected: { kind: "offList" } });
  });

  it("is handed the public IP when its owner goes, named as its load balancer record has it; never deleted meanwhile", () => {
    const pip = made([OTHER_UID]);
    const lb = written(apiDesired(pip), written(webDesired(pip)));
    expect(lb.tags?.[recordTag(OTHER_FE)]).toBe("shop/api");
    const ops = planDeletion(web, FE, CLUSTER, { loadBalancers: [lb], publicIps: [pip] });
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "leavePublicIp"]);
    expect(ops[1]).toEqual({
      kind: "leavePublicIp",
      name: "shared-ip",
      resourceGroup: "cluster-rg",
      uid: UID,
      expected: { kind: "handOver", to: OTHER_UID, toService: "shop/api" },
    });
  });

  it("goes with its owner when nobody shares it", () => {
    const pip = made();
    const ops = planDeletion(web, FE, CLUSTER, {
      loadBalancers: [written(webDesired(pip))],
      publicIps: [pip],
    });
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "leavePublicIp"]);
    expect(ops[1]).toMatchObject({ expected: { kind: "delete" } });
  });
});

describe("joining and leaving, on the tags as read", () => {
  const tags = made([OTHER_UID]).tags!;
  const third = "0c1b2c3d-0000-4000-8000-00000000000c";
  const holders = (states: Record<string, "live" | "deleting" | "gone"> = {}): Holders => ({
    state: (uid) => states[uid] ?? "live",
    name: (uid) => (uid === OTHER_UID ? "shop/api" : uid === third ? "shop/third" : undefined),
  });

  it("adds a sharer to the list once, and takes a sharer off it, the owner keeping it", () => {
    const joined = tagsAfterJoining(tags, third);
    expect(joined[TAG.sharedWith]).toBe(`${OTHER_UID},${third}`);
    expect(tagsAfterJoining(joined, third)).toBe(joined);
    expect(leaveOutcome(tags, OTHER_UID, holders())).toEqual({ kind: "offList" });
    const left = tagsAfterLeaving(tags, OTHER_UID, { kind: "offList" }, holders());
    expect(left[TAG.sharedWith]).toBeUndefined();
    expect(left[TAG.serviceUid]).toBe(UID);
  });

  it("hands over to a sharer that stays, who leaves the list; nothing for a Service no longer on the tags", () => {
    const outcome = leaveOutcome(tags, UID, holders());
    expect(outcome).toEqual({ kind: "handOver", to: OTHER_UID, toService: "shop/api" });
    const after = tagsAfterLeaving(tags, UID, outcome as { kind: "handOver"; to: string }, holders());
    expect(after).toMatchObject({
      [TAG.serviceUid]: OTHER_UID,
      [TAG.service]: "shop/api",
      [TAG.cluster]: CLUSTER,
    });
    expect(after[TAG.sharedWith]).toBeUndefined();
    expect(leaveOutcome(after, UID, holders())).toBeUndefined();
  });

  it("never hands over to a Service being deleted or gone: the first live sharer, else nobody owns it", () => {
    const three = made([OTHER_UID, third]).tags!;
    expect(leaveOutcome(three, UID, holders({ [OTHER_UID]: "deleting" }))).toEqual({
      kind: "handOver",
      to: third,
      toService: "shop/third",
    });
    expect(leaveOutcome(three, UID, holders({ [OTHER_UID]: "gone" }))).toMatchObject({ to: third });
    const unowned = leaveOutcome(three, UID, holders({ [OTHER_UID]: "deleting", [third]: "deleting" }));
    expect(unowned).toEqual({ kind: "unowned" });
    const after = tagsAfterLeaving(three, UID, { kind: "unowned" }, holders());
    expect(after[TAG.serviceUid]).toBeUndefined();
    expect(after[TAG.service]).toBeUndefined();
    expect(after[TAG.sharedWith]).toBe(`${OTHER_UID},${third}`);
    // The last of them out deletes it; one that is gone without leaving counts as left.
    const one = tagsAfterLeaving(after, OTHER_UID, { kind: "unowned" }, holders());
    expect(leaveOutcome(one, third, holders())).toEqual({ kind: "delete" });
    expect(leaveOutcome(after, third, holders({ [OTHER_UID]: "gone" }))).toEqual({ kind: "delete" });
  });

  it("a sharer leaving a public IP whose owner is gone hands it to a live sharer, or deletes it as the last", () => {
    const three = made([OTHER_UID, third]).tags!;
    expect(leaveOutcome(three, OTHER_UID, holders({ [UID]: "gone" }))).toMatchObject({
      kind: "handOver",
      to: third,
    });
    expect(leaveOutcome(made([OTHER_UID]).tags!, OTHER_UID, holders({ [UID]: "gone" }))).toEqual({
      kind: "delete",
    });
  });

  it("names the heir from the load balancers' record tags when nothing else knows it", () => {
    const pip = made([OTHER_UID]);
    const lb = written(apiDesired(pip), written(webDesired(pip)));
    expect(observedHolders({ loadBalancers: [lb], publicIps: [pip] }).name(OTHER_UID)).toBe("shop/api");
  });

  it("refuses a sharer past what one tag can list", () => {
    const full = made(Array.from({ length: MAX_SHARERS }, (_, i) => `${i}`.padStart(36, "0")));
    expect(() => assertRoomToShare(full, OTHER_UID, "f")).toThrow(ConfigurationError);
    expect(`${full.tags![TAG.sharedWith]},${OTHER_UID}`.length).toBeGreaterThan(256);
  });
});
