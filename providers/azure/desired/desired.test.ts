import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import {
  CLUSTER,
  config,
  desired,
  FE,
  intent,
  network,
  RG,
  SUB,
  UID,
} from "../../../test/unit/support/azure.ts";

const TARGET = "portico.io/target-type";
const A = "service.beta.kubernetes.io/";

function refusal(i: LoadBalancerIntent, cfg = config()): ConfigurationError {
  try {
    desired(i, { config: cfg });
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected the Service to be refused");
}

const lbId = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/loadBalancers/${name}`;

describe("desiredService", () => {
  it("allows traffic to the subnets holding the backends, and to addresses in no known subnet one by one", () => {
    const d = desired(
      intent({
        nodes: [
          { name: "a", internalIP: "10.0.1.10" },
          { name: "b", internalIP: "10.0.1.11" },
          { name: "c", internalIP: "10.0.2.7" },
          { name: "d", internalIP: "10.0.9.9" },
        ],
      }),
    );
    expect(d.securityRules!.map((r) => r.destination)).toEqual([["10.0.1.0/24", "10.0.2.0/24", "10.0.9.9"]]);
  });

  it("distributes by source IP for sessionAffinity ClientIP, on every rule of the Service", () => {
    const d = desired(
      intent({
        clientIPAffinity: true,
        ports: [
          { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
          { name: "dns", protocol: "UDP", port: 53, nodePort: 30053 },
        ],
      }),
    );
    expect(d.rules.map((r) => r.loadDistribution)).toEqual(["SourceIP", "SourceIP"]);
    expect(desired().rules.map((r) => r.loadDistribution)).toEqual(["Default"]);
  });

  it("puts a public instance-target Service on the cluster load balancer with the shared node pool", () => {
    const d = desired();
    expect(d.loadBalancer).toEqual({
      name: CLUSTER,
      resourceGroup: RG,
      id: lbId(CLUSTER),
      internal: false,
      perService: false,
      tags: { "portico.io-cluster": CLUSTER, "portico.io-resource": "loadbalancer" },
    });
    expect(d.frontendName).toBe(FE);
    expect(d.frontend).toEqual({ kind: "public", publicIpId: d.publicIp!.id });
    expect(d.publicIp).toMatchObject({ kind: "managed", name: `${CLUSTER}-${FE}` });
    expect(d.pool).toEqual({
      name: "portico-nodes",
      shared: true,
      addresses: [
        { name: "node-a", ip: "10.0.1.10" },
        { name: "node-b", ip: "10.0.1.11" },
      ],
    });
    expect(d.rules).toEqual([
      {
        name: `${FE}-TCP-80`,
        protocol: "Tcp",
        frontendPort: 80,
        backendPort: 30080,
        probe: `${FE}-TCP-80`,
        floatingIP: false,
        idleTimeoutInMinutes: 4,
        tcpReset: true,
        loadDistribution: "Default",
      },
    ]);
    expect(d.probes).toEqual([
      { name: `${FE}-TCP-80`, protocol: "Tcp", port: 30080, intervalInSeconds: 5, numberOfProbes: 2 },
    ]);
    // The public IP records the Service, so the shared load balancer need not.
    expect(d.recordOnLoadBalancer).toBe(false);
    expect(d.securityRules).toEqual([
      {
        name: `${FE}-TCP-80`,
        access: "Allow",
        protocol: "Tcp",
        destinationPort: 30080,
        sources: ["Internet"],
        destination: ["10.0.1.0/24"],
      },
    ]);
    expect(d.securityRuleDescription).toMatch(/^portico:[0-9a-f]{10}:shop\/web$/);
  });

  it("puts an internal Service on <cluster>-internal in the default subnet, recorded on the load balancer", () => {
    const d = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }));
    expect(d.loadBalancer.name).toBe(`${CLUSTER}-internal`);
    expect(d.frontend).toEqual({ kind: "internal", subnetId: network.subnets.nodes!.id });
    expect(d.publicIp).toBeUndefined();
    expect(d.recordOnLoadBalancer).toBe(true);
    expect(d.securityRules![0]!.sources).toEqual(["VirtualNetwork"]);
  });

  it("gives an internal Service its annotated subnet and a requested static address there", () => {
    const d = desired(
      intent({
        annotations: {
          [`${A}azure-load-balancer-internal`]: "true",
          [`${A}azure-load-balancer-internal-subnet`]: "Frontends",
          [`${A}azure-load-balancer-ipv4`]: "10.0.2.50",
        },
      }),
    );
    expect(d.frontend).toEqual({
      kind: "internal",
      subnetId: network.subnets.frontends!.id,
      privateIp: "10.0.2.50",
    });
  });

  it("gives each Service its own load balancer when configured, recorded in its own tags", () => {
    const d = desired(intent(), { config: config({ loadBalancerPerService: true }) });
    expect(d.loadBalancer).toMatchObject({ name: `${CLUSTER}-${FE}`, perService: true });
    expect(d.loadBalancer.tags).toMatchObject({
      "portico.io-service-uid": UID,
      "portico.io-service": "shop/web",
    });
    expect(d.pool).toMatchObject({ name: FE, shared: false });
    expect(d.recordOnLoadBalancer).toBe(false);
    const internal = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }), {
      config: config({ loadBalancerPerService: true }),
    });
    expect(internal.loadBalancer.name).toBe(`${CLUSTER}-${FE}-internal`);
  });

  it("names the shared load balancer as configured", () => {
    expect(desired(intent(), { config: config({ loadBalancerName: "kubernetes" }) }).loadBalancer.name).toBe(
      "kubernetes",
    );
  });

  it("keeps a Service that narrows its nodes off the shared node pool", () => {
    const d = desired(intent({ annotations: { "portico.io/target-node-labels": "role=edge" } }));
    expect(d.pool).toMatchObject({ name: FE, shared: false });
  });

  it("leaves out nodes without an address in the virtual network, and repeats of one address", () => {
    const d = desired(
      intent({
        nodes: [
          { name: "a", internalIP: "10.0.1.10" },
          { name: "b" },
          { name: "c", internalIP: "192.168.0.4" },
          { name: "d", internalIP: "10.0.1.10" },
        ],
      }),
    );
    expect(d.pool.addresses).toEqual([{ name: "a", ip: "10.0.1.10" }]);
  });

  it("holds a Local Service's node whose every endpoint drains without new connections, in its own pool", () => {
    const ep = (ip: string, nodeName: string) => ({ ip, nodeName, ports: { http: 8080 } });
    const endpoints = {
      endpoints: [ep("10.0.64.1", "node-a")],
      drainingEndpoints: [ep("10.0.64.2", "node-b")],
    };
    const own = { "portico.io/target-node-labels": "role=edge" };
    const local = { externalTrafficPolicy: "Local" as const, healthCheckNodePort: 32100, ...endpoints };
    expect(desired(intent({ ...local, annotations: own })).pool.addresses).toEqual([
      { name: "node-a", ip: "10.0.1.10" },
      { name: "node-b", ip: "10.0.1.11", adminState: "Down" },
    ]);
    // The shared node pool serves every Service: its probe alone takes the node out for this one.
    const shared = desired(intent(local)).pool;
    expect(shared.shared).toBe(true);
    expect(shared.addresses.some((a) => a.adminState)).toBe(false);
    const cluster = desired(intent({ ...endpoints, annotations: own })).pool;
    expect(cluster.addresses.some((a) => a.adminState)).toBe(false);
  });

  describe("ip targets", () => {
    const endpoints = [
      { ip: "10.0.64.2", ports: { http: 8080 } },
      { ip: "10.0.64.1", ports: { http: 8080 } },
      { ip: "10.0.64.3", ports: { http: 9090 } },
    ];

    it("target pods on the port most of them resolve, draining ones held without new connections", () => {
      const d = desired(
        intent({
          annotations: { [TARGET]: "ip" },
          endpoints,
          drainingEndpoints: [{ ip: "10.0.64.9", ports: { http: 8080 } }],
        }),
      );
      expect(d.pool).toEqual({
        name: FE,
        shared: false,
        addresses: [
          { name: "10.0.64.1", ip: "10.0.64.1" },
          { name: "10.0.64.2", ip: "10.0.64.2" },
          { name: "10.0.64.3", ip: "10.0.64.3" },
          { name: "10.0.64.9", ip: "10.0.64.9", adminState: "Down" },
        ],
      });
      expect(d.rules[0]).toMatchObject({ backendPort: 8080 });
      expect(d.probes[0]).toMatchObject({ protocol: "Tcp", port: 8080 });
      // Draining pods keep their open connections but are not allowed new ones.
      expect(d.securityRules![0]!.destination).toEqual(["10.0.64.1", "10.0.64.2", "10.0.64.3"]);
    });

    it("are the default without node ports, and stand on the Service port until there are endpoints", () => {
      const d = desired(
        intent({ allocateNodePorts: false, ports: [{ name: "http", protocol: "TCP", port: 80 }] }),
      );
      expect(d.pool).toEqual({ name: FE, shared: false, addresses: [] });
      expect(d.rules[0]).toMatchObject({ backendPort: 80 });
      expect(d.securityRules).toEqual([]);
    });

    it("go without a probe for UDP, which a TCP probe cannot check", () => {
      const d = desired(
        intent({
          annotations: { [TARGET]: "ip" },
          ports: [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }],
        }),
      );
      expect(d.probes).toEqual([]);
      expect(d.rules[0]).not.toHaveProperty("probe");
      expect(d.rules[0]).not.toHaveProperty("idleTimeoutInMinutes");
    });

    it("are refused when no pod has an address in the virtual network", () => {
      const err = refusal(
        intent({ annotations: { [TARGET]: "ip" }, endpoints: [{ ip: "172.16.0.5", ports: { http: 80 } }] }),
      );
      expect(err.reason).toBe("PodsOutsideVirtualNetwork");
    });
  });

  describe("probes", () => {
    it("ask kube-proxy's healthCheckNodePort for externalTrafficPolicy Local", () => {
      const d = desired(intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 }));
      expect(d.probes[0]).toMatchObject({ protocol: "Http", port: 32000, requestPath: "/healthz" });
    });

    it("ask kube-proxy itself for UDP, for the drain-aware opt-in, and without a node port", () => {
      const udp = desired(intent({ ports: [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }] }));
      expect(udp.probes[0]).toMatchObject({ protocol: "Http", port: 10256, requestPath: "/healthz" });
      const optIn = desired(intent({ annotations: { "portico.io/health-check-kube-proxy": "true" } }));
      expect(optIn.probes[0]).toMatchObject({ protocol: "Http", port: 10256 });
      const floating = desired(
        intent({
          allocateNodePorts: false,
          ports: [{ name: "http", protocol: "TCP", port: 80 }],
          annotations: { [TARGET]: "instance", "portico.io/floating-ip": "true" },
        }),
      );
      expect(floating.probes[0]).toMatchObject({ protocol: "Http", port: 10256 });
      expect(floating.rules[0]).toMatchObject({ backendPort: 80, floatingIP: true });
    });

    it("follow the annotations, globally and per port", () => {
      const d = desired(
        intent({
          ports: [
            { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
            { name: "status", protocol: "TCP", port: 15021, nodePort: 31021 },
            { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
          ],
          annotations: {
            [`${A}azure-load-balancer-health-probe-protocol`]: "Http",
            [`${A}azure-load-balancer-health-probe-interval`]: "10",
            [`${A}port_443_health-probe_port`]: "status",
            [`${A}port_443_health-probe_request-path`]: "/healthz/ready",
            [`${A}port_15021_no_lb_rule`]: "true",
          },
        }),
      );
      expect(d.rules.map((r) => r.frontendPort)).toEqual([80, 443]);
      expect(d.probes).toEqual([
        {
          name: `${FE}-TCP-80`,
          protocol: "Http",
          port: 30080,
          requestPath: "/",
          intervalInSeconds: 10,
          numberOfProbes: 2,
        },
        {
          name: `${FE}-TCP-443`,
          protocol: "Http",
          port: 31021,
          requestPath: "/healthz/ready",
          intervalInSeconds: 10,
          numberOfProbes: 2,
        },
      ]);
    });

    it("take a literal port, and drop the probe where asked", () => {
      const d = desired(
        intent({
          annotations: {
            [`${A}port_80_health-probe_port`]: "10254",
            [`${A}port_80_health-probe_protocol`]: "Tcp",
          },
        }),
      );
      expect(d.probes[0]).toEqual({
        name: `${FE}-TCP-80`,
        protocol: "Tcp",
        port: 10254,
        intervalInSeconds: 5,
        numberOfProbes: 2,
      });
      expect(desired(intent({ annotations: { [`${A}port_80_no_probe_rule`]: "true" } })).probes).toEqual([]);
      expect(
        refusal(intent({ annotations: { [`${A}port_80_health-probe_port`]: "metrics" } })).field,
      ).toContain("port_80_health-probe_port");
    });
  });

  describe("security rules", () => {
    it("allow the source ranges, and each allowed service tag in a rule of its own", () => {
      const d = desired(
        intent({
          sourceRanges: ["203.0.113.0/24", "198.51.100.0/24"],
          annotations: { [`${A}azure-allowed-service-tags`]: "AzureFrontDoor.Backend" },
        }),
      );
      expect(d.securityRules!.map((r) => [r.name, r.sources])).toEqual([
        [`${FE}-TCP-80`, ["198.51.100.0/24", "203.0.113.0/24"]],
        [`${FE}-TCP-80-AzureFrontDoor.Backend`, ["AzureFrontDoor.Backend"]],
      ]);
    });

    it("are absent without a configured security group, and source ranges then refused", () => {
      const cfg = config({ securityGroupName: undefined });
      expect(desired(intent(), { config: cfg }).securityRules).toBeUndefined();
      expect(refusal(intent({ sourceRanges: ["203.0.113.0/24"] }), cfg).reason).toBe(
        "SourceRangesUnsupported",
      );
    });

    it("go to the frontend address on the Service port with floating IP", () => {
      const d = desired(intent({ annotations: { "portico.io/floating-ip": "true" } }));
      expect(d.securityRules![0]).toMatchObject({ destination: "frontend", destinationPort: 80 });
    });
  });

  it.each([
    [
      "instance targets without node ports",
      intent({ allocateNodePorts: false, annotations: { [TARGET]: "instance" } }),
      "NodePortsDisabled",
      "spec.allocateLoadBalancerNodePorts",
    ],
    [
      "SCTP",
      intent({ ports: [{ name: "s", protocol: "SCTP", port: 9, nodePort: 30009 }] }),
      "UnsupportedProtocol",
      "spec.ports[0].protocol",
    ],
    [
      "an internal IPv6 frontend in a subnet without an IPv6 range",
      intent({ ipFamilies: ["IPv6"], annotations: { [`${A}azure-load-balancer-internal`]: "true" } }),
      "SubnetHasNoRangeOfFamily",
      "subnetName (controller Azure config)",
    ],
    [
      "floating IP to pods",
      intent({ annotations: { [TARGET]: "ip", "portico.io/floating-ip": "true" } }),
      "FloatingIPNeedsNodes",
      "metadata.annotations[portico.io/floating-ip]",
    ],
    [
      "two ports on one target port",
      intent({
        annotations: { [TARGET]: "ip" },
        ports: [
          { name: "a", protocol: "TCP", port: 80 },
          { name: "b", protocol: "TCP", port: 8080 },
        ],
        endpoints: [{ ip: "10.0.64.1", ports: { a: 8080 } }],
      }),
      "BackendPortClash",
      "spec.ports",
    ],
    [
      "an unknown subnet",
      intent({
        annotations: {
          [`${A}azure-load-balancer-internal`]: "true",
          [`${A}azure-load-balancer-internal-subnet`]: "x",
        },
      }),
      "SubnetNotFound",
      `metadata.annotations[${A}azure-load-balancer-internal-subnet]`,
    ],
    [
      "a private address outside the subnet",
      intent({
        annotations: {
          [`${A}azure-load-balancer-internal`]: "true",
          [`${A}azure-load-balancer-ipv4`]: "10.0.2.5",
        },
      }),
      "AddressNotInSubnet",
      `metadata.annotations[${A}azure-load-balancer-ipv4]`,
    ],
  ])("refuses %s", (_, i, reason, field) => {
    const err = refusal(i);
    expect(err.reason).toBe(reason);
    expect(err.field).toBe(field);
  });

  it("lets TCP and UDP share a port number, each with its own rule", () => {
    const d = desired(
      intent({
        ports: [
          { name: "dns", protocol: "UDP", port: 53, nodePort: 30053 },
          { name: "dns-tcp", protocol: "TCP", port: 53, nodePort: 30054 },
        ],
      }),
    );
    expect(d.rules.map((r) => r.name)).toEqual([`${FE}-UDP-53`, `${FE}-TCP-53`]);
  });
});
