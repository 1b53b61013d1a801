import { describe, expect, it } from "vitest";
import { recordTag } from "../loadBalancer/loadBalancerEdit.ts";
import type { LoadBalancer } from "../model.ts";
import { clusterDigest, frontendName, ownershipTags, TAG } from "../names.ts";
import { ownedServiceRefs } from "./owned.ts";
import { CLUSTER, OTHER_UID, publicIp, UID } from "../../../test/unit/support/azure.ts";

const web = { namespace: "shop", name: "web", uid: UID };
const dns = { namespace: "infra", name: "dns", uid: OTHER_UID };
const third = { namespace: "x", name: "y", uid: "0c1b2c3d-0000-4000-8000-00000000000c" };

describe("ownedServiceRefs", () => {
  it("finds Services on their public IPs, in a shared load balancer's record tags, on per-Service load balancers and in rule descriptions", () => {
    const shared: LoadBalancer = {
      name: CLUSTER,
      tags: { [TAG.cluster]: CLUSTER, [recordTag(frontendName(dns.uid))]: "infra/dns" },
    };
    const own: LoadBalancer = { name: "own", tags: ownershipTags(CLUSTER, third, "loadbalancer") };
    const refs = ownedServiceRefs(
      {
        loadBalancers: [shared, own],
        publicIps: [publicIp("ip", { tags: ownershipTags(CLUSTER, web, "publicip") })],
        securityGroup: { securityRules: [] },
      },
      CLUSTER,
    );
    expect(refs.sort((a, b) => a.name.localeCompare(b.name))).toEqual([dns, web, third]);
  });

  it("reads a Service from its security rule's description when nothing else records it", () => {
    const refs = ownedServiceRefs(
      {
        loadBalancers: [],
        publicIps: [],
        securityGroup: {
          securityRules: [
            {
              name: `${frontendName(web.uid)}-TCP-80`,
              description: `portico:${clusterDigest(CLUSTER)}:shop/web`,
            },
            { name: `${frontendName(dns.uid)}-TCP-53`, description: "portico:ffffffffff:infra/dns" },
            { name: "users-rule", description: `portico:${clusterDigest(CLUSTER)}:a/b` },
          ],
        },
      },
      CLUSTER,
    );
    expect(refs).toEqual([web]);
  });

  it("ignores another cluster's resources and the user's", () => {
    const refs = ownedServiceRefs(
      {
        loadBalancers: [
          {
            name: "elsewhere",
            tags: { [TAG.cluster]: "other", [recordTag(frontendName(dns.uid))]: "infra/dns" },
          },
        ],
        publicIps: [
          publicIp("theirs", { tags: ownershipTags("other", web, "publicip") }),
          publicIp("users", { tags: { [TAG.service]: "a/b" } }),
        ],
      },
      CLUSTER,
    );
    expect(refs).toEqual([]);
  });
});
