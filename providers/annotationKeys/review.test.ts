import { describe, expect, it } from "vitest";
import { TARGET_NODE_LABEL_ANNOTATIONS, SOURCE_RANGES_ANNOTATION } from "../../controller/intent.ts";
import { AWS_ANNOTATIONS } from "../aws/annotations/settings.ts";
import { AZURE_ANNOTATIONS } from "../azure/annotations/settings.ts";
import { ADDRESSES_ANNOTATIONS, POOL_ANNOTATIONS, SHARING_ANNOTATIONS } from "../../shared/request.ts";
import { ANNOTATIONS } from "../registry.ts";
import { AWS_ANNOTATION_KEYS } from "../aws/annotations/catalog.ts";
import { PORTICO_ANNOTATIONS } from "./portico.ts";
import { assembleFamilies, refusalError } from "./review.ts";
import type { KeyEntry, ProviderName } from "./types.ts";

const PROVIDERS: ProviderName[] = ["aws", "azure", "metal"];

/** A concrete key for an entry: templates get a port, a protocol or a setting filled in. */
const example = (entry: KeyEntry) =>
  entry.key.replaceAll("<port>", "8443").replaceAll("<proto>", "TCP").replaceAll("<setting>", "x");

describe("every key of every family", () => {
  for (const family of ANNOTATIONS.families) {
    for (const entry of family.entries) {
      const key = example(entry);
      it(`${key} is ${entry.status} where it is read, and not read elsewhere`, () => {
        expect(ANNOTATIONS.familyOf(key)).toBe(family);
        expect(ANNOTATIONS.entryFor(key)).toBe(entry);
        for (const provider of PROVIDERS) {
          const review = ANNOTATIONS.review({ [key]: "some value" }, provider);
          const refused = review.refused.map((f) => f.key);
          const noops = review.noops.map((f) => f.key);
          const honoured = !entry.providers || entry.providers.includes(provider);
          if (!family.providers.includes(provider)) {
            expect(refused).toEqual([]);
            expect(noops).toEqual([]);
          } else if (entry.status === "refused") {
            expect(refused).toEqual([key]);
            expect(review.refused[0]!.message).toContain(entry.summary);
          } else if (!honoured) {
            expect(refused).toEqual([key]);
            expect(review.refused[0]!.message).toMatch(/applies only with the/);
          } else if (entry.status === "noop") {
            expect(refused).toEqual([]);
            expect(noops).toEqual([key]);
            expect(review.noops[0]!.message).toContain(entry.summary);
          } else {
            expect(refused).toEqual([]);
            expect(noops).toEqual([]);
          }
        }
      });
    }
  }

  it("has no key twice and a summary for each", () => {
    const keys = ANNOTATIONS.families.flatMap((f) => f.entries.map((e) => e.key));
    expect(new Set(keys).size).toBe(keys.length);
    for (const family of ANNOTATIONS.families)
      for (const entry of family.entries) {
        expect(family.prefixes.some((p) => entry.key.startsWith(p))).toBe(true);
        expect(entry.summary.length).toBeGreaterThan(10);
      }
  });
});

describe("the catalog agrees with the parsers", () => {
  const implemented = (key: string) => ANNOTATIONS.entryFor(key)?.status === "implemented";
  it.each([
    ...Object.values(AWS_ANNOTATIONS).map((key) =>
      // The per-port prefixes, completed as a user writes them.
      key.endsWith("target-group-attributes.")
        ? `${key}443`
        : key.endsWith("listener-attributes.")
          ? `${key}TCP-443`
          : key,
    ),
    ...Object.values(AZURE_ANNOTATIONS),
    ...ADDRESSES_ANNOTATIONS,
    ...POOL_ANNOTATIONS,
    ...SHARING_ANNOTATIONS,
    ...TARGET_NODE_LABEL_ANNOTATIONS,
  ])("%s, which Portico reads, is implemented", (key) => {
    expect(implemented(key)).toBe(true);
  });

  it("leaves alone what belongs to no family", () => {
    expect(ANNOTATIONS.familyOf(SOURCE_RANGES_ANNOTATION)).toBeUndefined();
    const review = ANNOTATIONS.review(
      { [SOURCE_RANGES_ANNOTATION]: "10.0.0.0/8", "example.com/team": "a", "kubectl.kubernetes.io/x": "y" },
      "aws",
    );
    expect(review).toEqual({ refused: [], noops: [] });
  });
});

