// What a Service asks of its public IP beyond its name: ARM tags, a DNS label (`<label>.<region>.cloudapp.azure.com`)
// and IP tags (e.g. RoutingPreference=Internet). Parsed and validated here; ../publicIps/choice.ts decides what they mean
// for a public IP Portico makes and for one of the user's.
import { AZURE_ANNOTATION_KEYS } from "./catalog.ts";
import { invalidAnnotation as fail, keyValuePairs, splitList as list } from "../../annotationValues.ts";

/** `/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Network/publicIPPrefixes/<name>`. */
const PREFIX_ID =
  /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/publicIPPrefixes\/[^/]+$/i;

/** ARM's rule for a domain name label, as its InvalidDomainNameLabel error states it. */
export const DNS_LABEL = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;

export interface IpTag {
  ipTagType: string;
  tag: string;
}

export interface PublicIpSettings {
  publicIpTags: Record<string, string>;
  dnsLabel?: string;
  /** Sorted by type, then tag, so that equal sets compare equal. */
  ipTags: IpTag[];
  /** The public IP prefix Portico's public IP is allocated from. */
  publicIpPrefixId?: string;
}

export function parsePublicIpSettings(
  get: (key: string) => string | undefined,
  internal: boolean,
): PublicIpSettings {
  const a = AZURE_ANNOTATION_KEYS;
  const settings: PublicIpSettings = {
    publicIpTags: keyValuePairs(a.pipTags, get(a.pipTags), (key) => {
      if (/[<>%&\\?/]/.test(key) || key.toLowerCase().startsWith("portico.io"))
        fail(a.pipTags, `"${key}" cannot be a tag name`, "avoid < > % & \\ ? / and Portico's own tag names");
    }),
    ipTags: parseIpTags(get(a.ipTags)),
  };
  const label = get(a.dnsLabelName);
  if (label) {
    if (!DNS_LABEL.test(label))
      fail(
        a.dnsLabelName,
        `"${label}" is not a DNS label Azure accepts`,
        "use 3 to 63 lower-case letters, digits and '-', starting with a letter and not ending with '-'",
      );
    settings.dnsLabel = label;
  }
  const prefixId = get(a.pipPrefixId);
  if (prefixId) {
    if (!PREFIX_ID.test(prefixId))
      fail(
        a.pipPrefixId,
        `"${prefixId}" is not a public IP prefix's resource ID`,
        "give /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/publicIPPrefixes/<name>",
      );
    settings.publicIpPrefixId = prefixId;
  }
  // An internal frontend has no public IP to carry these; cloud-provider-azure ignores them there.
  if (internal)
    for (const key of [a.dnsLabelName, a.ipTags, a.pipPrefixId])
      if (get(key))
        fail(
          key,
          "applies to a public IP, but the Service is internal",
          "remove it, or service.beta.kubernetes.io/azure-load-balancer-internal",
        );
  return settings;
}

/** `RoutingPreference=Internet,FirstPartyUsage=/Unprivileged`: one type may appear once. */
function parseIpTags(value: string | undefined): IpTag[] {
  const a = AZURE_ANNOTATION_KEYS;
  const out: IpTag[] = [];
  for (const pair of list(value)) {
    const i = pair.indexOf("=");
    const ipTagType = pair.slice(0, Math.max(i, 0)).trim();
    const tag = pair.slice(i + 1).trim();
    if (i <= 0 || !ipTagType || !tag)
      fail(a.ipTags, `"${pair}" is not type=tag`, 'write pairs such as "RoutingPreference=Internet"');
    if (out.some((t) => t.ipTagType.toLowerCase() === ipTagType.toLowerCase()))
      fail(a.ipTags, `names ${ipTagType} twice`, "give each IP tag type once");
    out.push({ ipTagType, tag });
  }
  return sortIpTags(out);
}

export function sortIpTags(tags: IpTag[]): IpTag[] {
  return [...tags].sort((x, y) => x.ipTagType.localeCompare(y.ipTagType) || x.tag.localeCompare(y.tag));
}

/** Whether two IP tag sets are the same (ARM may return them in any order and case of type). */
export function sameIpTags(a: IpTag[], b: IpTag[]): boolean {
  const key = (tags: IpTag[]) =>
    JSON.stringify(sortIpTags(tags.map((t) => ({ ipTagType: t.ipTagType.toLowerCase(), tag: t.tag }))));
  return key(a) === key(b);
}
