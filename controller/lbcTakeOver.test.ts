import { describe, expect, test } from "vitest";
import { LBC_NLB_CLASS } from "./classes.ts";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";
import { liveHolder } from "./lbcTakeOver.ts";

const aws = ["--provider=aws", "--cluster-name=prod"];

describe("the take-over flags", () => {
  test("--aws-take-over-lbc alone takes over what LBC tagged with the controller's own cluster name", () => {
    const config = parseConfig([...aws, "--aws-take-over-lbc"], {});
    expect(config.alsoServes).toEqual([LBC_NLB_CLASS]);
    expect(config.aws.takeOverLbc).toEqual({
      cluster: "prod",
      recreate: false,
      lease: { namespace: "kube-system", name: "aws-load-balancer-controller-leader" },
    });
    expect(parseConfig(aws, {}).aws.takeOverLbc).toBeUndefined();
  });

  test("LBC's cluster name implies the take-over; recreating and the Lease are chosen explicitly", () => {
    const config = parseConfig(
      [
        ...aws,
        "--aws-take-over-lbc-cluster=eks-prod",
        "--aws-take-over-lbc-recreate",
        "--aws-lbc-leader-lease=lbc/my-lbc-leader",
      ],
      {},
    );
    expect(config.alsoServes).toEqual([LBC_NLB_CLASS]);
    expect(config.aws.takeOverLbc).toEqual({
      cluster: "eks-prod",
      recreate: true,
      lease: { namespace: "lbc", name: "my-lbc-leader" },
    });
    expect(() => parseConfig([...aws, "--aws-take-over-lbc", "--aws-lbc-leader-lease=nope"], {})).toThrow(
      UsageError,
    );
  });
});

describe("whether LBC still runs, from its leader Lease", () => {
  const now = Date.parse("2026-11-25T03:00:00Z");
  const lease = (renewed: string, holder = "lbc-7d9f") => ({
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: renewed as never },
  });

  test("renewed within its duration (and a second one for clock skew): it runs, and who holds it is said", () => {
    expect(liveHolder(lease("2026-11-25T02:59:55Z"), now)).toBe("lbc-7d9f (renewed 5 s ago)");
    expect(liveHolder(lease("2026-11-25T02:59:35Z"), now)).toBe("lbc-7d9f (renewed 25 s ago)");
  });

  test("lapsed, released (no holder) or absent: it does not", () => {
    expect(liveHolder(lease("2026-11-25T02:59:25Z"), now)).toBeUndefined();
    expect(liveHolder(lease("2026-11-25T02:59:59Z", ""), now)).toBeUndefined();
    expect(liveHolder(undefined, now)).toBeUndefined();
  });
});
