import type { V1Service } from "@kubernetes/client-node";
import { expect, test } from "vitest";
import type { LoadBalancerProvider, SecurityRuleDrift } from "../providers/provider.ts";
import { silentLogger } from "../shared/log.ts";
import { checkSecurityRules, SECURITY_RULES_CHANGED } from "./securityRuleCheck.ts";

const svc = (name: string, uid: string): V1Service => ({ metadata: { namespace: "shop", name, uid } });

test("each Service found changed is told in a Warning Event; those the check did not restore are to be reconciled; one replaced since is left to its own pass", async () => {
  const drifted: SecurityRuleDrift[] = [
    {
      service: { namespace: "shop", name: "web", uid: "u1" },
      differences: ["a gone", "b added"],
      restored: false,
    },
    { service: { namespace: "shop", name: "api", uid: "u2" }, differences: ["c gone"], restored: true },
    { service: { namespace: "shop", name: "old", uid: "u3" }, differences: ["d gone"], restored: false },
  ];
  const provider = { checkSecurityRules: () => Promise.resolve(drifted) } as unknown as LoadBalancerProvider;
  const cache = new Map([
    ["shop/web", svc("web", "u1")],
    ["shop/api", svc("api", "u2")],
    // Deleted and made again under the same name: another Service.
    ["shop/old", svc("old", "u4")],
  ]);
  const recorded: [string, string, string, string][] = [];
  const out = await checkSecurityRules({
    provider,
    service: (key) => cache.get(key),
    events: {
      record: (s, type, reason, message) => {
        recorded.push([s.metadata!.name!, type, reason, message]);
        return Promise.resolve();
      },
    },
    log: silentLogger(),
  });
  expect(out).toEqual({ drifted, reconcile: ["shop/web"] });
  expect(recorded).toEqual([
    [
      "web",
      "Warning",
      SECURITY_RULES_CHANGED,
      "security rules Portico made were changed outside it: a gone; b added; restoring them now",
    ],
    [
      "api",
      "Warning",
      SECURITY_RULES_CHANGED,
      "security rules Portico made were changed outside it: c gone; restored",
    ],
  ]);
});

test("a provider without security rules is never asked", async () => {
  const out = await checkSecurityRules({
    provider: {} as LoadBalancerProvider,
    service: () => undefined,
    events: { record: () => Promise.reject(new Error("no event expected")) },
    log: silentLogger(),
  });
  expect(out).toEqual({ drifted: [], reconcile: [] });
});
