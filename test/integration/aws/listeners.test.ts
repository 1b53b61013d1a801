// Several certificates per TLS listener, ALPN, listener attributes, per-port target-group attributes, a named
// health-check port and access logs, against the emulator: the state AWS holds, and no write on a resync.
import {
  DescribeListenerAttributesCommand,
  DescribeListenerCertificatesCommand,
  DescribeListenersCommand,
  DescribeLoadBalancerAttributesCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { importCertificate } from "../../harness/acmCertificates.ts";
import type { TestAws } from "../../harness/index.ts";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, directProvider, intentFor, writesDuring } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const TWO_PORTS = [
  { name: "http", protocol: "TCP" as const, port: 80, nodePort: 30080 },
  { name: "https", protocol: "TCP" as const, port: 443, nodePort: 30443 },
];

async function importCertificates(count: number): Promise<string[]> {
  const arns = [];
  for (let i = 0; i < count; i++) {
    const imported = await importCertificate(`site${i}.example.com`);
    await imported.remove();
    arns.push(imported.arn);
  }
  return arns;
}

async function tlsListener(aws: TestAws) {
  const lb = (await inventory(aws)).loadBalancers[0]!;
  const listener = (
    await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.arn }))
  ).Listeners!.find((l) => l.Port === 443)!;
  const certs = (
    await aws.elbv2.send(new DescribeListenerCertificatesCommand({ ListenerArn: listener.ListenerArn }))
  ).Certificates!;
  return {
    listener,
    default: certs.filter((c) => c.IsDefault).map((c) => c.CertificateArn),
    extra: certs
      .filter((c) => !c.IsDefault)
      .map((c) => c.CertificateArn!)
      .sort(),
  };
}

test("ssl-cert with several certificates: the first is the default, the others are added and removed as the list changes", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const [c1, c2, c3, c4] = await importCertificates(4);
  const provider = directProvider(cluster);
  const tls = (certs: string[]) =>
    intentFor(world, "web", {
      service: { namespace: "shop", name: "web", uid: "uid-tls" },
      ports: TWO_PORTS,
      annotations: {
        [`${A}ssl-cert`]: certs.join(","),
        [`${A}ssl-ports`]: "https",
        [`${A}alpn-policy`]: "HTTP2Preferred",
      },
    });
  const created = await writesDuring(provider, () => provider.ensure(tls([c1!, c2!])));
  expect(created["elbv2:AddListenerCertificates"]).toBe(1);
  let seen = await tlsListener(aws);
  expect(seen.default).toEqual([c1]);
  expect(seen.extra).toEqual([c2]);
  expect(seen.listener.AlpnPolicy).toEqual(["HTTP2Preferred"]);
  expect(await writesDuring(provider, () => provider.ensure(tls([c1!, c2!])))).toEqual({});

  // Three, the default kept: one added, none removed; then c2 swapped for c4: one call each way.
  expect(await writesDuring(provider, () => provider.ensure(tls([c1!, c2!, c3!])))).toEqual({
    "elbv2:AddListenerCertificates": 1,
  });
  seen = await tlsListener(aws);
  expect(seen.default).toEqual([c1]);
  expect(seen.extra).toEqual([c2!, c3!].sort());
  expect(await writesDuring(provider, () => provider.ensure(tls([c1!, c4!, c3!])))).toEqual({
    "elbv2:AddListenerCertificates": 1,
    "elbv2:RemoveListenerCertificates": 1,
  });
  seen = await tlsListener(aws);
  expect(seen.default).toEqual([c1]);
  expect(seen.extra).toEqual([c3!, c4!].sort());
  expect(await writesDuring(provider, () => provider.ensure(tls([c1!, c4!, c3!])))).toEqual({});
  // A new default certificate (ModifyListener) is planned in plan's unit tests: the emulator refuses
  // ModifyListener on TLS listeners (UnsupportedProtocol).
  // Five passes against the emulator and four certificates imported: 61 s at load 18, past the 60 s default.
}, 150_000);

test("listener attributes, per-port target-group attributes and proxy protocol, a named health-check port, access logs", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", {
    ports: TWO_PORTS,
    annotations: {
      [`${A}listener-attributes.TCP-80`]: "tcp.idle_timeout.seconds=400",
      [`${A}target-group-attributes`]: "deregistration_delay.timeout_seconds=60",
      [`${A}target-group-attributes.443`]: "deregistration_delay.timeout_seconds=10",
      [`${A}proxy-protocol-per-target-group`]: "443",
      [`${A}healthcheck-port`]: "https",
      [`${A}access-log-enabled`]: "true",
      [`${A}access-log-s3-bucket-name`]: "logs",
      [`${A}access-log-s3-bucket-prefix`]: "nlb",
    },
  });
  await provider.ensure(web);
  const inv = await inventory(aws);
  const lb = inv.loadBalancers[0]!;
  const listener80 = (
    await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.arn }))
  ).Listeners!.find((l) => l.Port === 80)!;
  const listenerAttrs = (
    await aws.elbv2.send(new DescribeListenerAttributesCommand({ ListenerArn: listener80.ListenerArn }))
  ).Attributes!;
  expect(listenerAttrs).toContainEqual({ Key: "tcp.idle_timeout.seconds", Value: "400" });
  const byPort = Object.fromEntries(inv.targetGroups.map((tg) => [tg.port, tg]));
  expect(byPort[30080]!.attributes).toMatchObject({ "deregistration_delay.timeout_seconds": "60" });
  // Proxy protocol was not asked for this port: a new group's default (off), which the emulator may leave unsaid.
  expect(byPort[30080]!.attributes["proxy_protocol_v2.enabled"] ?? "false").toBe("false");
  expect(byPort[30443]!.attributes).toMatchObject({
    "deregistration_delay.timeout_seconds": "10",
    "proxy_protocol_v2.enabled": "true",
  });
  // The named port "https" is its node port, for every target group.
  expect(inv.targetGroups.map((tg) => tg.healthCheck.port)).toEqual(["30443", "30443"]);
  const lbAttrs = Object.fromEntries(
    (
      await aws.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: lb.arn }))
    ).Attributes!.map((a): [string, string | undefined] => [a.Key!, a.Value]),
  );
  expect(lbAttrs).toMatchObject({
    "access_logs.s3.enabled": "true",
    "access_logs.s3.bucket": "logs",
    "access_logs.s3.prefix": "nlb",
  });
  expect(await writesDuring(provider, () => provider.ensure(web))).toEqual({});

  const longer = {
    ...web,
    annotations: { ...web.annotations, [`${A}listener-attributes.TCP-80`]: "tcp.idle_timeout.seconds=500" },
  };
  expect(await writesDuring(provider, () => provider.ensure(longer))).toEqual({
    "elbv2:ModifyListenerAttributes": 1,
  });

  // Without the access-log annotations the logs go off again.
  const annotations = Object.fromEntries(
    Object.entries(longer.annotations).filter(([k]) => !k.startsWith(`${A}access-log`)),
  );
  await provider.ensure({ ...longer, annotations });
  const after = (
    await aws.elbv2.send(new DescribeLoadBalancerAttributesCommand({ LoadBalancerArn: lb.arn }))
  ).Attributes!.find((a) => a.Key === "access_logs.s3.enabled");
  expect(after?.Value).toBe("false");
  expect(await writesDuring(provider, () => provider.ensure({ ...longer, annotations }))).toEqual({});
});
