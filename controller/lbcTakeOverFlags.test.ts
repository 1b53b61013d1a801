import { describe, expect, test } from "vitest";
import { LBC_NLB_CLASS } from "../providers/classes.ts";
import { parseConfig } from "./config.ts";
import { UsageError } from "../shared/usageError.ts";

const aws = ["--provider=aws", "--cluster-name=prod"];

/** The take-over the AWS provider read from its flags. */
const takeOver = (config: { settings: unknown }) =>
  (config.settings as { takeOverLbc?: unknown }).takeOverLbc;

describe("the take-over flags", () => {
  test("--aws-take-over-lbc alone takes over what LBC tagged with the controller's own cluster name", () => {
    const config = parseConfig([...aws, "--aws-take-over-lbc"], {});
    expect(config.alsoServes).toEqual([LBC_NLB_CLASS]);
    expect(takeOver(config)).toEqual({
      cluster: "prod",
      recreate: false,
      lease: { namespace: "kube-system", name: "aws-load-balancer-controller-leader" },
    });
    expect(takeOver(parseConfig(aws, {}))).toBeUndefined();
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
    expect(takeOver(config)).toEqual({
      cluster: "eks-prod",
      recreate: true,
      lease: { namespace: "lbc", name: "my-lbc-leader" },
    });
    expect(() => parseConfig([...aws, "--aws-take-over-lbc", "--aws-lbc-leader-lease=nope"], {})).toThrow(
      UsageError,
    );
  });

  test("another provider's flags are refused, never ignored, naming the flag and its provider", () => {
    expect(() => parseConfig(["--provider=metal", "--cluster-name=lab", "--aws-take-over-lbc"], {})).toThrow(
      /--aws-take-over-lbc is the aws provider's; this controller runs --provider metal: remove it/,
    );
    expect(() => parseConfig([...aws, "--metallb=on"], {})).toThrow(/--metallb is the metal provider's/);
  });
});
