// A TLS listener's certificates beyond its default one (ELBv2 keeps them in a separate list, served by SNI), and
// a listener's attributes: read back so that a no-change resync writes nothing, and changed one call each.
import {
  AddListenerCertificatesCommand,
  DescribeListenerAttributesCommand,
  ModifyListenerAttributesCommand,
  RemoveListenerCertificatesCommand,
  paginateDescribeListenerCertificates,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { eachPage, call, type AwsClients } from "../clients.ts";

/** The certificates of a listener other than its default one. */
export async function extraCertificates(clients: AwsClients, listenerArn: string): Promise<string[]> {
  const out: string[] = [];
  await eachPage(
    "elbv2:DescribeListenerCertificates",
    paginateDescribeListenerCertificates({ client: clients.elbv2 }, { ListenerArn: listenerArn }),
    (page) => {
      for (const c of page.Certificates ?? [])
        if (!c.IsDefault && c.CertificateArn) out.push(c.CertificateArn);
    },
  );
  return out.sort();
}

export async function changeListenerCertificates(
  clients: AwsClients,
  kind: "addListenerCertificates" | "removeListenerCertificates",
  listenerArn: string,
  certificateArns: string[],
): Promise<void> {
  const Certificates = certificateArns.map((CertificateArn) => ({ CertificateArn }));
  if (kind === "addListenerCertificates")
    await call("elbv2:AddListenerCertificates", () =>
      clients.elbv2.send(new AddListenerCertificatesCommand({ ListenerArn: listenerArn, Certificates })),
    );
  else
    await call("elbv2:RemoveListenerCertificates", () =>
      clients.elbv2.send(new RemoveListenerCertificatesCommand({ ListenerArn: listenerArn, Certificates })),
    );
}

export async function listenerAttributes(
  clients: AwsClients,
  listenerArn: string,
): Promise<Record<string, string>> {
  const out = await call("elbv2:DescribeListenerAttributes", () =>
    clients.elbv2.send(new DescribeListenerAttributesCommand({ ListenerArn: listenerArn })),
  );
  return Object.fromEntries((out.Attributes ?? []).map((a) => [a.Key!, a.Value ?? ""]));
}

export async function setListenerAttributes(
  clients: AwsClients,
  listenerArn: string,
  attributes: Record<string, string>,
): Promise<void> {
  await call("elbv2:ModifyListenerAttributes", () =>
    clients.elbv2.send(
      new ModifyListenerAttributesCommand({
        ListenerArn: listenerArn,
        Attributes: Object.entries(attributes).map(([Key, Value]) => ({ Key, Value })),
      }),
    ),
  );
}
