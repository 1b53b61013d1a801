// A Service's sides: one desired state per IP family of its frontends (annotations/ipFamilies.ts), each with the public IP
// chosen for it. Pure, and every side is described (and any refused) before anything is written for any of them.
import type { LoadBalancerIntent, Notice } from "../../provider.ts";
import type { AzureServiceSettings } from "../annotations/settings.ts";
import type { AzureConfig } from "../config.ts";
import { desiredService } from "./desired.ts";
import { frontendFamilies, settingsForFamily } from "../annotations/familySettings.ts";
import type { DesiredService, Network, PublicIPAddress } from "../model.ts";
import type { IpFamily } from "../names.ts";
import { choosePublicIp } from "../publicIps/choice.ts";

export const FAMILIES: readonly IpFamily[] = ["IPv4", "IPv6"];

export function desiredSides(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  ctx: { cluster: string; config: AzureConfig; network: Network; loadBalancerBase?: string },
  publicIps: PublicIPAddress[],
): DesiredService[] {
  const families = frontendFamilies(intent, settings);
  return families.map((family) => {
    const own = settingsForFamily(settings, family, families[0]!);
    const publicIp = choosePublicIp(own, intent.service, ctx, publicIps, family);
    return desiredService(intent, own, { ...ctx, family, ...(publicIp ? { publicIp } : {}) });
  });
}

/** The families a Service with these sides does not have: what is left of them is removed. */
export function droppedFamilies(sides: DesiredService[]): IpFamily[] {
  return FAMILIES.filter((f) => !sides.some((d) => d.family === f));
}

/**
 * What the user should hear about the sides: a family whose frontend no source may reach, because the Service's
 * source ranges are all of the other family (Kubernetes' loadBalancerSourceRanges semantics: only the listed
 * sources are let in, so that frontend is shut, which is rarely what was meant).
 */
export function sideNotices(sides: DesiredService[]): Notice[] {
  if (sides.length < 2) return [];
  return sides
    .filter((d) => d.rules.length && d.securityRules && !d.securityRules.some((r) => r.access === "Allow"))
    .map((d) => ({
      type: "Warning",
      reason: "FamilyClosed",
      message:
        `the ${d.family} frontend lets no source in: the Service's source ranges are all of the other family; ` +
        `add ${d.family} ranges to allow ${d.family} clients`,
    }));
}
