// The IP families of a Service's frontends, and what each family's side of the Service asks for. As
// cloud-provider-azure does, a dual-stack Service has one frontend per family on the same load balancer, each with
// its own address (public IP, or private address of the subnet's range of that family), backend pool, probes and
// rules; the `-ipv6` annotations name the IPv6 side's address, public IP and prefix, the unsuffixed ones the IPv4
// side's. Pure.
import { AZURE_ANNOTATION_KEYS } from "./catalog.ts";
import { Address4, Address6 } from "ip-address";
import { invalidAnnotation as fail } from "../../annotationValues.ts";
import type { IpFamily } from "../names.ts";

const PREFIX_ID =
  /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Network\/publicIPPrefixes\/[^/]+$/i;
/** ARM's child names: letters, digits, `.`, `-`, `_`, starting with a letter or digit, at most 80. */
const ARM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

export interface Ipv6Settings {
  requestedAddress?: { address: string; field: string };
  publicIpName?: string;
  publicIpPrefixId?: string;
}

export function parseIpv6Settings(get: (key: string) => string | undefined, internal: boolean): Ipv6Settings {
  const a = AZURE_ANNOTATION_KEYS;
  const out: Ipv6Settings = {};
  const address = get(a.ipv6);
  if (address) {
    if (!Address6.isValid(address) || address.includes("/") || Address4.isValid(address))
      fail(a.ipv6, `"${address}" is not an IPv6 address`, "give one IPv6 address");
    out.requestedAddress = {
      address: new Address6(address).correctForm(),
      field: `metadata.annotations[${a.ipv6}]`,
    };
  }
  const name = get(a.pipNameIpv6);
  if (name) {
    if (internal) fail(a.pipNameIpv6, "names a public IP, but the Service is internal", "remove it");
    if (!ARM_NAME.test(name))
      fail(a.pipNameIpv6, `"${name}" is not a public IP name ARM allows`, "give the public IP's name");
    out.publicIpName = name;
  }
  const prefix = get(a.pipPrefixIdIpv6);
  if (prefix) {
    if (internal)
      fail(
        a.pipPrefixIdIpv6,
        "applies to a public IP, but the Service is internal",
        "remove it, or service.beta.kubernetes.io/azure-load-balancer-internal",
      );
    if (!PREFIX_ID.test(prefix))
      fail(
        a.pipPrefixIdIpv6,
        `"${prefix}" is not a public IP prefix's resource ID`,
        "give /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/publicIPPrefixes/<name>",
      );
    out.publicIpPrefixId = prefix;
  }
  return out;
}

/** Whether an address is of the family. */
export function isOfFamily(ip: string, family: IpFamily): boolean {
  return family === "IPv6" ? ip.includes(":") : !ip.includes(":");
}
