import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAzureSettings } from "./settings.ts";
import type { Observed, PublicIPAddress } from "../model.ts";
import { ownershipTags } from "../names.ts";
import { plan } from "../plan/plan.ts";
import { choosePublicIp } from "../publicIps/choice.ts";
import {
  CLUSTER,
  config,
  desired,
  intent,
  publicIp,
  UID,
  written,
} from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const DNS = `${A}azure-dns-label-name`;
const IP_TAGS = `${A}azure-pip-ip-tags`;
const PREFIX = `${A}azure-pip-prefix-id`;
const PREFIX_ID = `/subscriptions/${"0".repeat(8)}-0000-0000-0000-000000000001/resourceGroups/ips/providers/Microsoft.Network/publicIPPrefixes/block`;
const svc = { namespace: "shop", name: "web", uid: UID };
const ctx = { cluster: CLUSTER, config: config() };
const choose = (annotations: Record<string, string>, pips: PublicIPAddress[]) =>
  choosePublicIp(parseAzureSettings(annotations), svc, ctx, pips);
const ours = (extra: Partial<PublicIPAddress> = {}) =>
  publicIp(`${CLUSTER}-a${UID.replace(/-/g, "")}`, {
    tags: ownershipTags(CLUSTER, svc, "publicip"),
    ...extra,
  });

