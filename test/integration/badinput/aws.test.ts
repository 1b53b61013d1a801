// The bad-input corpus, AWS: every case is refused with a Warning Event and a False condition that name the
// field and the fix; nothing is made in the cloud for it; and a healthy Service beside it keeps working.
import type { V1Service } from "@kubernetes/client-node";
import { CreateLoadBalancerCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import type { Controller } from "../../../controller/app.ts";
import { startPortico } from "../../harness/controller.ts";
import { expectRefused, TestAws, TestCluster, waitFor } from "../../harness/index.ts";
import { awsWorld, lbService, waitForHostname } from "../aws/fixtures.ts";
import { AWS_COMBINATIONS } from "../../../providers/aws/annotations/combinations.ts";
import { combinationCases, type Case } from "./corpus.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

const CASES: Case[] = [
  {
    name: "an unknown target type",
    annotations: { [`${A}nlb-target-type`]: "pod" },
    reason: "InvalidAnnotation",
    mentions: [`${A}nlb-target-type`, "instance, ip"],
  },
  {
    name: "a scheme that does not exist",
    annotations: { [`${A}scheme`]: "public" },
    reason: "InvalidAnnotation",
    mentions: [`${A}scheme`, "internal, internet-facing"],
  },
  {
    name: "a legacy internal flag that is not a boolean",
    annotations: { [`${A}internal`]: "yes" },
    reason: "InvalidAnnotation",
    mentions: [`${A}internal`, '"true" or "false"'],
  },
  {
    name: "cross-zone that is not a boolean",
    annotations: { [`${A}cross-zone-load-balancing-enabled`]: "1" },
    reason: "InvalidAnnotation",
    mentions: ["cross-zone-load-balancing-enabled"],
  },
  {
    name: "a UDP health check",
    annotations: { [`${A}healthcheck-protocol`]: "udp" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-protocol", "TCP, HTTP, HTTPS"],
  },
  {
    name: "a health-check port out of range",
    annotations: { [`${A}healthcheck-port`]: "70000" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-port", "1 to 65535"],
  },
  {
    name: "a health-check path without a slash",
    annotations: { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-path`]: "healthz" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-path", '"/"'],
  },
  {
    name: "a health-check path on a TCP check",
    annotations: { [`${A}healthcheck-protocol`]: "TCP", [`${A}healthcheck-path`]: "/x" },
    reason: "ConflictingSettings",
    mentions: ["healthcheck-path", "HTTP"],
  },
  {
    name: "a health-check interval too short",
    annotations: { [`${A}healthcheck-interval`]: "1" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-interval", "5 to 300"],
  },
  {
    name: "a health-check timeout too short",
    annotations: { [`${A}healthcheck-timeout`]: "1" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-timeout"],
  },
  {
    name: "a timeout longer than the interval",
    annotations: { [`${A}healthcheck-interval`]: "10", [`${A}healthcheck-timeout`]: "20" },
    reason: "InvalidHealthCheck",
    mentions: ["healthcheck-timeout", "no longer than the interval"],
  },
  {
    name: "a health-check port naming no port of the Service",
    annotations: { [`${A}healthcheck-port`]: "metrics" },
    reason: "InvalidHealthCheck",
    mentions: ["healthcheck-port", 'no port named "metrics"', "name one of spec.ports"],
  },
  {
    name: "a health-check port that is neither a number nor a name",
    annotations: { [`${A}healthcheck-port`]: "Not_A_Port" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-port", "traffic-port, or the name of a Service port"],
  },
  {
    name: "a healthy threshold too high",
    annotations: { [`${A}healthcheck-healthy-threshold`]: "11" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-healthy-threshold", "2 to 10"],
  },
  {
    name: "an unhealthy threshold that is not a number",
    annotations: { [`${A}healthcheck-unhealthy-threshold`]: "x" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-unhealthy-threshold"],
  },
  {
    name: "success codes that are not codes",
    annotations: { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-success-codes`]: "ok" },
    reason: "InvalidAnnotation",
    mentions: ["healthcheck-success-codes", "200-399"],
  },
  {
    name: "target group attributes that are not key=value",
    annotations: { [`${A}target-group-attributes`]: "deregistration_delay" },
    reason: "InvalidAnnotation",
    mentions: ["target-group-attributes", "key=value"],
  },
  {
    name: "load balancer attributes that are not key=value",
    annotations: { [`${A}attributes`]: "=true" },
    reason: "InvalidAnnotation",
    mentions: [`${A}attributes`],
  },
  {
    name: "extra tags that are not key=value",
    annotations: { [`${A}additional-resource-tags`]: "team" },
    reason: "InvalidAnnotation",
    mentions: ["additional-resource-tags"],
  },
  {
    name: "an IP address type NLBs do not have",
    annotations: { [`${A}ip-address-type`]: "ipv6" },
    reason: "InvalidAnnotation",
    mentions: ["ip-address-type", "ipv4, dualstack"],
  },
  {
    name: "a load balancer name with a leading hyphen",
    annotations: { [`${A}name`]: "-web" },
    reason: "InvalidAnnotation",
    mentions: [`${A}name`, "1-32 letters"],
  },
  {
    name: "a load balancer name longer than 32 characters",
    annotations: { [`${A}name`]: "a-name-that-is-much-too-long-for-elbv2" },
    reason: "InvalidAnnotation",
    mentions: [`${A}name`],
  },
  {
    name: "a certificate that is not an ARN",
    annotations: { [`${A}ssl-cert`]: "my-cert" },
    reason: "InvalidAnnotation",
    mentions: [`${A}ssl-cert`, "ARN"],
  },
  {
    name: "an HTTP backend protocol on an NLB",
    annotations: { [`${A}backend-protocol`]: "http" },
    reason: "InvalidAnnotation",
    mentions: ["backend-protocol", '"tcp" or "ssl"'],
  },
  {
    name: "proxy protocol for some ports only",
    annotations: { [`${A}proxy-protocol`]: "80" },
    reason: "InvalidAnnotation",
    mentions: ["proxy-protocol", '"*"'],
  },
  {
    name: "subnets that do not exist",
    annotations: { [`${A}subnets`]: "subnet-00000000, nowhere" },
    reason: "SubnetNotFound",
    mentions: [`${A}subnets`, "subnet-00000000", "nowhere"],
  },
  {
    name: "a target-node selector that does not parse",
    annotations: { [`${A}target-node-labels`]: "zone in (a" },
    reason: "InvalidTargetNodeLabels",
    mentions: ["target-node-labels", "label selector"],
  },
  {
    name: "instance targets without node ports",
    annotations: { [`${A}nlb-target-type`]: "instance" },
    spec: { allocateLoadBalancerNodePorts: false },
    reason: "NodePortsDisabled",
    mentions: ["spec.allocateLoadBalancerNodePorts", "nlb-target-type: ip"],
  },
  {
    name: "more ports than an NLB has listeners",
    spec: {
      ports: Array.from({ length: 51 }, (_, i) => ({ name: `p${i}`, port: 2000 + i, protocol: "TCP" })),
    },
    reason: "TooManyListeners",
    mentions: ["spec.ports", "50"],
  },
  {
    name: "SCTP, which an NLB cannot serve",
    spec: { ports: [{ name: "s", port: 9000, protocol: "SCTP" }] },
    reason: "UnsupportedProtocol",
    mentions: ["spec.ports[0].protocol", "TCP or UDP"],
  },
  {
    name: "a TCP and a UDP port that share a number but not a nodePort",
    spec: {
      ports: [
        { name: "t", port: 53, protocol: "TCP", nodePort: 31053 },
        { name: "u", port: 53, protocol: "UDP", nodePort: 31054 },
      ],
    },
    reason: "NodePortMismatch",
    mentions: ["spec.ports", "same nodePort"],
  },
  {
    name: "a certificate ARN that does not exist",
    annotations: { [`${A}ssl-cert`]: "arn:aws:acm:us-east-1:123456789012:certificate/none" },
    reason: "CertificateNotUsable",
    mentions: [`${A}ssl-cert`, "does not exist", "issued ACM certificate"],
  },
  {
    name: "a load balancer name someone else's NLB has",
    annotations: { [`${A}name`]: "not-portico" },
    reason: "LoadBalancerNameTaken",
    mentions: [`${A}name`, "choose another name"],
  },
  {
    name: "a TLS port the Service does not have",
    annotations: {
      [`${A}ssl-cert`]: "arn:aws:acm:us-east-1:123456789012:certificate/abc",
      [`${A}ssl-ports`]: "8443",
    },
    reason: "InvalidAnnotation",
    mentions: [`${A}ssl-ports`, 'no port "8443"'],
  },
  {
    name: "extra tags using Portico's own tag keys",
    annotations: { [`${A}additional-resource-tags`]: "portico.io/service-uid=mine" },
    reason: "InvalidAnnotation",
    mentions: ["additional-resource-tags", "reserved prefix portico.io/"],
  },
  {
    name: "a load balancer attribute value ELBv2 would refuse",
    annotations: { [`${A}attributes`]: "deletion_protection.enabled=yes" },
    reason: "InvalidAnnotation",
    mentions: [`${A}attributes`, "would be refused by ELBv2"],
  },
  {
    name: "a target group attribute NLBs do not have",
    annotations: { [`${A}target-group-attributes`]: "load_balancing.algorithm.type=round_robin" },
    reason: "InvalidAnnotation",
    mentions: ["target-group-attributes", "not an attribute ELBv2 has here"],
  },
  {
    name: "a source range with host bits set",
    spec: { loadBalancerSourceRanges: ["10.0.0.1/8"] },
    reason: "InvalidSourceRange",
    mentions: ["spec.loadBalancerSourceRanges", "10.0.0.0/8", "10.0.0.1/32"],
  },
  {
    name: "client IP preservation turned off on a UDP target group",
    annotations: { [`${A}target-group-attributes`]: "preserve_client_ip.enabled=false" },
    spec: { ports: [{ name: "dns", port: 53, protocol: "UDP" }] },
    reason: "InvalidAnnotation",
    mentions: [`${A}target-group-attributes`, "preserve_client_ip.enabled=false", "port 53 is UDP"],
  },
  {
    name: "client IP preservation turned off, for its port, on a TCP_UDP target group",
    annotations: { [`${A}target-group-attributes.53`]: "preserve_client_ip.enabled=false" },
    spec: {
      ports: [
        { name: "dns-tcp", port: 53, protocol: "TCP" },
        { name: "dns-udp", port: 53, protocol: "UDP" },
      ],
    },
    reason: "InvalidAnnotation",
    mentions: [`${A}target-group-attributes.53`, "TCP_UDP target groups"],
  },
  {
    name: "unhealthy-target connection settings on a UDP target group",
    annotations: {
      [`${A}target-group-attributes`]: "target_health_state.unhealthy.connection_termination.enabled=false",
    },
    spec: { ports: [{ name: "dns", port: 53, protocol: "UDP" }] },
    reason: "InvalidAnnotation",
    mentions: [`${A}target-group-attributes`, "no unhealthy-target connection settings"],
  },
  {
    name: "an unhealthy draining interval with connection termination on",
    annotations: {
      [`${A}target-group-attributes`]: "target_health_state.unhealthy.draining_interval_seconds=60",
    },
    reason: "InvalidAnnotation",
    mentions: [`${A}target-group-attributes`, "connection_termination.enabled=false"],
  },
  {
    name: "stickiness on a TLS target group",
    annotations: {
      [`${A}ssl-cert`]: "arn:aws:acm:us-east-1:123456789012:certificate/abc",
      [`${A}backend-protocol`]: "ssl",
      [`${A}target-group-attributes`]: "stickiness.enabled=true,stickiness.type=source_ip",
    },
    reason: "InvalidAnnotation",
    mentions: [`${A}target-group-attributes`, "no stickiness on TLS target groups", "backend-protocol"],
  },
  // Every pair of settings that cannot work together, from the table the provider checks them with.
  ...combinationCases(AWS_COMBINATIONS),
];

describe("bad input, AWS", () => {
  let cluster: TestCluster;
  let aws: TestAws;
  let controller: Controller;

  beforeAll(async () => {
    cluster = await TestCluster.create(inject("kubeconfig"), "bad-input-aws");
    aws = await TestAws.fresh();
    const world = await awsWorld(cluster, aws, 1);
    await aws.elbv2.send(
      new CreateLoadBalancerCommand({
        Name: "not-portico",
        Type: "network",
        Scheme: "internal",
        Subnets: world.network.subnets.map((s) => s.subnetId),
      }),
    );
    controller = await startPortico(cluster, { workers: 8 });
    await cluster.createService("good", lbService());
    await waitForHostname(cluster, "good");
  });
  afterAll(async () => {
    await cluster.cleanup();
  });

  test.for(CASES.map((c, i) => [c.name, c, i] as const))("%s", async ([, c, i]) => {
    const name = `bad-${i}`;
    const svc = await createMovingNodePorts(cluster, name, lbService(c.spec?.ports, c.spec), c.annotations);
    await expectRefused(cluster, name, c);
    // Nothing in the cloud for it: no load balancer, target group or security group carries its UID.
    const tagged = await new ResourceGroupsTaggingAPIClient({}).send(
      new GetResourcesCommand({
        TagFilters: [{ Key: "portico.io/service-uid", Values: [svc.metadata!.uid!] }],
      }),
    );
    expect(tagged.ResourceTagMappingList ?? []).toEqual([]);
    expect((await cluster.getService(name)).status?.loadBalancer?.ingress ?? []).toEqual([]);
    // The healthy Service beside it is untouched.
    expect((await cluster.getService("good")).status?.conditions?.[0]?.status).toBe("True");
    expect(controller.isLeader()).toBe(true);
  });

  test("a Service changed again and again while its reconcile is in flight converges to its last spec", async () => {
    await cluster.createService("moving", lbService());
    for (const port of [81, 82, 83, 84]) {
      await cluster.core.patchNamespacedService(
        {
          name: "moving",
          namespace: cluster.namespace,
          body: { spec: { ports: [{ name: "http", port, targetPort: 8080, protocol: "TCP" }] } },
        },
        (await import("../../harness/index.ts")).mergePatch,
      );
    }
    await waitForHostname(cluster, "moving");
    const svc = await cluster.getService("moving");
    const tagged = await new ResourceGroupsTaggingAPIClient({}).send(
      new GetResourcesCommand({
        TagFilters: [{ Key: "portico.io/service-uid", Values: [svc.metadata!.uid!] }],
      }),
    );
    const listeners = (tagged.ResourceTagMappingList ?? [])
      .filter((r) => r.ResourceARN!.includes(":targetgroup/"))
      .map((r) => r.Tags?.find((t) => t.Key === "portico.io/listener")?.Value);
    await waitFor("only the last port's target group", async () => {
      const now = await new ResourceGroupsTaggingAPIClient({}).send(
        new GetResourcesCommand({
          TagFilters: [{ Key: "portico.io/service-uid", Values: [svc.metadata!.uid!] }],
        }),
      );
      const l = (now.ResourceTagMappingList ?? [])
        .filter((r) => r.ResourceARN!.includes(":targetgroup/"))
        .map((r) => r.Tags?.find((t) => t.Key === "portico.io/listener")?.Value);
      return l.length === 1 && l[0] === "TCP:84";
    });
    expect(listeners.length).toBeGreaterThanOrEqual(1);
  });
});

/**
 * A case naming its nodePorts may find one taken by another test's Service on the shared apiserver: its ports
 * move together (keeping their difference) until they are free.
 */
async function createMovingNodePorts(
  cluster: TestCluster,
  name: string,
  spec: V1Service["spec"],
  annotations: Record<string, string> = {},
): Promise<V1Service> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await cluster.createService(name, spec, annotations);
    } catch (err) {
      if (attempt >= 10 || !String(err).includes("provided port is already allocated")) throw err;
      const shift = 1 + Math.floor(Math.random() * 1000);
      spec = {
        ...spec,
        ports: spec?.ports?.map((p) =>
          p.nodePort ? { ...p, nodePort: 30000 + ((p.nodePort - 30000 + shift) % 2768) } : p,
        ),
      };
    }
  }
}
