// Every way the bare-metal provider refuses a Service, as the user reads it: the Event and condition (a
// ConfigurationError's message) and porticoctl plan's line. Each names the field to change once, and a node or
// another host holding an address is never called a Service. The corpus is keyed by every refusal reason, so a
// reason added later without a case here does not compile.
import { describe, expect, test } from "vitest";
import { intent } from "../../test/unit/support/awsIntent.ts";
import type { AllocationReason } from "../../shared/allocationTypes.ts";
import type { L2StatusFields } from "../../shared/l2status.ts";
import type { LoadBalancerIntent } from "../provider.ts";
import { ConfigurationError } from "../errors.ts";
import type { INHERITED_REFUSALS } from "./inherited.ts";
import { MetalProvider, type PoolObject } from "./provider.ts";

const pools: PoolObject[] = [
  { name: "lan", spec: { addresses: ["192.0.2.0/27"] } },
  { name: "buggy", spec: { addresses: ["198.51.100.0/30"], avoidBuggyIPs: true } },
  {
    name: "locked",
    spec: { addresses: ["203.0.113.0/30"], serviceAllocation: { namespaces: ["elsewhere"] } },
  },
  { name: "one", spec: { addresses: ["192.0.2.100/32"], autoAssign: false } },
  { name: "v4only", spec: { addresses: ["192.0.2.64/30"], autoAssign: false } },
  { name: "twice", spec: { addresses: ["192.0.2.128/30"], autoAssign: false } },
  { name: "twice", group: "metallb.io", spec: { addresses: ["192.0.2.132/30"], autoAssign: false } },
];

/** The node whose own address is inside pool lan, and the address another host on the LAN answered for. */
const NODE_ADDRESS = "192.0.2.5";
const LAN_HOST_ADDRESS = "192.0.2.9";

type Over = Partial<LoadBalancerIntent> & { status?: string[] };

/** Services that already hold addresses before each case: one alone, two sharing under key "k". */
const HOLDERS: [string, Over][] = [
  ["owner", { annotations: { "metallb.io/loadBalancerIPs": "192.0.2.10" } }],
  [
    "sharer",
    { annotations: { "metallb.io/loadBalancerIPs": "192.0.2.11", "metallb.io/allow-shared-ip": "k" } },
  ],
  ["filler", { annotations: { "metallb.io/address-pool": "one" } }],
];

const svc = (name: string, over: Over = {}): LoadBalancerIntent => {
  const { status: _status, ...rest } = over;
  return intent({
    service: { namespace: "shop", name, uid: `uid-${name}` },
    loadBalancerClass: "portico.io/metal",
    selector: { app: name },
    ...rest,
  });
};

async function world(status: Record<string, string[]> = {}): Promise<MetalProvider> {
  // A host that is not a speaker answered the probe for LAN_HOST_ADDRESS, which the "scan" Service was given.
  let records: L2StatusFields[] = [];
  const provider = new MetalProvider({
    pools: () => pools,
    assignments: () => [],
    nodeAddresses: () => [{ name: "node-0", addresses: [NODE_ADDRESS] }],
    announcements: (namespace, name) => records.filter((r) => r.serviceName === name),
    statusAddresses: (_namespace, name) => status[name] ?? [],
  });
  for (const [name, over] of HOLDERS) await provider.ensure(svc(name, over));
  await provider.ensure(svc("scan", { annotations: { "metallb.io/loadBalancerIPs": LAN_HOST_ADDRESS } }));
  records = [
    {
      node: "n1",
      serviceName: "scan",
      serviceNamespace: "shop",
      interfaces: [],
      addresses: [],
      inUse: [{ address: LAN_HOST_ADDRESS, mac: "02:00:00:00:00:99" }],
    },
  ];
  await provider.ensure(svc("scan", { annotations: { "metallb.io/loadBalancerIPs": "192.0.2.12" } }));
  return provider;
}

const lbIPs = (value: string) => ({ annotations: { "metallb.io/loadBalancerIPs": value } });
const FIELD = {
  lbIPs: 'metadata.annotations["metallb.io/loadBalancerIPs"]',
  porticoIPs: 'metadata.annotations["portico.io/loadBalancerIPs"]',
  pool: 'metadata.annotations["metallb.io/address-pool"]',
  specIP: "spec.loadBalancerIP",
  spec: "spec",
  status: "status.loadBalancer.ingress",
};

interface Case {
  name: string;
  over: Over;
  field: string;
  /** Said of what holds the address, where it is not a Service. */
  says?: RegExp;
}

type Reason = AllocationReason | (typeof INHERITED_REFUSALS)[number] | "DuplicatePoolName";

