import { describe, expect, it } from "vitest";
import { AZURE_PORT_KEY_PREFIX, AZURE_PORT_SETTINGS } from "./catalog.ts";
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { AZURE_ANNOTATIONS } from "./settings.ts";
import { desired, intent } from "../../../test/unit/support/azure.ts";

/** A value each per-port setting accepts, so that only the port it names can be wrong. */
const VALID: Record<string, string> = {
  "health-probe_protocol": "Http",
  "health-probe_port": "10254",
  "health-probe_request-path": "/healthz",
  "health-probe_interval": "10",
  "health-probe_num-of-probe": "3",
  no_lb_rule: "false",
  no_probe_rule: "false",
};

function refusal(i: LoadBalancerIntent): ConfigurationError {
  try {
    desired(i);
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected the Service to be refused");
}

const TWO_PORTS: LoadBalancerIntent["ports"] = [
  { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
  { name: "dns", protocol: "UDP", port: 53, nodePort: 30053 },
];

describe("per-port annotations name ports the Service has", () => {
  it("knows a valid value for every per-port setting of the catalog", () => {
    expect(Object.keys(VALID).sort()).toEqual([...AZURE_PORT_SETTINGS].sort());
  });

  it.each(AZURE_PORT_SETTINGS)(
    "port_8443_%s on a Service of ports 80 and 53 is refused, naming the key",
    (setting) => {
      const key = `${AZURE_PORT_KEY_PREFIX}8443_${setting}`;
      const err = refusal(intent({ ports: TWO_PORTS, annotations: { [key]: VALID[setting]! } }));
      expect(err.reason).toBe("InvalidAnnotation");
      expect(err.field).toBe(`metadata.annotations[${key}]`);
      expect(err.message).toContain("the Service has no port 8443");
      expect(err.fix).toBe("name one of its ports (80, 53), or remove the annotation");
    },
  );

  it.each(AZURE_PORT_SETTINGS)("port_80_%s and port_53_%s on that Service are taken", (setting) => {
    const annotations = {
      // A path needs an HTTP probe.
      [AZURE_ANNOTATIONS.probeProtocol]: "Http",
      ...Object.fromEntries(
        [80, 53].map((port) => [`${AZURE_PORT_KEY_PREFIX}${port}_${setting}`, VALID[setting]!]),
      ),
    };
    expect(() => desired(intent({ ports: TWO_PORTS, annotations }))).not.toThrow();
  });

  it("reads the port as cloud-provider-azure writes it: port_080_ is not port 80's key", () => {
    const key = `${AZURE_PORT_KEY_PREFIX}080_health-probe_protocol`;
    const err = refusal(intent({ annotations: { [key]: "Http" } }));
    expect(err.field).toBe(`metadata.annotations[${key}]`);
    expect(err.message).toContain("the Service has no port 080");
  });

  it("names the first key in order when several name missing ports, and is not fooled by a right one beside them", () => {
    const err = refusal(
      intent({
        annotations: {
          [`${AZURE_PORT_KEY_PREFIX}80_health-probe_protocol`]: "Http",
          [`${AZURE_PORT_KEY_PREFIX}9000_no_probe_rule`]: "true",
          [`${AZURE_PORT_KEY_PREFIX}8443_health-probe_request-path`]: "/ready",
        },
      }),
    );
    expect(err.field).toBe(`metadata.annotations[${AZURE_PORT_KEY_PREFIX}8443_health-probe_request-path]`);
  });
});
