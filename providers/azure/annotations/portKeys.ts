// Per-port annotations (`service.beta.kubernetes.io/port_<port>_<setting>`) name a Service port by its number, as
// cloud-provider-azure builds each key from spec.ports[].port. One naming a port the Service does not have would
// do nothing at all: a typo, or a port renumbered since the annotation was written, leaves the setting unapplied
// with no sign of it. So every such key, whatever its setting, must name one of the Service's ports, written as
// cloud-provider-azure writes it (`port_080_` is not port 80's key); otherwise the Service is refused, naming the
// key and its ports, in the shape the AWS per-port keys are refused in.
import { AZURE_PORT_KEY_PREFIX } from "./catalog.ts";
import { ConfigurationError } from "../../errors.ts";
import type { PortIntent } from "../../provider.ts";

/** Throws for the first per-port key (in key order) whose port number is none of `ports`. */
export function assertPortKeysNamePorts(
  annotations: Readonly<Record<string, string>>,
  ports: readonly PortIntent[],
): void {
  const numbers = [...new Set(ports.map((p) => String(p.port)))];
  for (const key of Object.keys(annotations).sort()) {
    if (!key.startsWith(AZURE_PORT_KEY_PREFIX)) continue;
    // A key without a number is no per-port key cloud-provider-azure knows: the annotation review refuses it.
    const named = /^(\d+)_/.exec(key.slice(AZURE_PORT_KEY_PREFIX.length))?.[1];
    if (named === undefined || numbers.includes(named)) continue;
    throw new ConfigurationError(
      "InvalidAnnotation",
      `metadata.annotations[${key}]`,
      `the Service has no port ${named}`,
      `name one of its ports (${numbers.join(", ")}), or remove the annotation`,
    );
  }
}