describe("keys nobody knows", () => {
  it("refuses a typo under a family's prefix and suggests the key meant", () => {
    const review = ANNOTATIONS.review(
      { "service.beta.kubernetes.io/aws-load-balancer-shceme": "internal" },
      "aws",
    );
    expect(review.refused.map((f) => f.key)).toEqual(["service.beta.kubernetes.io/aws-load-balancer-shceme"]);
    expect(review.refused[0]!.message).toContain(
      "did you mean service.beta.kubernetes.io/aws-load-balancer-scheme?",
    );
  });

  it("refuses an unknown portico.io key on every provider", () => {
    for (const provider of PROVIDERS) {
      const review = ANNOTATIONS.review({ "portico.io/target-typ": "ip" }, provider);
      expect(review.refused.map((f) => f.key)).toEqual(["portico.io/target-typ"]);
      expect(review.refused[0]!.message).toContain("did you mean portico.io/target-type?");
    }
  });

  it("says to remove a key that resembles nothing", () => {
    const review = ANNOTATIONS.review({ "metallb.io/zzzzzzzzzzzzzzzzzzzz": "x" }, "metal");
    expect(review.refused[0]!.message).toMatch(/knows; remove it$/);
  });

  it("suggests a per-port key with the key's own port", () => {
    const review = ANNOTATIONS.review(
      { "service.beta.kubernetes.io/port_80_health-probe_protcol": "Http" },
      "azure",
    );
    expect(review.refused[0]!.message).toContain(
      "did you mean service.beta.kubernetes.io/port_80_health-probe_protocol?",
    );
  });

  it("matches templates only with the placeholder's shape", () => {
    expect(ANNOTATIONS.entryFor("service.beta.kubernetes.io/port_443_no_lb_rule")?.status).toBe(
      "implemented",
    );
    expect(ANNOTATIONS.entryFor("service.beta.kubernetes.io/port_https_no_lb_rule")).toBeUndefined();
    expect(ANNOTATIONS.entryFor("service.beta.kubernetes.io/port_443_no_such_thing")).toBeUndefined();
  });
});

describe("refusalError", () => {
  it("is undefined when nothing is refused", () => {
    expect(refusalError({ refused: [], noops: [{ key: "k", message: "m" }] })).toBeUndefined();
  });

  it("names the first refused key as the field and lists the others", () => {
    const review = ANNOTATIONS.review(
      {
        "service.beta.kubernetes.io/azure-pls-create": "true",
        "service.beta.kubernetes.io/azure-load-balancer-mode": "auto",
      },
      "azure",
    );
    const err = refusalError(review)!;
    expect(err.reason).toBe("UnsupportedAnnotation");
    expect(err.field).toBe("metadata.annotations[service.beta.kubernetes.io/azure-load-balancer-mode]");
    expect(err.message).toContain("also metadata.annotations[service.beta.kubernetes.io/azure-pls-create]");
    expect(err.message).toContain("Private Link services are not offered");
  });
});

describe("refusals name the right owner of each key", () => {
  it("an unknown key under Portico's own prefix is one Portico does not know (Portico alone)", () => {
    const [finding] = ANNOTATIONS.review({ "portico.io/no-such-setting": "x" }, "aws").refused;
    expect(finding!.message).toMatch(/^is not an annotation Portico knows/);
    expect(finding!.message).not.toContain("Portico or Portico");
  });

  it("an unknown key of another family is one neither its owner nor Portico knows", () => {
    const [finding] = ANNOTATIONS.review(
      { "service.beta.kubernetes.io/azure-no-such": "x" },
      "azure",
    ).refused;
    expect(finding!.message).toMatch(/^is not an annotation cloud-provider-azure or Portico knows/);
  });

  it("keys cloud-provider-azure documents are known to it: refused for what Portico does not offer, not as typos", () => {
    for (const key of [
      "service.beta.kubernetes.io/azure-shared-securityrule",
      "service.beta.kubernetes.io/azure-load-balancer-mixed-protocols",
    ]) {
      const [finding] = ANNOTATIONS.review({ [key]: "true" }, "azure").refused;
      expect(finding!.message, key).toMatch(/^is not supported: /);
      expect(finding!.message, key).not.toMatch(/is not an annotation/);
    }
  });
});

describe("the catalog assembled from the providers' declarations", () => {
  const family = (anchor: string) => ({ anchor, prefixes: [`${anchor}/`], entries: [] });
  const shared = { key: "portico.io/shared", status: "implemented" as const, summary: "both honour it" };
  const own = { key: "portico.io/own", status: "implemented" as const, summary: "one honours it" };
  const families = assembleFamilies([
    { name: "one", annotations: { families: [family("a"), family("b")], porticoKeys: [shared, own] } },
    { name: "two", annotations: { families: [family("b")], porticoKeys: [shared] } },
  ]);

  it("gives each family the providers that declare it, a family two declare to both", () => {
    expect(families.map((f) => [f.anchor, f.providers])).toEqual([
      ["a", ["one"]],
      ["b", ["one", "two"]],
      ["Portico", ["one", "two"]],
    ]);
  });

  it("marks each of Portico's keys with the providers that honour it, and keeps the keys every one honours", () => {
    const portico = families.find((f) => f.anchor === "Portico")!;
    expect(portico.entries.find((e) => e.key === "portico.io/shared")?.providers).toEqual(["one", "two"]);
    expect(portico.entries.find((e) => e.key === "portico.io/own")?.providers).toEqual(["one"]);
    const managedBy = portico.entries.find((e) => e.key === PORTICO_ANNOTATIONS.managedBy);
    expect(managedBy).toBeDefined();
    expect(managedBy?.providers).toBeUndefined();
  });

  it("names LBC's target-node key as the AWS catalog spells it", () => {
    expect(TARGET_NODE_LABEL_ANNOTATIONS).toContain(AWS_ANNOTATION_KEYS.targetNodeLabels);
  });
});
