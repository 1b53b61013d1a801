import { mkdir, readFile, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import { createCertificateAuthority, createServiceAccountKeys, issueCertificate } from "./pki.ts";
import { egressSelectorConfig } from "./localCluster/apiserverEgress.ts";
import { ManagedProcess } from "./processes.ts";
import { freePort } from "./ports.ts";

export const SERVICE_CIDR = "10.96.0.0/16";
/** Dual-stack, so Services may ask for both families (PreferDualStack, RequireDualStack). */
export const SERVICE_CIDR_V6 = "fd00:10:96::/112";
export const NODE_PORT_RANGE = "30000-32767";

export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
}

export interface ControlPlaneOptions {
  /** More names and addresses the apiserver's certificate is valid for (where nodes and pods reach it). */
  servingHosts?: string[];
  /**
   * Authorize kubelets as a real cluster does: the Node authorizer before RBAC and the NodeRestriction
   * admission plugin, so each kubelet can touch only its own Node and the pods bound to it.
   */
  nodeAuthorization?: boolean;
  /**
   * Reach the kubelets (exec, logs, port-forward) at their InternalIP with a client certificate of the
   * apiserver's own, dialling through an HTTP CONNECT proxy on this Unix socket (the nodes are on a network
   * this namespace has no route to: localCluster/apiserverEgress.ts).
   */
  kubeletEgressSocket?: string;
  /**
   * kube-apiserver's admission configuration (`--admission-control-config-file`), e.g. the PodSecurity plugin's
   * cluster-wide level (localCluster/podSecurity.ts). Without it PodSecurity enforces nothing by default.
   */
  admissionConfig?: string;
}

/**
 * A real Kubernetes control plane on loopback: etcd and kube-apiserver with generated certificates, RBAC
 * authorization, service-account token signing, a service CIDR and a NodePort range. Alone (as the
 * integration tests run it) there is no kubelet and no controller-manager: tests create Nodes and
 * EndpointSlices themselves. The local cluster (localCluster/) adds them.
 */
export class ControlPlane {
  readonly dir: string;
  readonly server: string;
  readonly kubeconfig: string;
  private readonly etcd: ManagedProcess;
  private apiserver: ManagedProcess;
  private readonly apiserverArgs: string[];
  private readonly binaries: ControlPlaneBinaries;

  private constructor(parts: {
    dir: string;
    server: string;
    etcd: ManagedProcess;
    apiserver: ManagedProcess;
    apiserverArgs: string[];
    binaries: ControlPlaneBinaries;
  }) {
    ({ dir: this.dir, server: this.server, etcd: this.etcd, apiserver: this.apiserver } = parts);
    ({ apiserverArgs: this.apiserverArgs, binaries: this.binaries } = parts);
    this.kubeconfig = join(this.dir, "kubeconfig");
  }

