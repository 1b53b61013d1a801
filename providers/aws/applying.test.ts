import { describe, expect, test } from "vitest";
import { ApplyState } from "./applying.ts";
import type { AwsClients } from "./clients.ts";
import { OWN_SECURITY_GROUP, SHARED_BACKEND_GROUP } from "./model.ts";

const state = () =>
  new ApplyState({
    clients: {} as AwsClients,
    observed: {
      loadBalancers: [],
      targetGroups: [{ arn: "tg-arn", name: "tg" } as never],
      securityGroups: [{ id: "sg-own", name: "own-name", ingress: [] }],
      backendRules: [],
    },
    securityGroupName: "own-name",
    cluster: "prod",
    service: { namespace: "shop", name: "web", uid: "uid-1" },
  });

describe("what appliers share while a plan is carried out", () => {
  test("stand-ins become the IDs the groups have, and stay unknown until made", () => {
    const s = state();
    expect(s.groupIds([OWN_SECURITY_GROUP, SHARED_BACKEND_GROUP, "sg-user"])).toEqual([
      "sg-own",
      undefined,
      "sg-user",
    ]);
    s.sharedGroupId = "sg-shared";
    expect(s.groupIds([SHARED_BACKEND_GROUP])).toEqual(["sg-shared"]);
  });

  test("names resolve to what was observed or made, and a plan naming anything else is a bug said plainly", () => {
    const s = state();
    expect(s.tgArn("tg")).toBe("tg-arn");
    expect(() => s.tgArn("other")).toThrow(/target group other that was neither observed nor created/);
    expect(() => s.lbArn()).toThrow(/neither observed nor created/);
    expect(() => s.shared()).toThrow(/shared backend group, which apply was not given/);
    s.current = { arn: "lb-arn", dnsName: "x", state: "active" };
    expect(s.lbArn()).toBe("lb-arn");
  });
});
