// Optimistic concurrency with etags, as two reconciles of one load balancer would meet it: a write carrying the etag
// it read applies only if nobody wrote in between.
import type { LoadBalancer } from "@azure/arm-network";
import { describe, expect, test } from "vitest";
import { FAST, createPublicIp, rejection, seedNetwork, standardLoadBalancer, useTestbed } from "./testbed.ts";

let lb: LoadBalancer;
const RG = "etag-tests";

const tb = useTestbed({}, async (tb) => {
  const { vnetId } = await seedNetwork(tb, RG);
  const pipId = await createPublicIp(tb, RG, "pip");
  lb = await tb.network.loadBalancers.createOrUpdate(
    RG,
    "lb",
    standardLoadBalancer(tb, RG, "lb", pipId, vnetId),
    FAST,
  );
});

const ifMatch = (etag: string): { requestOptions: { headers: Record<string, string> } } & typeof FAST => ({
  ...FAST,
  requestOptions: { headers: { "If-Match": etag } },
});

const withTag = (value: string): LoadBalancer => ({ ...lb, tags: { writer: value } });

describe("If-Match", () => {
  test("with the current etag lets the write through", async () => {
    const updated = await tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("a"), ifMatch(lb.etag!));
    expect(updated.tags).toEqual({ writer: "a" });
  });

  test("with a stale etag is 412 PreconditionFailed and changes nothing", async () => {
    await tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("first"), ifMatch(lb.etag!));
    const err = await rejection(
      tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("second"), ifMatch(lb.etag!)),
    );
    expect(err).toMatchObject({ status: 412, code: "PreconditionFailed" });
    expect((await tb.network.loadBalancers.get(RG, "lb")).tags).toEqual({ writer: "first" });
  });

  test("decides a race: of two writers holding the same etag, exactly one wins", async () => {
    const results = await Promise.allSettled([
      tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("a"), ifMatch(lb.etag!)),
      tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("b"), ifMatch(lb.etag!)),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0]!.reason as { statusCode: number }).statusCode).toBe(412);
  });

  test("accepts the etag in any of its spellings (weak, quoted, bare)", async () => {
    const bare = lb.etag!.replace(/^W\/"(.*)"$/, "$1");
    const updated = await tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("bare"), ifMatch(bare));
    expect(updated.tags).toEqual({ writer: "bare" });
  });

  test("on a resource that does not exist is 412", async () => {
    const err = await rejection(
      tb.strict.loadBalancers.createOrUpdate(RG, "other", withTag("x"), ifMatch(lb.etag!)),
    );
    expect(err).toMatchObject({ status: 412, code: "PreconditionFailed" });
  });

  test("guards deletes too", async () => {
    await tb.strict.loadBalancers.updateTags(RG, "lb", { tags: { moved: "on" } });
    const err = await rejection(tb.strict.loadBalancers.delete(RG, "lb", ifMatch(lb.etag!)));
    expect(err).toMatchObject({ status: 412, code: "PreconditionFailed" });
    const current = await tb.network.loadBalancers.get(RG, "lb");
    await tb.strict.loadBalancers.delete(RG, "lb", ifMatch(current.etag!));
    expect(await rejection(tb.strict.loadBalancers.get(RG, "lb"))).toMatchObject({ status: 404 });
  });

  test("applies to a child resource through its parent's etag", async () => {
    const pool = { loadBalancerBackendAddresses: [] };
    await tb.strict.loadBalancers.updateTags(RG, "lb", { tags: { bump: "1" } });
    const err = await rejection(
      tb.strict.loadBalancerBackendAddressPools.createOrUpdate(RG, "lb", "pods", pool, ifMatch(lb.etag!)),
    );
    expect(err).toMatchObject({ status: 412, code: "PreconditionFailed" });
  });
});

describe("If-None-Match: *", () => {
  const createOnly = { ...FAST, requestOptions: { headers: { "If-None-Match": "*" } } };

  test("refuses to overwrite an existing resource", async () => {
    const err = await rejection(tb.strict.loadBalancers.createOrUpdate(RG, "lb", withTag("x"), createOnly));
    expect(err).toMatchObject({ status: 412, code: "PreconditionFailed" });
  });

  test("creates a resource that does not exist yet", async () => {
    const copy = { ...withTag("copy") };
    const created = await tb.strict.loadBalancers.createOrUpdate(
      RG,
      "lb-copy",
      { ...copy, frontendIPConfigurations: [], loadBalancingRules: [] },
      createOnly,
    );
    expect(created.name).toBe("lb-copy");
  });
});

describe("PATCH of tags", () => {
  test("is synchronous, keeps the configuration and changes the etag", async () => {
    const patched = await tb.strict.loadBalancers.updateTags(RG, "lb", { tags: { owner: "portico" } });
    expect(patched.tags).toEqual({ owner: "portico" });
    expect(patched.etag).not.toBe(lb.etag);
    expect(patched.loadBalancingRules).toHaveLength(2);
  });
});
