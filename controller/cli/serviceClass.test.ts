import { describe, expect, it } from "vitest";
import { service } from "../../test/unit/support/controllerObjects.ts";
import { providerOf } from "./serviceClass.ts";

describe("providerOf", () => {
  it("names the provider of Portico's classes", () => {
    expect(providerOf(service({ loadBalancerClass: "portico.io/metal" }))).toBe("metal");
    expect(providerOf(service())).toBeUndefined();
  });

  it("counts the AWS Load Balancer Controller's class as Portico's only where Portico took the Service on", () => {
    const lbc = service({ loadBalancerClass: "service.k8s.aws/nlb" });
    expect(providerOf(lbc)).toBeUndefined();
    lbc.metadata!.annotations = { "portico.io/managed-by": "service.k8s.aws/nlb" };
    expect(providerOf(lbc)).toBe("aws");
  });
});
