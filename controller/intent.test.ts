import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../providers/errors.ts";
import { buildIntent } from "./intent.ts";
import type { GatedPod } from "./readinessGates/gates.ts";
import { parseLabelSelector } from "../shared/labelSelector.ts";
import { node, service, slice } from "../test/unit/support/controllerObjects.ts";

const CLASS = "portico.io/aws-nlb";

describe("nodes", () => {
  test("only eligible nodes are targets: Ready, not deleting, not excluded, not doomed by the autoscaler, not cordoned", () => {
    const nodes = [
      node("ok"),
      node("draining", { cordoned: true }),
      node("not-ready", { ready: false }),
      node("deleting", { deleting: true }),
      node("excluded", { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } }),
      node("doomed", { taints: ["ToBeDeletedByClusterAutoscaler"] }),
      node("tainted-otherwise", { taints: ["dedicated"] }),
    ];
    expect(buildIntent(service(), nodes, [], CLASS).nodes.map((n) => n.name)).toEqual([
      "ok",
      "tainted-otherwise",
    ]);
  });

  test("with externalTrafficPolicy Local a cordoned node stays a target: its pods still run there", () => {
    const nodes = [node("a"), node("draining", { cordoned: true })];
    const local = service({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 });
    expect(buildIntent(local, nodes, [], CLASS).nodes.map((n) => n.name)).toEqual(["a", "draining"]);
  });

  test("cordoned nodes keep the targets when no other node could take them", () => {
    const nodes = [node("a", { cordoned: true }), node("b", { cordoned: true }), node("c", { ready: false })];
    expect(buildIntent(service(), nodes, [], CLASS).nodes.map((n) => n.name)).toEqual(["a", "b"]);
    // Judged within the Service's own target nodes.
    const edge = [
      node("edge", { cordoned: true, labels: { zone: "a" } }),
      node("other", { labels: { zone: "b" } }),
    ];
    const svc = service({}, { "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "zone=a" });
    expect(buildIntent(svc, edge, [], CLASS).nodes.map((n) => n.name)).toEqual(["edge"]);
  });

  test("the controller's selector and the Service's target-node annotations both narrow the nodes", () => {
    const nodes = [
      node("a", { labels: { pool: "edge", zone: "a" } }),
      node("b", { labels: { pool: "edge", zone: "b" } }),
      node("c", { labels: { pool: "core" } }),
    ];
    const svc = service({}, { "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "zone=a" });
    expect(
      buildIntent(service(), nodes, [], CLASS, { nodeSelector: parseLabelSelector("pool=edge") }).nodes.map(
        (n) => n.name,
      ),
    ).toEqual(["a", "b"]);
    expect(
      buildIntent(svc, nodes, [], CLASS, { nodeSelector: parseLabelSelector("pool=edge") }).nodes.map(
        (n) => n.name,
      ),
    ).toEqual(["a"]);
  });

  test("node targets carry providerID, InternalIP, zone and labels, sorted by name", () => {
    const labels = { "topology.kubernetes.io/zone": "us-east-1b", agentpool: "edge" };
    const n = node("z", { ip: "10.1.2.3", labels, providerID: "aws:///us-east-1b/i-0abc" });
    const a = buildIntent(service(), [n, node("a")], [], CLASS).nodes;
    expect(a.map(({ labels: _l, ...rest }) => rest)).toEqual([
      { name: "a", providerID: "aws:///us-east-1a/i-a0000000", internalIP: "10.0.0.1" },
      { name: "z", providerID: "aws:///us-east-1b/i-0abc", internalIP: "10.1.2.3", zone: "us-east-1b" },
    ]);
    expect(a[1]!.labels).toMatchObject(labels);
  });
});

describe("nodes, worked out once per frozen node list", () => {
  // The cache hands every reconcile the same frozen array until a Node changes (cacheIndexes.ts).
  const SELECTOR = "service.beta.kubernetes.io/aws-load-balancer-target-node-labels";
  const nodes = Object.freeze([
    node("b", { labels: { zone: "b" } }),
    node("a", { labels: { zone: "a" } }),
    node("c", { ready: false }),
  ]);
  const names = (svc: ReturnType<typeof service>, list: readonly ReturnType<typeof node>[], policy = {}) =>
    buildIntent(svc, list, [], CLASS, policy).nodes;

  test("Services with the same selectors and policy get the same targets, and cannot change them", () => {
    const first = names(service(), nodes);
    expect(first.map((n) => n.name)).toEqual(["a", "b"]);
    const other = service();
    other.metadata!.name = "other";
    expect(names(other, nodes)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first[0])).toBe(true);
  });

  test("another selector, policy or controller-wide selector gets targets of its own", () => {
    const all = names(service(), nodes);
    const zoneA = names(service({}, { [SELECTOR]: "zone=a" }), nodes);
    expect(zoneA.map((n) => n.name)).toEqual(["a"]);
    expect(names(service({}, { [SELECTOR]: "zone=b" }), nodes).map((n) => n.name)).toEqual(["b"]);
    const cordoned = Object.freeze([node("a", { cordoned: true }), node("b")]);
    const local = service({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 });
    expect(names(service(), cordoned).map((n) => n.name)).toEqual(["b"]);
    expect(names(local, cordoned).map((n) => n.name)).toEqual(["a", "b"]);
    const edge = { nodeSelector: parseLabelSelector("zone=b") };
    expect(names(service(), nodes, edge).map((n) => n.name)).toEqual(["b"]);
    expect(names(service(), nodes)).toBe(all);
  });

  test("a new list (a Node changed) is worked out again; a list that is not frozen, every time", () => {
    const before = names(service(), nodes);
    const after = Object.freeze([...nodes.slice(0, 2), node("c")]);
    expect(names(service(), after).map((n) => n.name)).toEqual(["a", "b", "c"]);
    const open = [node("a")];
    const once = names(service(), open);
    open.push(node("d"));
    expect(names(service(), open).map((n) => n.name)).toEqual(["a", "d"]);
    expect(once.map((n) => n.name)).toEqual(["a"]);
    expect(names(service(), nodes)).toBe(before);
  });
});

describe("endpoints", () => {
  test("ready endpoints are targets; serving-terminating ones drain; not-ready ones are neither", () => {
    const s = slice([
      { ip: "10.0.0.3", ready: true },
      { ip: "10.0.0.1", ready: false, serving: true, terminating: true },
      { ip: "10.0.0.2", ready: false, serving: false },
    ]);
    const intent = buildIntent(service(), [], [s], CLASS);
    expect(intent.endpoints.map((e) => e.ip)).toEqual(["10.0.0.3"]);
    expect(intent.drainingEndpoints.map((e) => e.ip)).toEqual(["10.0.0.1"]);
  });

  test("a draining endpoint names its pod (for the drain Warning); one that serves as a last resort does not", () => {
    const stopping = { ip: "10.0.0.1", ready: false, serving: true, terminating: true, pod: "web-1" };
    const drained = buildIntent(service(), [], [slice([{ ip: "10.0.0.3", ready: true }, stopping])], CLASS);
    expect(drained.drainingEndpoints).toEqual([{ ip: "10.0.0.1", ports: { http: 8080 }, pod: "web-1" }]);
    const alone = buildIntent(service(), [], [slice([stopping])], CLASS);
    expect(alone.endpoints).toEqual([{ ip: "10.0.0.1", ports: { http: 8080 } }]);
  });

  test("with no ready endpoint, serving-terminating ones keep the traffic (as kube-proxy does)", () => {
    const s = slice([
      { ip: "10.0.0.1", ready: false, serving: true, terminating: true },
      { ip: "10.0.0.2", ready: false, serving: false, terminating: true },
    ]);
    const intent = buildIntent(service(), [], [s], CLASS);
    expect(intent.endpoints.map((e) => e.ip)).toEqual(["10.0.0.1"]);
    expect(intent.drainingEndpoints).toEqual([]);
  });

  test("unset conditions mean ready and serving, as the API defines", () => {
    expect(
      buildIntent(service(), [], [slice([{ ip: "10.0.0.9" }])], CLASS).endpoints.map((e) => e.ip),
    ).toEqual(["10.0.0.9"]);
  });

  test("ports resolve per slice; other Services' slices and FQDN slices are ignored; duplicates prefer ready", () => {
    const a = slice([{ ip: "10.0.0.1", node: "n1" }], { http: 8080 });
    const b = slice(
      [{ ip: "10.0.0.2" }, { ip: "10.0.0.1", ready: false, serving: true, terminating: true }],
      { http: 9090 },
    );
    const other = slice([{ ip: "10.9.9.9" }], { http: 1 }, "other");
    const fqdn = { ...slice([{ ip: "example.com" }]), addressType: "FQDN" };
    const intent = buildIntent(service(), [], [a, b, other, fqdn], CLASS);
    expect(intent.endpoints).toEqual([
      { ip: "10.0.0.1", nodeName: "n1", ports: { http: 8080 } },
      { ip: "10.0.0.2", ports: { http: 9090 } },
    ]);
    expect(intent.drainingEndpoints).toEqual([]);
  });
});

describe("endpoints that wait for a readiness gate", () => {
  const waiting: GatedPod = { uid: "u-new", services: ["web"], open: [], containersReady: true };
  const pods: Record<string, GatedPod> = {
    new: waiting,
    starting: { ...waiting, uid: "u-starting", containersReady: false },
    other: { ...waiting, uid: "u-other", services: ["other"] },
    open: { ...waiting, uid: "u-open", open: ["web"] },
  };
  const gatedPod = (namespace: string, name: string) => (namespace === "shop" ? pods[name] : undefined);

  test("a pod whose containers are ready and that waits only for this Service's gate is a target, marked", () => {
    const s = slice([
      { ip: "10.0.0.1", ready: true, pod: "old" },
      { ip: "10.0.0.2", ready: false, serving: false, pod: "new", podUid: "u-new" },
      { ip: "10.0.0.3", ready: false, serving: false, pod: "starting" },
      { ip: "10.0.0.4", ready: false, serving: false, pod: "other" },
      { ip: "10.0.0.5", ready: false, serving: false, pod: "open" },
      { ip: "10.0.0.6", ready: false, serving: false, pod: "unknown" },
    ]);
    const intent = buildIntent(service(), [], [s], CLASS, { gatedPod });
    expect(intent.endpoints).toEqual([
      { ip: "10.0.0.1", ports: { http: 8080 } },
      { ip: "10.0.0.2", ports: { http: 8080 }, awaitingGate: "new" },
    ]);
  });

  test("without the controller's pod view, or for another pod of the same name, nothing waits", () => {
    const s = slice([{ ip: "10.0.0.2", ready: false, serving: false, pod: "new", podUid: "u-replaced" }]);
    expect(buildIntent(service(), [], [s], CLASS, { gatedPod }).endpoints).toEqual([]);
    expect(buildIntent(service(), [], [s], CLASS).endpoints).toEqual([]);
  });

  test("terminating endpoints keep their traffic beside pods that wait, until one is ready", () => {
    const s = slice([
      { ip: "10.0.0.1", ready: false, serving: true, terminating: true, pod: "old" },
      { ip: "10.0.0.2", ready: false, serving: false, pod: "new" },
    ]);
    const alone = buildIntent(service(), [], [s], CLASS, { gatedPod });
    expect(alone.endpoints.map((e) => e.ip)).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(alone.drainingEndpoints).toEqual([]);
    const withReady = buildIntent(service(), [], [s, slice([{ ip: "10.0.0.3", ready: true }])], CLASS, {
      gatedPod,
    });
    expect(withReady.endpoints.map((e) => e.ip)).toEqual(["10.0.0.2", "10.0.0.3"]);
    expect(withReady.drainingEndpoints.map((e) => e.ip)).toEqual(["10.0.0.1"]);
  });

  test("a terminating pod never waits for a gate", () => {
    const s = slice([{ ip: "10.0.0.2", ready: false, serving: false, terminating: true, pod: "new" }]);
    expect(buildIntent(service(), [], [s], CLASS, { gatedPod }).endpoints).toEqual([]);
  });
});

describe("the Service", () => {
  test("sessionAffinity ClientIP is carried over; None or absent is not", () => {
    expect(buildIntent(service({ sessionAffinity: "ClientIP" }), [], [], CLASS).clientIPAffinity).toBe(true);
    expect(buildIntent(service({ sessionAffinity: "None" }), [], [], CLASS).clientIPAffinity).toBeUndefined();
    expect(buildIntent(service(), [], [], CLASS).clientIPAffinity).toBeUndefined();
  });

  test("ports, policy, health-check port and node-port allocation are carried over", () => {
    const svc = service({
      externalTrafficPolicy: "Local",
      healthCheckNodePort: 32000,
      allocateLoadBalancerNodePorts: false,
      ports: [{ name: "dns", port: 53, protocol: "UDP" }, { port: 80 }],
      ipFamilies: ["IPv4", "IPv6"],
    });
    const intent = buildIntent(svc, [], [], CLASS);
    expect(intent).toMatchObject({
      service: { namespace: "shop", name: "web", uid: "0000-1111" },
      loadBalancerClass: CLASS,
      externalTrafficPolicy: "Local",
      healthCheckNodePort: 32000,
      allocateNodePorts: false,
      ports: [
        { name: "dns", protocol: "UDP", port: 53 },
        { name: "", protocol: "TCP", port: 80 },
      ],
      ipFamilies: ["IPv4", "IPv6"],
    });
  });

  test("source ranges come from the spec, else from the annotation; each must be a CIDR", () => {
    expect(
      buildIntent(service({ loadBalancerSourceRanges: ["10.0.0.0/8"] }), [], [], CLASS).sourceRanges,
    ).toEqual(["10.0.0.0/8"]);
    const annotated = service(
      {},
      { "service.beta.kubernetes.io/load-balancer-source-ranges": "203.0.113.0/24, 2001:db8::/32" },
    );
    expect(buildIntent(annotated, [], [], CLASS).sourceRanges).toEqual(["203.0.113.0/24", "2001:db8::/32"]);
    // Which field gave them, for the refusals that name it.
    expect(buildIntent(annotated, [], [], CLASS).sourceRangesField).toBe(
      "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]",
    );
    const both = service(
      { loadBalancerSourceRanges: ["10.0.0.0/8"] },
      { "service.beta.kubernetes.io/load-balancer-source-ranges": "203.0.113.0/24" },
    );
    expect(buildIntent(both, [], [], CLASS)).toMatchObject({ sourceRanges: ["10.0.0.0/8"] });
    expect(buildIntent(both, [], [], CLASS).sourceRangesField).toBeUndefined();
    for (const bad of ["10.0.0.1", "10.0.0.0/33", "nonsense"]) {
      expect(() => buildIntent(service({ loadBalancerSourceRanges: [bad] }), [], [], CLASS)).toThrow(
        ConfigurationError,
      );
    }
    try {
      buildIntent(service({ loadBalancerSourceRanges: ["10.0.0.1"] }), [], [], CLASS);
    } catch (e) {
      expect((e as ConfigurationError).field).toBe("spec.loadBalancerSourceRanges");
      expect((e as ConfigurationError).message).toContain("is not a CIDR");
    }
  });

  test("a Service without ports, or with an unknown protocol, is a configuration error", () => {
    expect(() => buildIntent(service({ ports: [] }), [], [], CLASS)).toThrow(
      "spec.ports: the Service has no ports",
    );
    expect(() => buildIntent(service({ ports: [{ port: 1, protocol: "QUIC" }] }), [], [], CLASS)).toThrow(
      "spec.ports[0].protocol",
    );
  });
});

describe("annotations checked against the catalog", () => {
  test("a refused key stops the intent with the key named as the field", () => {
    const svc = service({}, { "service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports": "443" });
    expect(() => buildIntent(svc, [], [], CLASS)).toThrow(ConfigurationError);
    try {
      buildIntent(svc, [], [], CLASS);
    } catch (err) {
      expect((err as ConfigurationError).reason).toBe("UnsupportedAnnotation");
      expect((err as ConfigurationError).field).toBe(
        "metadata.annotations[service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports]",
      );
    }
  });

  test("a typo in Portico's own prefix is refused on every class", () => {
    for (const cls of ["portico.io/aws-nlb", "portico.io/azure-lb", "portico.io/metal"]) {
      const svc = service({}, { "portico.io/adress-pool": "a" });
      expect(() => buildIntent(svc, [], [], cls)).toThrow(/did you mean portico.io\/address-pool/);
    }
  });

  test("another cloud's keys are not read, and a no-op is carried to be told", () => {
    const svc = service(
      {},
      {
        "service.beta.kubernetes.io/azure-pls-create": "true",
        "service.beta.kubernetes.io/aws-load-balancer-enable-tcp-udp-listener": "true",
      },
    );
    expect(buildIntent(svc, [], [], CLASS).acceptedNoops).toEqual([
      expect.stringContaining(
        "aws-load-balancer-enable-tcp-udp-listener: Portico always makes one TCP_UDP listener",
      ),
    ]);
    expect(buildIntent(svc, [], [], "portico.io/metal").acceptedNoops).toEqual([]);
  });

  test("the AWS Load Balancer Controller's class is read with the AWS family", () => {
    const svc = service({}, { "service.beta.kubernetes.io/aws-load-balancer-quic-enabled-ports": "443" });
    expect(() => buildIntent(svc, [], [], "service.k8s.aws/nlb")).toThrow(/QUIC listeners are not offered/);
  });

  test("a class Portico does not know reads no family", () => {
    const svc = service({}, { "portico.io/nonsense": "x" });
    expect(buildIntent(svc, [], [], "example.com/lb").acceptedNoops).toEqual([]);
  });
});

describe("source ranges", () => {
  test("a CIDR with host bits set is refused with both readings offered", () => {
    const svc = service({ loadBalancerSourceRanges: ["10.0.0.1/8"] });
    expect(() => buildIntent(svc, [], [], CLASS)).toThrow(
      'spec.loadBalancerSourceRanges: "10.0.0.1/8" has host bits set; write 10.0.0.0/8 for the network, or 10.0.0.1/32 for the one address',
    );
    const v6 = service({}, { "service.beta.kubernetes.io/load-balancer-source-ranges": "2001:db8::1/64" });
    expect(() => buildIntent(v6, [], [], CLASS)).toThrow(
      /write 2001:db8::\/64 for the network, or 2001:db8::1\/128/,
    );
  });

  test("network addresses and single hosts pass unchanged", () => {
    const svc = service({
      loadBalancerSourceRanges: ["10.0.0.0/8", " 192.0.2.7/32", "2001:db8::/32", "0.0.0.0/0"],
    });
    expect(buildIntent(svc, [], [], CLASS).sourceRanges).toEqual([
      "10.0.0.0/8",
      "192.0.2.7/32",
      "2001:db8::/32",
      "0.0.0.0/0",
    ]);
  });
});
