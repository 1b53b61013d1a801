// Authentication as Entra ID and ARM do it: DefaultAzureCredential gets a token from the emulator's authority, and
// ARM turns away requests without a token it issued, as well as unknown subscriptions and api-versions.
import { NetworkManagementClient } from "@azure/arm-network";
import { ClientSecretCredential } from "@azure/identity";
import { describe, expect, test } from "vitest";
import { LOCATION, createResourceGroup, rejection, subscriptionPath, useTestbed } from "./testbed.ts";

const tb = useTestbed({}, (tb) => createResourceGroup(tb, "id-tests"));

const decode = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;

const listPath = (): string =>
  `${subscriptionPath(tb)}/resourceGroups/id-tests/providers/Microsoft.Network/loadBalancers`;

describe("tokens", () => {
  test("DefaultAzureCredential, configured by the standard variables, gets an ARM token from the emulator", async () => {
    const token = await tb.credential.getToken("https://management.azure.com/.default");
    expect(decode(token.token)).toMatchObject({
      aud: "https://management.azure.com/",
      tid: tb.azure.tenantId,
      appid: tb.azure.clientId,
    });
    expect(token.expiresOnTimestamp).toBeGreaterThan(Date.now() + 50 * 60_000);
    const listed: unknown[] = [];
    for await (const lb of tb.network.loadBalancers.list("id-tests")) listed.push(lb);
    expect(listed).toEqual([]);
  });

  test("a wrong client secret is refused by the authority with AADSTS7000215", async () => {
    const credential = new ClientSecretCredential(tb.azure.tenantId, tb.azure.clientId, "wrong", {
      authorityHost: tb.azure.url,
      disableInstanceDiscovery: true,
    });
    await expect(credential.getToken("https://management.azure.com/.default")).rejects.toThrow(
      /AADSTS7000215/,
    );
  });

  test("an unknown tenant has no discovery document (AADSTS90002), so MSAL cannot resolve the authority", async () => {
    const unknown = "00000000-0000-0000-0000-000000000001";
    const discovery = await fetch(`${tb.azure.url}/${unknown}/v2.0/.well-known/openid-configuration`);
    expect(discovery.status).toBe(400);
    expect(await discovery.json()).toMatchObject({ error: "invalid_tenant", error_codes: [90002] });
    const credential = new ClientSecretCredential(unknown, tb.azure.clientId, tb.azure.clientSecret, {
      authorityHost: tb.azure.url,
      disableInstanceDiscovery: true,
    });
    await expect(credential.getToken("https://management.azure.com/.default")).rejects.toThrow(
      /endpoints_resolution_error/,
    );
  });
});

describe("ARM authentication", () => {
  const call = (authorization?: string): Promise<Response> =>
    fetch(
      `${tb.azure.url}${listPath()}?api-version=2026-01-01`,
      authorization ? { headers: { authorization } } : {},
    );

  test("a request without a token is 401 AuthenticationFailed with a challenge naming the authority", async () => {
    const res = await call();
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      error: {
        code: "AuthenticationFailed",
        message: "Authentication failed. The 'Authorization' header is missing.",
      },
    });
    expect(res.headers.get("www-authenticate")).toContain(
      `authorization_uri="${tb.azure.url}/${tb.azure.tenantId}"`,
    );
  });

  test("a token the emulator did not sign is 401 InvalidAuthenticationToken", async () => {
    const real = (await tb.credential.getToken("https://management.azure.com/.default")).token;
    const [head, body] = real.split(".");
    const res = await call(`Bearer ${head}.${body}.${Buffer.from("forged").toString("base64url")}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: "InvalidAuthenticationToken" } });
  });

  test("an expired token is 401 ExpiredAuthenticationToken", async () => {
    tb.azure.server.authority.tokenLifetimeSeconds = 1;
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: tb.azure.clientId,
      client_secret: tb.azure.clientSecret,
      scope: "https://management.azure.com/.default",
    });
    const issued = (await (
      await fetch(`${tb.azure.url}/${tb.azure.tenantId}/oauth2/v2.0/token`, { method: "POST", body: form })
    ).json()) as {
      access_token: string;
      expires_in: number;
    };
    tb.azure.server.authority.tokenLifetimeSeconds = 3600;
    expect(issued.expires_in).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    const res = await call(`Bearer ${issued.access_token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: "ExpiredAuthenticationToken" } });
  });
});

describe("ARM front door", () => {
  test("an unknown subscription is 404 SubscriptionNotFound", async () => {
    const other = new NetworkManagementClient(tb.credential, "11111111-1111-1111-1111-111111111111", {
      endpoint: tb.azure.url,
    });
    expect(await rejection(other.loadBalancers.get("id-tests", "lb"))).toMatchObject({
      status: 404,
      code: "SubscriptionNotFound",
    });
  });

  test("a request without api-version is 400 MissingApiVersionParameter", async () => {
    const res = await tb.arm("GET", listPath());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "MissingApiVersionParameter" } });
  });

  test("an api-version Microsoft.Network does not have is 400 NoRegisteredProviderFound", async () => {
    const res = await tb.arm("GET", `${listPath()}?api-version=2099-01-01`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "NoRegisteredProviderFound" } });
    expect((res.body!.error as { message: string }).message).toContain("2026-01-01");
  });

  test("a resource type Microsoft.Network does not have is 400 InvalidResourceType", async () => {
    const res = await tb.arm(
      "PUT",
      `${subscriptionPath(tb)}/resourceGroups/id-tests/providers/Microsoft.Network/loadBalancerz/x?api-version=2026-01-01`,
      {
        location: LOCATION,
      },
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "InvalidResourceType" } });
  });

  test("a body that is not JSON is 400 InvalidRequestFormat", async () => {
    const res = await tb.arm(
      "PUT",
      `${subscriptionPath(tb)}/resourceGroups/id-tests/providers/Microsoft.Network/publicIPAddresses/pip?api-version=2026-01-01`,
      "{not json",
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: {
        code: "InvalidRequestFormat",
        message: "Cannot parse the request.",
        details: [{ code: "InvalidJson" }],
      },
    });
  });

  test("every answer carries ARM's request and correlation IDs", async () => {
    const res = await tb.arm("GET", `${listPath()}?api-version=2026-01-01`, undefined, {
      "x-ms-correlation-request-id": "corr-1",
    });
    expect(res.headers.get("x-ms-correlation-request-id")).toBe("corr-1");
    expect(res.headers.get("x-ms-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