const CASES: Record<Reason, Case[]> = {
  InvalidRequestedAddress: [
    {
      name: "not an address",
      over: { annotations: { "portico.io/loadBalancerIPs": "192.0.2.999" } },
      field: FIELD.porticoIPs,
    },
    { name: "two of one family", over: lbIPs("192.0.2.20,192.0.2.21"), field: FIELD.lbIPs },
    { name: "the wrong family", over: lbIPs("2001:db8::1"), field: FIELD.lbIPs },
    {
      name: "dual-stack without the second family",
      over: { ...lbIPs("192.0.2.20"), ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "RequireDualStack" },
      field: FIELD.lbIPs,
    },
    {
      name: "outside the named pool",
      over: {
        annotations: { "metallb.io/loadBalancerIPs": "192.0.2.20", "metallb.io/address-pool": "v4only" },
      },
      field: FIELD.lbIPs,
    },
  ],
  AddressNotInAnyPool: [
    { name: "outside every pool", over: { loadBalancerIP: "10.9.9.9" }, field: FIELD.specIP },
    { name: "skipped by avoidBuggyIPs", over: lbIPs("198.51.100.0"), field: FIELD.lbIPs },
  ],
  PoolNotFound: [
    {
      name: "no such pool",
      over: { annotations: { "metallb.io/address-pool": "nowhere" } },
      field: FIELD.pool,
    },
  ],
  PoolDoesNotAllowService: [
    {
      name: "the named pool",
      over: { annotations: { "metallb.io/address-pool": "locked" } },
      field: FIELD.pool,
    },
    { name: "the requested address's pool", over: lbIPs("203.0.113.1"), field: FIELD.lbIPs },
  ],
  PoolExhausted: [
    {
      name: "its one address taken",
      over: { annotations: { "metallb.io/address-pool": "one" } },
      field: FIELD.spec,
    },
  ],
  AddressInUse: [
    { name: "held by a Service that does not share", over: lbIPs("192.0.2.10"), field: FIELD.lbIPs },
    { name: "held under a key, asked without one", over: lbIPs("192.0.2.11"), field: FIELD.lbIPs },
    {
      name: "a node's own address",
      over: lbIPs(NODE_ADDRESS),
      field: FIELD.lbIPs,
      says: /node node-0's own address/,
    },
    {
      name: "used by another host on the LAN",
      over: lbIPs(LAN_HOST_ADDRESS),
      field: FIELD.lbIPs,
      says: /in use on the LAN by a host that is not a speaker/,
    },
  ],
  SharingKeyMismatch: [
    {
      name: "another key",
      over: {
        annotations: { "metallb.io/loadBalancerIPs": "192.0.2.11", "metallb.io/allow-shared-ip": "other" },
      },
      field: FIELD.lbIPs,
    },
  ],
  PortConflict: [
    {
      name: "the same port",
      over: {
        annotations: { "metallb.io/loadBalancerIPs": "192.0.2.11", "metallb.io/allow-shared-ip": "k" },
      },
      field: FIELD.lbIPs,
    },
  ],
  BackendMismatch: [
    {
      name: "Local beside Cluster",
      over: {
        annotations: { "metallb.io/loadBalancerIPs": "192.0.2.11", "metallb.io/allow-shared-ip": "k" },
        ports: [{ name: "other", protocol: "TCP", port: 81, nodePort: 30081 }],
        externalTrafficPolicy: "Local",
      },
      field: FIELD.lbIPs,
    },
  ],
  FamilyUnavailable: [
    {
      name: "dual-stack from a pool of one family",
      over: {
        annotations: { "metallb.io/address-pool": "v4only" },
        ipFamilies: ["IPv4", "IPv6"],
        ipFamilyPolicy: "RequireDualStack",
      },
      field: FIELD.spec,
    },
  ],
  ConflictingAnnotations: [
    {
      name: "two sources disagreeing",
      over: { loadBalancerIP: "192.0.2.20", ...lbIPs("192.0.2.21") },
      field: FIELD.spec,
    },
  ],
  DuplicatePoolName: [
    {
      name: "a name both kinds define",
      over: { annotations: { "metallb.io/address-pool": "twice" } },
      field: FIELD.pool,
    },
  ],
  StatusAddressNotInPool: [{ name: "in no pool", over: { status: ["10.9.9.9"] }, field: FIELD.status }],
  StatusAddressTaken: [
    { name: "held by a Service", over: { status: ["192.0.2.10"] }, field: FIELD.status },
    {
      name: "a node's own address",
      over: { status: [NODE_ADDRESS] },
      field: FIELD.status,
      says: /node node-0's own address/,
    },
  ],
  StatusAddressNotAllowed: [
    { name: "in a pool not serving it", over: { status: ["203.0.113.1"] }, field: FIELD.status },
  ],
};

/** How often `field` occurs in `text` as a whole (not as the start of spec.loadBalancerIP, say). */
function occurrences(text: string, field: string): number {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return [...text.matchAll(new RegExp(`(?<![\\w.])${escaped}(?![\\w.])`, "g"))].length;
}

async function refusal(name: string, over: Over): Promise<{ controller: ConfigurationError; plan: string }> {
  const provider = await world({ refused: over.status ?? [] });
  const asked = svc(name, over);
  // ensure and plan may throw before they return a promise, as the controller's await sees alike.
  const plan = await Promise.resolve()
    .then(() => provider.plan(asked))
    .then(
      (p) => p.operations.join("\n"),
      (err: unknown) => (err instanceof ConfigurationError ? err.message : String(err)),
    );
  const controller = await Promise.resolve()
    .then(() => provider.ensure(asked))
    .then(
      (result) => {
        throw new Error(`not refused: given ${JSON.stringify(result.ingress)}`);
      },
      (err: unknown) => err,
    );
  if (!(controller instanceof ConfigurationError)) throw controller;
  return { controller, plan };
}

describe("every bare-metal refusal names its field once", () => {
  for (const [reason, cases] of Object.entries(CASES) as [Reason, Case[]][]) {
    for (const c of cases) {
      test(`${reason}: ${c.name}`, async () => {
        const { controller, plan } = await refusal("refused", c.over);
        expect(controller.reason).toBe(reason);
        expect(controller.field).toBe(c.field);
        expect(controller.message.startsWith(`${c.field}: `), controller.message).toBe(true);
        expect(occurrences(controller.message, c.field), controller.message).toBe(1);
        // porticoctl plan shows the same refusal, with the same single mention.
        expect(plan, plan).toContain(controller.message.slice(c.field.length + 2));
        if (c.field !== FIELD.spec) expect(occurrences(plan, c.field), plan).toBe(1);
        if (c.says) {
          expect(controller.message).toMatch(c.says);
          expect(controller.message).not.toMatch(/Service ~|allow-shared-ip/);
        }
      });
    }
  }
});
