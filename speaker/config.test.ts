import { describe, expect, test } from "vitest";
import { OPTION_NAMES, parseConfig, USAGE } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";
import { usageGaps } from "../test/unit/support/usage.ts";

describe("speaker flags", () => {
  test("defaults, with the node name from the environment as a DaemonSet passes it", () => {
    const config = parseConfig([], { NODE_NAME: "worker-1" });
    expect(config).toMatchObject({
      nodeName: "worker-1",
      loadBalancerClass: "portico.io/metal",
      defaultForUnclassed: false,
      interfaces: [],
      metricsAddress: ":7472",
      memberlist: { port: 7946, intervalMs: 100, timeoutMs: 500, fanout: 2 },
      gratuitous: { burstOffsetsMs: [0, 500, 1000], periodicMs: 0 },
      maxRepliesPerSecond: 5000,
    });
    expect(config.excludeInterfaces).toContain("veth*");
    expect(config.memberlist.secret).toBeUndefined();
  });

  test("flags override the environment and defaults", () => {
    const config = parseConfig(
      [
        "--node-name=n1",
        "--interfaces=eth0, bond0.100",
        "--exclude-interfaces=",
        "--default-load-balancer",
        "--memberlist-port=8000",
        "--memberlist-interval-ms=50",
        "--memberlist-timeout-ms=200",
        "--gratuitous-interval-ms=30000",
      ],
      { NODE_NAME: "ignored", MEMBERLIST_SECRET: "s3cret" },
    );
    expect(config).toMatchObject({
      nodeName: "n1",
      interfaces: ["eth0", "bond0.100"],
      excludeInterfaces: [],
      defaultForUnclassed: true,
      memberlist: { port: 8000, intervalMs: 50, timeoutMs: 200 },
      gratuitous: { periodicMs: 30000 },
    });
    expect(config.memberlist.secret?.toString()).toBe("s3cret");
  });

  test("mistakes are usage errors that say what is wrong", () => {
    expect(() => parseConfig([], {})).toThrow(/--node-name/);
    expect(() => parseConfig(["--node-name=a", "--memberlist-port=x"], {})).toThrow(UsageError);
    expect(() => parseConfig(["--node-name=a", "--memberlist-timeout-ms=150"], {})).toThrow(/twice/);
    expect(() => parseConfig(["--node-name=a", "--bogus"], {})).toThrow(UsageError);
    expect(() => parseConfig(["--node-name=a", "--metallb=yes"], {})).toThrow(
      /--metallb: expected auto, on or off/,
    );
    expect(() => parseConfig(["--node-name=a", "--metrics-address=localhost"], {})).toThrow(
      /--metrics-address: localhost is not a listen address/,
    );
  });

  test("--metrics-address takes an IPv6 host in brackets", () => {
    const config = parseConfig(["--node-name=a", "--metrics-address=[::1]:7472"], {});
    expect(config.metricsAddress).toBe("[::1]:7472");
  });

  test("MetalLB's objects are read when installed, in metallb-system, unless told otherwise", () => {
    expect(parseConfig(["--node-name=a"], {}).metallb).toEqual({ mode: "auto", namespace: "metallb-system" });
    expect(parseConfig(["--node-name=a", "--metallb=off", "--metallb-namespace=lb"], {}).metallb).toEqual({
      mode: "off",
      namespace: "lb",
    });
  });
});

test("--help lists every option the speaker accepts, and none it refuses", () => {
  expect(usageGaps(USAGE, OPTION_NAMES)).toEqual({ unlisted: [], refused: [] });
});
