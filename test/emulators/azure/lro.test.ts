// ARM's asynchronous writes: what the first response says, what the operation URLs answer while the operation runs
// and after, how the real SDK poller follows them, and what happens to writes that arrive in the meantime.
import { describe, expect, test } from "vitest";
import {
  FAST,
  LOCATION,
  createPublicIp,
  networkId,
  rejection,
  seedNetwork,
  standardLoadBalancer,
  useTestbed,
} from "./testbed.ts";

let vnetId: string;
const RG = "lro-tests";
const API = "api-version=2026-01-01";

const tb = useTestbed({}, async (tb) => {
  ({ vnetId } = await seedNetwork(tb, RG));
});

const pipPath = (name: string): string => `${networkId(tb, RG, "publicIPAddresses", name)}?${API}`;
const standardPip = {
  location: LOCATION,
  sku: { name: "Standard" },
  properties: { publicIPAllocationMethod: "Static" },
};

describe("a PUT", () => {
  test("answers 201 with provisioningState Updating and an Azure-AsyncOperation URL that reports progress", async () => {
    tb.azure.configure({ operationDurationMs: 300 });
    const created = await tb.arm("PUT", pipPath("pip"), standardPip);
    expect(created.status).toBe(201);
    expect(created.body!.properties).toMatchObject({ provisioningState: "Updating" });
    // A public IP has its address only once provisioned.
    expect(created.body!.properties).not.toHaveProperty("ipAddress");
    const operation = created.headers.get("azure-asyncoperation")!;
    expect(operation).toMatch(
      /\/providers\/Microsoft\.Network\/locations\/eastus\/operations\/[0-9a-f-]{36}\?api-version=2026-01-01$/,
    );
    expect(created.headers.get("retry-after")).toBe("1");
    expect((await tb.arm("GET", operation)).body).toEqual({ status: "InProgress" });
    expect((await tb.arm("GET", pipPath("pip"))).body!.properties).toMatchObject({
      provisioningState: "Updating",
    });

    await new Promise((r) => setTimeout(r, 350));
    expect((await tb.arm("GET", operation)).body).toEqual({ status: "Succeeded" });
    const done = await tb.arm("GET", pipPath("pip"));
    expect(done.body!.properties).toMatchObject({
      provisioningState: "Succeeded",
      ipAddress: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/) as unknown,
    });
  });

  test("of an existing resource answers 200 and a new etag", async () => {
    const first = await tb.arm("PUT", pipPath("pip"), standardPip);
    const second = await tb.arm("PUT", pipPath("pip"), { ...standardPip, tags: { a: "b" } });
    expect(second.status).toBe(200);
    expect(second.body!.etag).not.toBe(first.body!.etag);
    expect(second.body!.tags).toEqual({ a: "b" });
  });

  test("is followed to the end by the SDK poller, which then reads the resource", async () => {
    tb.azure.configure({ operationDurationMs: 150, retryAfterSeconds: 0 });
    tb.azure.clearRequests();
    const pip = await tb.network.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
      FAST,
    );
    expect(pip.provisioningState).toBe("Succeeded");
    expect(pip.ipAddress).toBeDefined();
    const counts = tb.azure.requestCounts();
    expect(counts["PUT publicIPAddresses"]).toBe(1);
    expect(counts["GET operations"]).toBeGreaterThan(1);
    expect(counts["GET publicIPAddresses"]).toBe(1);
  });

  test("whose operation fails leaves the resource Failed, and the SDK reports the error", async () => {
    tb.azure.addFault({ kind: "operationFailure", pathContains: "/publicIPAddresses/" });
    const err = await rejection(
      tb.network.publicIPAddresses.createOrUpdate(
        RG,
        "pip",
        { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
        FAST,
      ),
    );
    expect(err.message).toContain("An error occurred.");
    expect((await tb.network.publicIPAddresses.get(RG, "pip")).provisioningState).toBe("Failed");
  });
});

describe("a DELETE", () => {
  test("answers 202 with both operation URLs; the Location URL answers 202 until done, then 204", async () => {
    await tb.arm("PUT", pipPath("pip"), standardPip);
    tb.azure.configure({ operationDurationMs: 300 });
    const deleting = await tb.arm("DELETE", pipPath("pip"));
    expect(deleting.status).toBe(202);
    expect(deleting.headers.get("azure-asyncoperation")).toContain("/operations/");
    const location = deleting.headers.get("location")!;
    expect(location).toMatch(/\/locations\/eastus\/operationResults\/[0-9a-f-]{36}\?api-version=2026-01-01$/);
    expect((await tb.arm("GET", pipPath("pip"))).body!.properties).toMatchObject({
      provisioningState: "Deleting",
    });
    expect((await tb.arm("GET", location)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 350));
    expect((await tb.arm("GET", location)).status).toBe(204);
    expect((await tb.arm("GET", pipPath("pip"))).status).toBe(404);
  });

  test("of a resource that does not exist answers 204", async () => {
    expect((await tb.arm("DELETE", pipPath("ghost"))).status).toBe(204);
  });

  test("through the SDK waits for the operation, after which the resource is gone", async () => {
    await createPublicIp(tb, RG, "pip");
    tb.azure.configure({ operationDurationMs: 100, retryAfterSeconds: 0 });
    await tb.network.publicIPAddresses.delete(RG, "pip", FAST);
    expect(await rejection(tb.strict.publicIPAddresses.get(RG, "pip"))).toMatchObject({
      status: 404,
      code: "ResourceNotFound",
    });
  });
});

