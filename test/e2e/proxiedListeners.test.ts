// The NLB listeners the kernel cannot carry, end to end: a TLS listener ends the client's TLS with the certificate
// named by its ACM ARN and passes plain HTTP on to the pods; a target group with proxy protocol v2 puts the
// client's address in a header ahead of its bytes, which the pods read on a port that refuses requests without
// one. Both carried by the emulated edge (its listener proxy) as the NLB Portico configured says.
import { onTestFinished } from "vitest";
import { issueCertificate } from "../harness/cloudEdge/certificates.ts";
import { eksOnEmulator, nlbAddress } from "../harness/cloudEdge/eksOnEmulator.ts";
import { describe, expect, getFrom, test, waitFor, WORKLOAD_PROXY_PORT } from "../harness/e2e.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const NLB = { loadBalancerClass: "portico.io/aws-nlb" };
const IP_TARGETS = {
  [`${A}nlb-target-type`]: "ip",
  [`${A}healthcheck-interval`]: "5",
  [`${A}healthcheck-healthy-threshold`]: "2",
};
const NAME = "web.example.test";

describe("NLB listeners carried by the edge's proxy", () => {
  test("TLS ends at the NLB with the ACM certificate; proxy protocol v2 tells the pod the client's address", async ({
    ns,
  }) => {
    const { edge: started } = await eksOnEmulator(ns, { dataPlane: true, defer: onTestFinished });
    const edge = started!;
    const certificate = await issueCertificate(edge, NAME, onTestFinished);
    await ns.deployEcho("echo", 1);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer(
      "secure",
      "echo",
      { ...NLB, ports: [{ name: "https", port: 443, targetPort: 8080, protocol: "TCP" }] },
      { ...IP_TARGETS, [`${A}ssl-cert`]: certificate.arn, [`${A}ssl-ports`]: "https" },
    );
    await ns.createLoadBalancer(
      "proxied",
      "echo",
      { ...NLB, ports: [{ name: "http", port: 80, targetPort: WORKLOAD_PROXY_PORT, protocol: "TCP" }] },
      { ...IP_TARGETS, [`${A}proxy-protocol`]: "*" },
    );
    const client = ns.context.client;

    // The client trusts only the issued certificate, for the name it asks for: the NLB presented it.
    const secure = await nlbAddress(ns, edge, "secure");
    const overTls = await waitFor(
      "an answer over TLS",
      async () =>
        (await getFrom(client.namespace, `https://${NAME}/`, 3, [
          "--cacert",
          certificate.certificateFile,
          "--resolve",
          `${NAME}:443:${secure}`,
        ])) ?? undefined,
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    expect(overTls.pod).toMatch(/^echo-/);
    // The negative control: the same listener, a client that does not trust the certificate, refused.
    expect(
      await getFrom(client.namespace, `https://${NAME}/`, 3, ["--resolve", `${NAME}:443:${secure}`]),
    ).toBeUndefined();

    // The pod's proxy-protocol port answers only behind a header; the header names the client, the connection
    // comes from the NLB.
    const proxiedAddress = await nlbAddress(ns, edge, "proxied");
    const behindHeader = await waitFor(
      "an answer behind a proxy protocol header",
      async () => (await getFrom(client.namespace, `http://${proxiedAddress}/`)) ?? undefined,
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    expect(behindHeader.client.replace(/:\d+$/, "")).toBe(client.ipv4);
    expect(behindHeader.peer?.replace(/:\d+$/, "")).toBe(proxiedAddress);
  });
});
