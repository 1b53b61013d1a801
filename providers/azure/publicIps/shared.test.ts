import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { recordTag } from "../loadBalancerEdit.ts";
import type { Observed, PublicIPAddress } from "../model.ts";
import { frontendName, ownershipTags, TAG } from "../names.ts";
import { plan, planDeletion } from "../plan.ts";
import { assertRoomToShare, MAX_SHARERS, tagsAfter } from "./shared.ts";
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
      join: true,
    });
    // Once recorded and in place, nothing more.
    const shared = made([OTHER_UID]);
    expect(
      plan(apiDesired(shared), { loadBalancers: [written(apiDesired(shared), lb)], publicIps: [shared] })
        .operations,
    ).toEqual([]);
  });

  it("takes itself off the list when it goes, and the public IP stays", () => {
    const pip = made([OTHER_UID]);
    const lb = written(apiDesired(pip), written(webDesired(pip)));
    const observed: Observed = { loadBalancers: [lb], publicIps: [pip] };
    const ops = planDeletion(api, OTHER_FE, CLUSTER, observed);
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "sharePublicIp"]);
    expect(ops[1]).toMatchObject({ uid: OTHER_UID, join: false });
  });

  it("is handed the public IP when its owner goes, named as its load balancer record has it; never deleted meanwhile", () => {
    const pip = made([OTHER_UID]);
    const lb = written(apiDesired(pip), written(webDesired(pip)));
    expect(lb.tags?.[recordTag(OTHER_FE)]).toBe("shop/api");
    const ops = planDeletion(web, FE, CLUSTER, { loadBalancers: [lb], publicIps: [pip] });
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "handOverPublicIp"]);
    expect(ops[1]).toEqual({
      kind: "handOverPublicIp",
      name: "shared-ip",
      resourceGroup: "cluster-rg",
      from: UID,
      to: OTHER_UID,
      toService: "shop/api",
    });
  });

  it("goes with its owner when nobody shares it", () => {
    const pip = made();
    const ops = planDeletion(web, FE, CLUSTER, {
      loadBalancers: [written(webDesired(pip))],
      publicIps: [pip],
    });
    expect(ops.map((o) => o.kind)).toEqual(["removeFromLoadBalancer", "deletePublicIp"]);
  });
});

describe("tagsAfter", () => {
  const where = { name: "shared-ip", resourceGroup: "rg" };
  const tags = made([OTHER_UID]).tags!;

  it("adds and removes a sharer from the list as read, once", () => {
    const third = "0c1b2c3d-0000-4000-8000-00000000000c";
    const joined = tagsAfter({ kind: "sharePublicIp", ...where, uid: third, join: true }, tags);
    expect(joined[TAG.sharedWith]).toBe(`${OTHER_UID},${third}`);
    expect(tagsAfter({ kind: "sharePublicIp", ...where, uid: third, join: true }, joined)).toEqual(joined);
    const left = tagsAfter({ kind: "sharePublicIp", ...where, uid: OTHER_UID, join: false }, tags);
    expect(left[TAG.sharedWith]).toBeUndefined();
    expect(left[TAG.serviceUid]).toBe(UID);
  });

  it("hands over to the heir, who leaves the list; not when the public IP changed hands meanwhile", () => {
    const op = {
      kind: "handOverPublicIp" as const,
      ...where,
      from: UID,
      to: OTHER_UID,
      toService: "shop/api",
    };
    const after = tagsAfter(op, tags);
    expect(after).toMatchObject({
      [TAG.serviceUid]: OTHER_UID,
      [TAG.service]: "shop/api",
      [TAG.cluster]: CLUSTER,
    });
    expect(after[TAG.sharedWith]).toBeUndefined();
    expect(tagsAfter(op, after)).toBe(after);
  });

  it("refuses a sharer past what one tag can list", () => {
    const full = made(Array.from({ length: MAX_SHARERS }, (_, i) => `${i}`.padStart(36, "0")));
    expect(() => assertRoomToShare(full, OTHER_UID, "f")).toThrow(ConfigurationError);
    expect(`${full.tags![TAG.sharedWith]},${OTHER_UID}`.length).toBeGreaterThan(256);
  });
});
