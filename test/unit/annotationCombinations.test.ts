// Every pair in the providers' tables of settings that cannot work together is seen refused through the
// provider's own path (parse, then the desired state), with the reason the table gives and a message naming every
// field of the pair; and each setting of the example alone is not refused for that pair.
import { describe, expect, test } from "vitest";
import { buildIntent } from "../../controller/intent.ts";
import { AWS_COMBINATIONS } from "../../providers/aws/annotations/combinations.ts";
import { AZURE_COMBINATIONS } from "../../providers/azure/annotations/combinations.ts";
import { METAL_COMBINATIONS } from "../../providers/metal/annotations/combinations.ts";
import type { CombinationTable, Example } from "../../providers/annotationKeys/combinations.ts";
import { defaultTargetType, parseAwsSettings } from "../../providers/aws/annotations/settings.ts";
import { desiredLoadBalancer } from "../../providers/aws/loadBalancer/desired.ts";
import { ConfigurationError } from "../../providers/errors.ts";
import { Allocator } from "../../providers/metal/allocator.ts";
import { requestFromService } from "../../shared/request.ts";
import { NETWORK } from "./support/awsIntent.ts";
import { config, sides } from "./support/azure.ts";
import { service } from "./support/controllerObjects.ts";
import { pool, service as metalService } from "./support/metal.ts";

type Attempt = (example: Example) => unknown;

const withNodePorts = (spec: Record<string, unknown>) => {
  const ports = spec.ports as { port: number; nodePort?: number }[] | undefined;
  return ports ? { ...spec, ports: ports.map((p, i) => ({ nodePort: 30100 + i, ...p })) } : spec;
};

const aws: Attempt = ({ annotations = {}, spec = {} }) => {
  const intent = buildIntent(service(withNodePorts(spec), { ...annotations }), [], [], "portico.io/aws-nlb");
  return desiredLoadBalancer(
    intent,
    parseAwsSettings(intent.annotations, {
      scheme: "internal",
      targetType: defaultTargetType(intent.allocateNodePorts),
    }),
    NETWORK,
    "prod",
  );
};

const azure: Attempt = ({ annotations = {}, spec = {}, configurations }) => {
  const intent = buildIntent(service(withNodePorts(spec), { ...annotations }), [], [], "portico.io/azure-lb");
  const multiple = configurations?.map((name) => ({ name }));
  return sides(intent, {
    config: config(multiple ? { multipleStandardLoadBalancerConfigurations: multiple } : {}),
  });
};

/** The request as the metal provider reads it, then an address from two pools as its allocator chooses it. */
const metal: Attempt = ({ annotations = {}, spec = {} }) => {
  const loadBalancerIP = spec.loadBalancerIP as string | undefined;
  const parsed = requestFromService({ annotations, ...(loadBalancerIP ? { loadBalancerIP } : {}) });
  if (!parsed.ok)
    throw new ConfigurationError(parsed.error.reason, parsed.error.field ?? "spec", parsed.error.message, "");
  const pools = [
    pool("lan", { addresses: ["192.0.2.0/29"] }),
    pool("dmz", { addresses: ["198.51.100.0/29"] }),
  ];
  const result = new Allocator(pools).assign(metalService("shop/web"), parsed.request);
  if (!result.ok)
    throw new ConfigurationError(result.error.reason, result.error.field ?? "spec", result.error.message, "");
  return result;
};

function refusal(attempt: Attempt, example: Example): ConfigurationError | undefined {
  try {
    attempt(example);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
}

const keyOf = (f: string) => f.replace(/^metadata\.annotations\[(.*)\]$/, "$1");

function walk<I>(table: CombinationTable<I>, attempt: Attempt) {
  describe(`${table.provider}: settings that cannot work together`, () => {
    test.for(table.entries.map((e) => [e.fields.map(keyOf).join(" + "), e] as const))("%s", ([, entry]) => {
      const err = refusal(attempt, entry.example);
      expect(err, "the example is refused").toBeInstanceOf(ConfigurationError);
      expect(err!.reason).toBe(entry.reason ?? "ConflictingSettings");
      // Every field of the pair is named (checks run elsewhere name annotation keys in their prose).
      for (const f of entry.fields) expect(err!.message).toContain(entry.check ? f : keyOf(f));
      // The fix as the table states it (checks made elsewhere word their own).
      if (entry.check) expect(err!.message).toContain(entry.fix);

      // One by one, the pair's settings in the example are not refused for this pair.
      const { annotations = {}, spec = {} } = entry.example;
      const named = new Set(entry.fields.map(keyOf));
      for (const key of Object.keys(annotations).filter((k) => named.has(k))) {
        const { [key]: _, ...rest } = annotations;
        expect(refusal(attempt, { ...entry.example, annotations: rest })?.message, `without ${key}`).not.toBe(
          err!.message,
        );
      }
      for (const key of Object.keys(spec).filter((k) => named.has(`spec.${k}`))) {
        const { [key]: _, ...rest } = spec;
        expect(refusal(attempt, { ...entry.example, spec: rest })?.message, `without spec.${key}`).not.toBe(
          err!.message,
        );
      }
    });
  });
}

walk(AWS_COMBINATIONS, aws);
walk(AZURE_COMBINATIONS, azure);
walk(METAL_COMBINATIONS, metal);

test("the tables: every entry is checked somewhere, names at least two fields, and its example sets one of them", () => {
  for (const table of [
    AWS_COMBINATIONS,
    AZURE_COMBINATIONS,
    METAL_COMBINATIONS,
  ] as CombinationTable<unknown>[])
    for (const entry of table.entries) {
      expect(entry.check ?? entry.checkedIn, entry.fields.join(" + ")).toBeDefined();
      expect(new Set(entry.fields).size).toBeGreaterThanOrEqual(2);
      const set = [
        ...Object.keys(entry.example.annotations ?? {}),
        ...Object.keys(entry.example.spec ?? {}).map((k) => `spec.${k}`),
      ];
      expect(
        entry.fields.map(keyOf).some((f) => set.includes(f)),
        entry.fields.join(" + "),
      ).toBe(true);
    }
});
