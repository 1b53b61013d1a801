import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";

// The set-up installs the tests' programs from Debian's packages, but the tests start each of them themselves inside
// their own namespaces: none may be left to start as a service of the machine at its next boot.
const cache = process.env.PORTICO_CACHE ?? join(import.meta.dirname, "../../.cache");
const record = join(cache, "host-packages");

function unitsOf(pkg: string): string[] {
  const files = execFileSync("dpkg", ["-L", pkg], { encoding: "utf8" }).split("\n");
  return files
    .filter((f) => /^(\/usr)?\/lib\/systemd\/system\/[^/@]+\.(service|timer|socket)$/.test(f))
    .map((f) => f.slice(f.lastIndexOf("/") + 1));
}

function enabled(unit: string): boolean {
  try {
    return (
      execFileSync("systemctl", ["--root=/", "is-enabled", unit], { encoding: "utf8" }).trim() === "enabled"
    );
  } catch {
    return false; // is-enabled exits non-zero for disabled units
  }
}

test("the packages the set-up installed left no service enabled on the machine", () => {
  if (!existsSync(record)) {
    // Nothing was installed: every program the tests use was on the machine before.
    for (const bin of ["/usr/lib/frr/bgpd", "/usr/lib/frr/frr-reload.py", "/usr/lib/cni/bridge"]) {
      expect(existsSync(bin), bin).toBe(true);
    }
    return;
  }
  const packages = readFileSync(record, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("package "))
    .map((line) => line.slice("package ".length));
  expect(packages.length).toBeGreaterThan(0);
  const units = packages.flatMap(unitsOf);
  // FRR and containerd ship their services: the record would be empty of units only if the check itself broke.
  if (packages.includes("frr")) expect(units).toContain("frr.service");
  expect(units.filter(enabled)).toEqual([]);
});
