import { describe, expect, test } from "vitest";
import { DEFAULT_EXCLUDED_INTERFACES, matchesGlob, selectInterfaces } from "./interfaces.ts";

const iface = (name: string, extra: Partial<{ loopback: boolean; ethernet: boolean }> = {}) => ({
  name,
  loopback: false,
  ethernet: true,
  ...extra,
});

const names = (list: { name: string }[]) => list.map((i) => i.name);

describe("interface selection", () => {
  const host = [
    iface("lo", { loopback: true, ethernet: false }),
    iface("eth0"),
    iface("eth1"),
    iface("bond0.100"),
    iface("veth1a2b"),
    iface("docker0"),
    iface("cni0"),
    iface("flannel.1"),
    iface("cali123"),
    iface("kube-ipvs0"),
    iface("cilium_host"),
    iface("wg0", { ethernet: false }),
  ];

  test("by default takes every Ethernet interface, except container networking", () => {
    expect(names(selectInterfaces(host, { include: [], exclude: DEFAULT_EXCLUDED_INTERFACES }))).toEqual([
      "eth0",
      "eth1",
      "bond0.100",
    ]);
  });

  test("an include list narrows the choice and still honours exclusions for globs", () => {
    expect(
      names(selectInterfaces(host, { include: ["eth*", "c*"], exclude: DEFAULT_EXCLUDED_INTERFACES })),
    ).toEqual(["eth0", "eth1"]);
  });

  test("an interface named exactly is used even when an exclusion matches it", () => {
    expect(
      names(selectInterfaces(host, { include: ["veth1a2b"], exclude: DEFAULT_EXCLUDED_INTERFACES })),
    ).toEqual(["veth1a2b"]);
  });

  test("never a loopback or non-Ethernet interface, even when named", () => {
    expect(names(selectInterfaces(host, { include: ["lo", "wg0"], exclude: [] }))).toEqual([]);
  });

  test("globs match whole names and treat other characters literally", () => {
    expect(matchesGlob("flannel.1", "flannel*")).toBe(true);
    expect(matchesGlob("xflannel", "flannel*")).toBe(false);
    expect(matchesGlob("eth0", "eth?")).toBe(true);
    expect(matchesGlob("eth10", "eth?")).toBe(false);
    expect(matchesGlob("bond0x100", "bond0.100")).toBe(false);
  });
});
