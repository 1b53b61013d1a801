// Azure's documented networking limits, as the emulator enforces them. The defaults are the values Azure documents
// ("Azure subscription and service limits": Load balancer limits for a Standard load balancer, Networking limits
// for security groups, Public IP address limits); tests set small ones to reach a limit with a few resources.
import type { Limits } from "./kinds.ts";

export const DOCUMENTED_LIMITS: Readonly<Limits> = {
  frontendIPConfigurationsPerLoadBalancer: 600,
  rulesPerLoadBalancer: 1500,
  rulesPerBackendAddress: 300,
  addressesPerBackendPool: 5000,
  backendAddressesPerFrontend: 10_000,
  backendAddressesPerLoadBalancer: 500_000,
  securityRulesPerGroup: 1000,
  addressPrefixesPerSecurityGroup: 4000,
  // The default varies by offer; 1000 is the one Azure documents for Enterprise Agreement subscriptions.
  publicIpAddressesPerRegion: 1000,
};

/** Where a Basic load balancer's documented limit is lower than a Standard one's. */
const BASIC_LIMITS: Partial<Limits> = {
  frontendIPConfigurationsPerLoadBalancer: 200,
  rulesPerLoadBalancer: 250,
  addressesPerBackendPool: 300,
};

/** `name=N,name=N`: overrides of the documented limits, from the environment or the command line. */
export const LIMITS_ENV = "PORTICO_AZURE_EMULATOR_LIMITS";

export function parseLimits(text: string | undefined): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const part of (text ?? "").split(",")) {
    if (!part.trim()) continue;
    const [key, value, extra] = part.split("=").map((s) => s.trim());
    if (extra !== undefined || value === undefined) throw new Error(`"${part}": limits are name=N`);
    Object.assign(out, validateLimits({ [key!]: Number(value) }));
  }
  return out;
}

/** Checks an override given as JSON (control API) or parsed text: known names, whole numbers of 0 or more. */
export function validateLimits(input: unknown): Partial<Limits> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new Error('"limits" must be an object of limit names and numbers');
  const out: Partial<Limits> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(key in DOCUMENTED_LIMITS))
      throw new Error(`"${key}" is not a limit; known: ${Object.keys(DOCUMENTED_LIMITS).join(", ")}`);
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
      throw new Error(`limit "${key}" must be a whole number of 0 or more (0: not checked)`);
    out[key as keyof Limits] = value;
  }
  return out;
}

/** The limit that applies to a resource of `sku`, or undefined when the check is off. */
export function limitFor(limits: Limits, name: keyof Limits, sku?: string): number | undefined {
  const configured = limits[name];
  if (configured === 0) return undefined;
  const basic = sku === "Basic" ? BASIC_LIMITS[name] : undefined;
  return basic === undefined ? configured : Math.min(configured, basic);
}