  static async start(
    binaries: ControlPlaneBinaries,
    dir: string,
    options: ControlPlaneOptions = {},
  ): Promise<ControlPlane> {
    await mkdir(dir, { recursive: true });
    const pki = join(dir, "pki");
    await mkdir(pki, { recursive: true });
    const ca = await createCertificateAuthority(pki, "portico-test-ca");
    const serving = await issueCertificate(ca, pki, "apiserver", {
      commonName: "kube-apiserver",
      hosts: [
        "127.0.0.1",
        "localhost",
        "10.96.0.1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        ...(options.servingHosts ?? []),
      ],
    });
    const admin = await issueCertificate(ca, pki, "admin", {
      commonName: "portico-admin",
      organization: "system:masters",
    });
    const sa = await createServiceAccountKeys(pki);
    const kubeletAccess: string[] = [];
    if (options.kubeletEgressSocket) {
      // system:masters, as kubeadm's apiserver-kubelet-client: the kubelets' webhook authorizer asks the
      // apiserver itself whether this identity may use nodes/proxy, exec and logs.
      const client = await issueCertificate(ca, pki, "apiserver-kubelet-client", {
        commonName: "kube-apiserver-kubelet-client",
        organization: "system:masters",
      });
      const egressConfig = join(dir, "egress-selector.json");
      await writeFile(egressConfig, egressSelectorConfig(options.kubeletEgressSocket));
      kubeletAccess.push(
        `--kubelet-client-certificate=${client.cert}`,
        `--kubelet-client-key=${client.key}`,
        // Nodes also report their hostname, which nothing on the LAN resolves.
        "--kubelet-preferred-address-types=InternalIP",
        `--egress-selector-config-file=${egressConfig}`,
        // Admission webhooks (Portico's readiness gates) dialled at their Service's endpoints, the pods, through
        // the same egress: the apiserver has no kube-proxy to reach a Service's cluster IP.
        "--enable-aggregator-routing=true",
      );
    }

    const admission: string[] = [];
    if (options.admissionConfig) {
      const path = join(dir, "admission.json");
      await writeFile(path, options.admissionConfig);
      admission.push(`--admission-control-config-file=${path}`);
    }

    const [etcdClient, etcdPeer, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const etcd = ManagedProcess.start(
      "etcd",
      binaries.etcd,
      [
        "--name=portico",
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=portico=http://127.0.0.1:${etcdPeer}`,
        // Test data is thrown away after the run; fsync would only slow every write down.
        "--unsafe-no-fsync",
        "--log-level=warn",
      ],
      join(dir, "etcd.log"),
    );
    await etcd.waitReady(async () => (await fetch(`${etcdUrl}/health`)).ok, 30_000);

    const server = `https://127.0.0.1:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, "apiserver-certs")}`,
      `--tls-cert-file=${serving.cert}`,
      `--tls-private-key-file=${serving.key}`,
      `--client-ca-file=${ca.cert}`,
      ...(options.nodeAuthorization
        ? ["--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"]
        : ["--authorization-mode=RBAC"]),
      `--service-account-issuer=https://kubernetes.default.svc`,
      `--service-account-key-file=${sa.publicKey}`,
      `--service-account-signing-key-file=${sa.privateKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR},${SERVICE_CIDR_V6}`,
      `--service-node-port-range=${NODE_PORT_RANGE}`,
      // A loopback address cannot be published as the `kubernetes` Service's endpoint.
      "--endpoint-reconciler-type=none",
      "--profiling=false",
      ...kubeletAccess,
      ...admission,
      "--v=0",
    ];
    const apiserver = ManagedProcess.start(
      "kube-apiserver",
      binaries.kubeApiserver,
      apiserverArgs,
      join(dir, "apiserver.log"),
    );
    const plane = new ControlPlane({ dir, server, etcd, apiserver, apiserverArgs, binaries });
    await writeFile(plane.kubeconfig, await renderKubeconfig(server, ca.cert, admin, "portico-admin"));
    await plane.waitReady();
    return plane;
  }

  private async waitReady(): Promise<void> {
    const ca = await readFile(join(this.dir, "pki", "ca.crt"));
    const cert = await readFile(join(this.dir, "pki", "admin.crt"));
    const key = await readFile(join(this.dir, "pki", "admin.key"));
    await this.apiserver.waitReady(() => httpsOk(`${this.server}/readyz`, { ca, cert, key }), 90_000);
  }

  /** The certificate authority every component trusts and that signs client certificates. */
  get ca(): { cert: string; key: string } {
    return { cert: join(this.dir, "pki", "ca.crt"), key: join(this.dir, "pki", "ca.key") };
  }

  /**
   * A kubeconfig for a client certificate of its own (a kubelet as `system:node:<name>` in
   * `system:nodes`, kube-proxy, the scheduler...), pointing at `server` (default: this apiserver).
   */
  async clientKubeconfig(
    name: string,
    identity: { commonName: string; organization?: string },
    server = this.server,
  ): Promise<string> {
    const pki = join(this.dir, "pki");
    const cert = await issueCertificate(this.ca, pki, name, identity);
    const path = join(this.dir, `${name}.kubeconfig`);
    await writeFile(path, await renderKubeconfig(server, this.ca.cert, cert, identity.commonName));
    return path;
  }

  /** Stops kube-apiserver and starts it again on the same port and data, as an upgrade or crash would. */
  async restartApiserver(): Promise<void> {
    await this.apiserver.stop();
    this.apiserver = ManagedProcess.start(
      "kube-apiserver",
      this.binaries.kubeApiserver,
      this.apiserverArgs,
      join(this.dir, "apiserver.log"),
    );
    await this.waitReady();
  }

  async stop(): Promise<void> {
    await this.apiserver.stop();
    await this.etcd.stop();
  }
}

function httpsOk(url: string, tls: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ...tls, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

async function renderKubeconfig(
  server: string,
  caFile: string,
  client: { cert: string; key: string },
  user: string,
): Promise<string> {
  const b64 = async (f: string) => (await readFile(f)).toString("base64");
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "portico-local", cluster: { server, "certificate-authority-data": await b64(caFile) } },
      ],
      users: [
        {
          name: user,
          user: {
            "client-certificate-data": await b64(client.cert),
            "client-key-data": await b64(client.key),
          },
        },
      ],
      contexts: [{ name: "portico-local", context: { cluster: "portico-local", user } }],
      "current-context": "portico-local",
    },
    null,
    2,
  );
}
