// The IAM policy in manifests/ lists exactly the actions the AWS provider calls: nothing missing (the
// provider would fail in a real account), nothing extra (least privilege).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const SERVICE_OF_CLIENT: Record<string, string> = {
  "@aws-sdk/client-acm": "acm",
  "@aws-sdk/client-elastic-load-balancing-v2": "elasticloadbalancing",
  "@aws-sdk/client-ec2": "ec2",
  "@aws-sdk/client-resource-groups-tagging-api": "tag",
};
/** Tagging on create is authorised as a separate action. */
const IMPLIED = ["elasticloadbalancing:AddTags", "ec2:CreateTags"];

function actionsCalled(): Set<string> {
  const dir = join(root, "providers", "aws");
  const actions = new Set<string>();
  // Every source file of the provider, in its subfolders too.
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".test.ts"),
  );
  for (const file of files) {
    const source = readFileSync(join(dir, file), "utf8");
    for (const [, names, module] of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
      const service = SERVICE_OF_CLIENT[module!];
      if (!service) continue;
      for (const name of names!.split(",").map((n) => n.trim())) {
        // A command sent itself, or read page by page through the SDK's paginator for it.
        const sent = /^(\w+)Command$/.exec(name)?.[1];
        if (sent && new RegExp(`new ${sent}Command\\(`).test(source)) actions.add(`${service}:${sent}`);
        const paged = /^paginate(\w+)$/.exec(name)?.[1];
        if (paged && new RegExp(`paginate${paged}\\(`).test(source)) actions.add(`${service}:${paged}`);
      }
    }
  }
  return actions;
}

test("the IAM policy grants exactly the actions the provider calls", () => {
  const policy = JSON.parse(readFileSync(join(root, "manifests", "aws", "iam-policy.json"), "utf8")) as {
    Statement: { Action: string[] }[];
  };
  const granted = new Set(policy.Statement.flatMap((s) => s.Action));
  const called = actionsCalled();
  expect(called.size).toBeGreaterThan(20);
  // An implied action may also be called on its own (AddTags, when taking over the AWS Load Balancer Controller's).
  expect([...granted].filter((a) => !IMPLIED.includes(a) || called.has(a)).sort()).toEqual(
    [...called].sort(),
  );
});