describe("writes while an operation runs", () => {
  test("are refused with 409 AnotherOperationInProgress naming the running operation", async () => {
    tb.azure.configure({ operationDurationMs: 500 });
    const first = await tb.arm("PUT", pipPath("pip"), standardPip);
    const second = await tb.arm("PUT", pipPath("pip"), { ...standardPip, tags: { second: "write" } });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: { code: "AnotherOperationInProgress" } });
    expect((second.body!.error as { message: string }).message).toContain(
      first.headers.get("azure-asyncoperation")!,
    );
    const deleting = await tb.arm("DELETE", pipPath("pip"));
    expect(deleting.status).toBe(409);
  });

  test("supersede the running operation, which ends Canceled, when the conflict check is off", async () => {
    tb.azure.configure({ operationDurationMs: 500, conflictOnConcurrentWrite: false });
    const first = await tb.arm("PUT", pipPath("pip"), standardPip);
    const second = await tb.arm("PUT", pipPath("pip"), { ...standardPip, tags: { second: "write" } });
    expect(second.status).toBe(200);
    const status = await tb.arm("GET", first.headers.get("azure-asyncoperation")!);
    expect(status.body).toMatchObject({
      status: "Canceled",
      error: { code: "CanceledAndSupersededDueToAnotherOperation" },
    });
  });

  test("referencing a resource whose own operation runs get the retryable 429 of NRP", async () => {
    tb.azure.configure({ operationDurationMs: 500 });
    await tb.arm("PUT", pipPath("pip"), standardPip);
    const lb = standardLoadBalancer(tb, RG, "lb", networkId(tb, RG, "publicIPAddresses", "pip"), vnetId);
    const err = await tb.arm("PUT", `${networkId(tb, RG, "loadBalancers", "lb")}?${API}`, {
      location: LOCATION,
      sku: lb.sku,
      properties: {
        frontendIPConfigurations: [
          {
            name: "fe",
            properties: { publicIPAddress: { id: networkId(tb, RG, "publicIPAddresses", "pip") } },
          },
        ],
      },
    });
    expect(err.status).toBe(429);
    expect(err.headers.get("retry-after")).toBe("1");
    expect(err.body).toMatchObject({
      error: { code: "RetryableError", details: [{ code: "ReferencedResourceNotProvisioned" }] },
    });
    expect((err.body!.error as { details: { message: string }[] }).details[0]!.message).toContain(
      "PutPublicIpAddressOperation",
    );
  });
});

describe("child resources", () => {
  test("a backend pool written on its own is a long-running operation on its load balancer", async () => {
    const pipId = await createPublicIp(tb, RG, "pip");
    const before = await tb.network.loadBalancers.createOrUpdate(
      RG,
      "lb",
      standardLoadBalancer(tb, RG, "lb", pipId, vnetId),
      FAST,
    );
    const pool = await tb.network.loadBalancerBackendAddressPools.createOrUpdate(
      RG,
      "lb",
      "nodes",
      {
        loadBalancerBackendAddresses: [
          { name: "node-1", ipAddress: "10.0.1.5", virtualNetwork: { id: vnetId } },
        ],
      },
      FAST,
    );
    expect(pool.id).toBe(`${before.id}/backendAddressPools/nodes`);
    const after = await tb.network.loadBalancers.get(RG, "lb");
    expect(after.etag).not.toBe(before.etag);
    expect(pool.etag).toBe(after.etag);
    expect(after.backendAddressPools!.map((p) => p.name)).toEqual(["pods", "nodes"]);
    expect(
      (await tb.network.loadBalancerBackendAddressPools.get(RG, "lb", "nodes"))
        .loadBalancerBackendAddresses![0]!.ipAddress,
    ).toBe("10.0.1.5");
  });

  test("a pool a rule uses cannot be deleted; an unused one can, and is then NotFound", async () => {
    const pipId = await createPublicIp(tb, RG, "pip");
    const lb = standardLoadBalancer(tb, RG, "lb", pipId, vnetId);
    lb.backendAddressPools!.push({ name: "spare" });
    await tb.network.loadBalancers.createOrUpdate(RG, "lb", lb, FAST);
    expect(
      await rejection(tb.strict.loadBalancerBackendAddressPools.delete(RG, "lb", "pods", FAST)),
    ).toMatchObject({
      status: 400,
      code: "InvalidResourceReference",
    });
    await tb.network.loadBalancerBackendAddressPools.delete(RG, "lb", "spare", FAST);
    expect(await rejection(tb.strict.loadBalancerBackendAddressPools.get(RG, "lb", "spare"))).toMatchObject({
      status: 404,
      code: "NotFound",
    });
  });
});
