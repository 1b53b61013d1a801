import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import { resourceId } from "../arm/ids.ts";
import { withoutService, withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { LoadBalancer } from "../model.ts";
import { frontendName } from "../names.ts";
import { choosePublicIp } from "./choice.ts";
import {
  CLUSTER,
  config,
  desired,
  FE,
  intent,
  OTHER_UID,
  publicIp,
  RG,
  SUB,
  UID,
  written,
} from "../../../test/unit/support/azure.ts";

const PIP_NAME = "service.beta.kubernetes.io/azure-pip-name";
const OTHER_FE = frontendName(OTHER_UID);
const shared = publicIp("shared-ip");
const other = publicIp("other-ip", { ipAddress: "20.0.0.2" });
const port = (n: number, nodePort: number) => [{ name: "p", protocol: "TCP" as const, port: n, nodePort }];

/** Service `web` (UID) and `api` (OTHER_UID) on the user's public IP `shared-ip`, on different ports. */
const web = (pip = "shared-ip") =>
  desired(intent({ annotations: { [PIP_NAME]: pip } }), { publicIps: [shared, other] });
const api = (p = port(443, 30443)) =>
  desired(intent({ annotations: { [PIP_NAME]: "shared-ip" }, ports: p }, OTHER_UID, "api"), {
    publicIps: [shared, other],
  });

const frontends = (lb: LoadBalancer | undefined) =>
  (lb?.frontendIPConfigurations ?? []).map((f) => `${f.name} ${f.publicIPAddress?.id?.split("/").pop()}`);
const ruleFrontends = (lb: LoadBalancer | undefined): Record<string, string | undefined> =>
  Object.fromEntries(
    (lb?.loadBalancingRules ?? []).map((r): [string, string | undefined] => [
      r.name ?? "",
      r.frontendIPConfiguration?.id?.split("/").pop(),
    ]),
  );

describe("Services sharing a user's public IP", () => {
  const both = () => written(api(), written(web()));

  it("share the first Service's frontend: the second's rules point at it, and there is one frontend for the IP", () => {
    const lb = both();
    expect(frontends(lb)).toEqual([`${FE} shared-ip`]);
    expect(ruleFrontends(lb)).toEqual({ [`${FE}-TCP-80`]: FE, [`${OTHER_FE}-TCP-443`]: FE });
    // Putting either in place again changes nothing.
    expect(withService(lb, api())).toBe(lb);
    expect(withService(lb, web())).toBe(lb);
  });

  it("must use different ports: the same port is refused, naming it", () => {
    let err: unknown;
    try {
      withService(written(web()), api(port(80, 30081)));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err).toMatchObject({ reason: "SharedIPPortInUse", field: "spec.ports" });
    expect((err as Error).message).toContain("TCP port 80 of public IP shared-ip");
  });

  it("keep the frontend when its first Service goes: it is handed to the one still using it", () => {
    const lb = withoutService(both(), FE)!;
    expect(frontends(lb)).toEqual([`${OTHER_FE} shared-ip`]);
    expect(ruleFrontends(lb)).toEqual({ [`${OTHER_FE}-TCP-443`]: OTHER_FE });
    expect(lb.frontendIPConfigurations![0]!.id).toBe(
      `${resourceId(SUB, RG, "loadBalancers", CLUSTER)}/frontendIPConfigurations/${OTHER_FE}`,
    );
    // The last one leaving takes the frontend, and with it the load balancer, away.
    expect(withoutService(lb, OTHER_FE)).toBeUndefined();
  });

  it("keep the first Service's frontend when the second goes", () => {
    const lb = withoutService(both(), OTHER_FE)!;
    expect(frontends(lb)).toEqual([`${FE} shared-ip`]);
    expect(ruleFrontends(lb)).toEqual({ [`${FE}-TCP-80`]: FE });
  });

  it("hand the frontend over when its Service moves to another address, in the same write", () => {
    const lb = withService(both(), web("other-ip"));
    expect(frontends(lb).sort()).toEqual([`${FE} other-ip`, `${OTHER_FE} shared-ip`].sort());
    expect(ruleFrontends(lb)).toEqual({ [`${FE}-TCP-80`]: FE, [`${OTHER_FE}-TCP-443`]: OTHER_FE });
  });
});

describe("internal Services asking for the same static private address", () => {
  const internal = (uid: string, name: string, p: ReturnType<typeof port>) =>
    desired(
      intent(
        {
          annotations: {
            "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
            "service.beta.kubernetes.io/azure-load-balancer-ipv4": "10.0.1.50",
          },
          ports: p,
        },
        uid,
        name,
      ),
    );

  it("share one frontend with that address, on different ports", () => {
    const lb = written(
      internal(OTHER_UID, "api", port(443, 30443)),
      written(internal(UID, "web", port(80, 30080))),
    );
    expect(lb.frontendIPConfigurations!.map((f) => [f.name, f.privateIPAddress])).toEqual([
      [FE, "10.0.1.50"],
    ]);
    expect(ruleFrontends(lb)).toEqual({ [`${FE}-TCP-80`]: FE, [`${OTHER_FE}-TCP-443`]: FE });
    expect(() => withService(lb, internal(OTHER_UID, "api", port(80, 30081)))).toThrow(
      "TCP port 80 of private address 10.0.1.50 is already served by another Service",
    );
  });
});

describe("choosing a public IP another Service uses", () => {
  const svc = { namespace: "shop", name: "api", uid: OTHER_UID };
  const usedBy = (lb: string, fe: string) =>
    publicIp("shared-ip", {
      ipConfiguration: { id: `${resourceId(SUB, RG, "loadBalancers", lb)}/frontendIPConfigurations/${fe}` },
    });
  const choose = (pip: ReturnType<typeof publicIp>, cfg = config()) =>
    choosePublicIp(parseAzureSettings({ [PIP_NAME]: "shared-ip" }), svc, { cluster: CLUSTER, config: cfg }, [
      pip,
    ]);

  it("takes the user's public IP a Service's frontend on the cluster's load balancer has", () => {
    expect(choose(usedBy(CLUSTER, FE))).toMatchObject({ kind: "user", name: "shared-ip" });
  });

  it.each([
    ["another load balancer's frontend", usedBy("someone-elses", FE), config()],
    ["a frontend Portico did not name", usedBy(CLUSTER, "frontend-1"), config()],
    [
      "one load balancer per Service",
      usedBy(`${CLUSTER}-${FE}`, FE),
      config({ loadBalancerPerService: true }),
    ],
  ])("refuses one in use by %s", (_what, pip, cfg) => {
    expect(() => choose(pip, cfg)).toThrow(/already used by/);
  });

  it("shares Portico's own public IP of another Service of the cluster, except with one load balancer per Service", () => {
    const theirs = publicIp("shared-ip", {
      tags: {
        "portico.io-cluster": CLUSTER,
        "portico.io-service-uid": UID,
        "portico.io-service": "shop/web",
      },
    });
    expect(choose(theirs)).toMatchObject({ kind: "shared", name: "shared-ip" });
    expect(() => choose(theirs, config({ loadBalancerPerService: true }))).toThrow(/cannot be shared/);
  });
});