function refusal(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** What ARM holds once Service `annotations` is in place on `pip`. */
function settled(annotations: Record<string, string>, pip: PublicIPAddress): Observed {
  const d = desired(intent({ annotations }), {
    publicIps: [pip],
    config: config({ securityGroupName: undefined }),
  });
  return { loadBalancers: [written(d)], publicIps: [pip] };
}
const planFor = (annotations: Record<string, string>, pip: PublicIPAddress) =>
  plan(
    desired(intent({ annotations }), { publicIps: [pip], config: config({ securityGroupName: undefined }) }),
    settled(annotations, pip),
  ).operations;

describe("public IP annotations", () => {
  it("reads the DNS label and IP tags", () => {
    expect(parseAzureSettings({ [DNS]: "shop-web", [IP_TAGS]: "RoutingPreference=Internet" })).toMatchObject({
      dnsLabel: "shop-web",
      ipTags: [{ ipTagType: "RoutingPreference", tag: "Internet" }],
    });
  });

  it.each([
    [{ [DNS]: "Shop" }, DNS, "lower-case"],
    [{ [DNS]: "a" }, DNS, "3 to 63"],
    [{ [DNS]: "web-" }, DNS, "not ending"],
    [{ [IP_TAGS]: "RoutingPreference" }, IP_TAGS, "type=tag"],
    [{ [IP_TAGS]: "RoutingPreference=Internet,routingpreference=Internet" }, IP_TAGS, "once"],
    [{ [DNS]: "shop-web", [`${A}azure-load-balancer-internal`]: "true" }, DNS, "internal"],
    [{ [PREFIX]: "block" }, PREFIX, "resource ID"],
    [{ [PREFIX]: PREFIX_ID, [`${A}azure-load-balancer-internal`]: "true" }, PREFIX, "internal"],
  ])("refuses %j, naming the annotation", (annotations, key, text) => {
    const err = refusal(() => parseAzureSettings(annotations));
    expect(err.field).toBe(`metadata.annotations[${key}]`);
    expect(`${err.message} ${err.fix}`).toContain(text);
  });
});

describe("Portico's public IP", () => {
  it("is created with the DNS label and IP tags", () => {
    const d = desired(
      intent({ annotations: { [DNS]: "shop-web", [IP_TAGS]: "RoutingPreference=Internet" } }),
    );
    const ops = plan(d, { loadBalancers: [], publicIps: [] }).operations;
    expect(ops[0]).toMatchObject({
      kind: "createPublicIp",
      dnsLabel: "shop-web",
      ipTags: [{ ipTagType: "RoutingPreference", tag: "Internet" }],
    });
  });

  it("gets its label set, changed and removed as the annotation is; nothing when it matches", () => {
    const name = ours().name!;
    expect(planFor({ [DNS]: "shop-web" }, ours())).toEqual([
      { kind: "setPublicIpDnsLabel", name, resourceGroup: "cluster-rg", dnsLabel: "shop-web" },
    ]);
    const labelled = ours({ dnsSettings: { domainNameLabel: "shop-web" } });
    expect(planFor({ [DNS]: "shop-www" }, labelled)).toEqual([
      { kind: "setPublicIpDnsLabel", name, resourceGroup: "cluster-rg", dnsLabel: "shop-www" },
    ]);
    expect(planFor({}, labelled)).toEqual([
      { kind: "setPublicIpDnsLabel", name, resourceGroup: "cluster-rg" },
    ]);
    expect(planFor({ [DNS]: "shop-web" }, labelled)).toEqual([]);
  });

  it("refuses a change of IP tags, which ARM fixes at creation, and says how to get one on purpose", () => {
    const tagged = ours({ ipTags: [{ ipTagType: "RoutingPreference", tag: "Internet" }] });
    expect(choose({ [IP_TAGS]: "RoutingPreference=Internet" }, [tagged])).toMatchObject({ kind: "managed" });
    const err = refusal(() => choose({}, [tagged]));
    expect(err.reason).toBe("PublicIPTagsImmutable");
    expect(err.message).toContain("RoutingPreference=Internet");
    expect(err.fix).toContain("re-create the Service");
  });
});

describe("a public IP prefix", () => {
  it("is where Portico's public IP is made from", () => {
    const d = desired(intent({ annotations: { [PREFIX]: PREFIX_ID } }));
    expect(plan(d, { loadBalancers: [], publicIps: [] }).operations[0]).toMatchObject({
      kind: "createPublicIp",
      prefixId: PREFIX_ID,
    });
  });

  it("cannot be added to, changed on or taken from an existing public IP: refused with how to do it on purpose", () => {
    expect(
      choose({ [PREFIX]: PREFIX_ID }, [ours({ publicIPPrefix: { id: PREFIX_ID.toLowerCase() } })]),
    ).toMatchObject({
      kind: "managed",
      prefixId: PREFIX_ID,
    });
    for (const [annotations, pip] of [
      [{ [PREFIX]: PREFIX_ID }, ours()],
      [{}, ours({ publicIPPrefix: { id: PREFIX_ID } })],
      [{ [PREFIX]: PREFIX_ID.replace("block", "other") }, ours({ publicIPPrefix: { id: PREFIX_ID } })],
    ] as const) {
      const err = refusal(() => choose(annotations, [pip]));
      expect(err.reason).toBe("PublicIPPrefixImmutable");
      expect(err.fix).toContain("re-create the Service");
    }
  });

  it("is not applied to a user's public IP that does not come from it", () => {
    const err = refusal(() =>
      choose({ [`${A}azure-pip-name`]: "users-ip", [PREFIX]: PREFIX_ID }, [publicIp("users-ip")]),
    );
    expect(err.field).toBe(`metadata.annotations[${PREFIX}]`);
    expect(
      choose({ [`${A}azure-pip-name`]: "users-ip", [PREFIX]: PREFIX_ID }, [
        publicIp("users-ip", { publicIPPrefix: { id: PREFIX_ID } }),
      ]),
    ).toMatchObject({ kind: "user" });
  });
});

describe("a user's public IP", () => {
  const users = (extra: Partial<PublicIPAddress> = {}) => publicIp("users-ip", extra);

  it("is used when it already has the label and IP tags asked for", () => {
    const pip = users({
      dnsSettings: { domainNameLabel: "shop-web" },
      ipTags: [{ ipTagType: "RoutingPreference", tag: "Internet" }],
    });
    const annotations = {
      [`${A}azure-pip-name`]: "users-ip",
      [DNS]: "shop-web",
      [IP_TAGS]: "RoutingPreference=Internet",
    };
    expect(choose(annotations, [pip])).toMatchObject({ kind: "user", name: "users-ip" });
    expect(planFor(annotations, pip)).toEqual([]);
  });

  it("is never relabelled: a label it lacks is refused, naming how the owner sets it", () => {
    const err = refusal(() => choose({ [`${A}azure-pip-name`]: "users-ip", [DNS]: "shop-web" }, [users()]));
    expect(err.field).toBe(`metadata.annotations[${DNS}]`);
    expect(err.fix).toContain("--dns-name shop-web");
    const tags = refusal(() =>
      choose({ [`${A}azure-pip-name`]: "users-ip", [IP_TAGS]: "RoutingPreference=Internet" }, [users()]),
    );
    expect(tags.field).toBe(`metadata.annotations[${IP_TAGS}]`);
  });
});
