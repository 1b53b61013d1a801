// A Microsoft Entra ID stand-in, just enough for @azure/identity: the OpenID discovery document MSAL reads from
// `{authorityHost}/{tenant}/v2.0/.well-known/openid-configuration`, instance discovery, and the client-credentials
// token endpoint. Tokens are HS256 JWTs with ARM's audience; ARM requests must carry one this emulator issued.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { ArmError } from "./errors.ts";
import { expiredToken, invalidToken, missingAuthorization } from "./errors.ts";

export interface ServicePrincipal {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

/** The audiences ARM accepts: the `.default` scope of either of its resource URIs. */
const ARM_RESOURCES = ["https://management.azure.com", "https://management.core.windows.net"];

export interface TokenClaims {
  aud: string;
  iss: string;
  tid: string;
  appid: string;
  oid: string;
  iat: number;
  nbf: number;
  exp: number;
}

export interface AuthResponse {
  status: number;
  body: unknown;
}

const base64url = (data: Buffer | string): string => Buffer.from(data).toString("base64url");

function entraError(status: number, error: string, code: number, description: string): AuthResponse {
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${new Date().toISOString()}`,
      error_codes: [code],
      timestamp: new Date().toISOString(),
      trace_id: randomUUID(),
      correlation_id: randomUUID(),
    },
  };
}

export class Authority {
  readonly principal: ServicePrincipal;
  tokenLifetimeSeconds: number;
  private readonly signingKey = randomBytes(32);
  /** Tokens whose signature verify() has checked, with their claims. */
  private readonly verified = new Map<string, TokenClaims>();
  private readonly baseUrl: () => string;

  constructor(principal: ServicePrincipal, baseUrl: () => string, tokenLifetimeSeconds = 3600) {
    this.principal = principal;
    this.baseUrl = baseUrl;
    this.tokenLifetimeSeconds = tokenLifetimeSeconds;
  }

  /** Answers the identity endpoints; undefined when `path` is not one of them. */
  handle(
    method: string,
    path: string,
    query: URLSearchParams,
    form: URLSearchParams,
  ): AuthResponse | undefined {
    const base = this.baseUrl();
    if (method === "GET" && /^\/common\/discovery\/instance$/i.test(path)) {
      const host = new URL(base).host;
      return {
        status: 200,
        body: {
          tenant_discovery_endpoint: `${base}/${this.principal.tenantId}/v2.0/.well-known/openid-configuration`,
          "api-version": query.get("api-version") ?? "1.1",
          metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
        },
      };
    }
    const m =
      /^\/([^/]+)\/(v2\.0\/\.well-known\/openid-configuration|discovery\/v2\.0\/keys|oauth2\/v2\.0\/token)$/i.exec(
        path,
      );
    if (!m) return undefined;
    const tenant = m[1]!;
    const endpoint = m[2]!.toLowerCase();
    if (tenant.toLowerCase() !== this.principal.tenantId.toLowerCase() && tenant !== "organizations")
      return entraError(
        400,
        endpoint.endsWith("token") ? "invalid_request" : "invalid_tenant",
        90002,
        `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
      );
    if (endpoint.endsWith("openid-configuration") && method === "GET")
      return { status: 200, body: this.discovery(tenant) };
    if (endpoint.endsWith("keys") && method === "GET") return { status: 200, body: { keys: [] } };
    if (endpoint.endsWith("token") && method === "POST") return this.issue(form);
    return {
      status: 405,
      body: { error: "invalid_request", error_description: `${method} is not supported here.` },
    };
  }

  private discovery(tenant: string): Record<string, unknown> {
    const root = `${this.baseUrl()}/${tenant}`;
    return {
      token_endpoint: `${root}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
      jwks_uri: `${this.baseUrl()}/${tenant}/discovery/v2.0/keys`,
      response_modes_supported: ["query", "fragment", "form_post"],
      subject_types_supported: ["pairwise"],
      id_token_signing_alg_values_supported: ["RS256"],
      response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
      scopes_supported: ["openid", "profile", "email", "offline_access"],
      issuer: `${root}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: `${root}/openid/userinfo`,
      authorization_endpoint: `${root}/oauth2/v2.0/authorize`,
      device_authorization_endpoint: `${root}/oauth2/v2.0/devicecode`,
      http_logout_supported: true,
      frontchannel_logout_supported: true,
      end_session_endpoint: `${root}/oauth2/v2.0/logout`,
      claims_supported: ["sub", "iss", "aud", "exp", "iat", "tid", "oid"],
      tenant_region_scope: "NA",
      cloud_instance_name: new URL(this.baseUrl()).host,
      cloud_graph_host_name: "graph.windows.net",
      msgraph_host: "graph.microsoft.com",
    };
  }

  private issue(form: URLSearchParams): AuthResponse {
    const { tenantId, clientId, clientSecret } = this.principal;
    const grant = form.get("grant_type");
    if (grant !== "client_credentials")
      return entraError(
        400,
        "unsupported_grant_type",
        70003,
        `The app requested an unsupported grant type '${grant ?? ""}'.`,
      );
    const requestedClient = form.get("client_id") ?? "";
    if (requestedClient !== clientId)
      return entraError(
        400,
        "unauthorized_client",
        700016,
        `Application with identifier '${requestedClient}' was not found in the directory '${tenantId}'.`,
      );
    const secret = Buffer.from(form.get("client_secret") ?? "");
    const expected = Buffer.from(clientSecret);
    if (secret.length !== expected.length || !timingSafeEqual(secret, expected))
      return entraError(
        401,
        "invalid_client",
        7000215,
        "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '" +
          `${clientId}'.`,
      );
    const scope = form.get("scope") ?? "";
    const resource = ARM_RESOURCES.find((r) =>
      scope.split(" ").some((s) => s.replace(/\/*\.default$/, "") === r),
    );
    if (!resource)
      return entraError(
        400,
        "invalid_resource",
        500011,
        `The resource principal named ${scope} was not found in the tenant named ${tenantId}.`,
      );
    const now = Math.floor(Date.now() / 1000);
    const claims: TokenClaims = {
      aud: `${resource}/`,
      iss: `https://sts.windows.net/${tenantId}/`,
      tid: tenantId,
      appid: clientId,
      oid: clientId,
      iat: now,
      nbf: now,
      exp: now + this.tokenLifetimeSeconds,
    };
    return {
      status: 200,
      body: {
        token_type: "Bearer",
        expires_in: this.tokenLifetimeSeconds,
        ext_expires_in: this.tokenLifetimeSeconds,
        access_token: this.sign(claims),
      },
    };
  }

  private sign(claims: TokenClaims): string {
    const head = base64url(JSON.stringify({ typ: "JWT", alg: "HS256" }));
    const body = base64url(JSON.stringify(claims));
    const mac = createHmac("sha256", this.signingKey).update(`${head}.${body}`).digest();
    return `${head}.${body}.${base64url(mac)}`;
  }

  /** Checks an ARM request's Authorization header the way ARM does; throws ARM's 401 errors. */
  verify(authorization: string | undefined): TokenClaims {
    if (!authorization) throw this.challenge(missingAuthorization());
    const m = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(authorization.trim());
    if (!m) throw this.challenge(invalidToken());
    // A token whose signature was checked once is not checked again (a client sends the same one for an hour);
    // its claims, expiry included, still are.
    let claims = this.verified.get(m[0]);
    if (!claims) {
      const mac = createHmac("sha256", this.signingKey).update(`${m[1]}.${m[2]}`).digest();
      const given = Buffer.from(m[3]!, "base64url");
      if (given.length !== mac.length || !timingSafeEqual(given, mac)) throw this.challenge(invalidToken());
      claims = JSON.parse(Buffer.from(m[2]!, "base64url").toString()) as TokenClaims;
      if (this.verified.size >= 1000) this.verified.clear();
      this.verified.set(m[0], claims);
    }
    if (
      !ARM_RESOURCES.some((r) => claims.aud === r || claims.aud === `${r}/`) ||
      claims.tid !== this.principal.tenantId
    )
      throw this.challenge(invalidToken());
    const now = Date.now();
    if (claims.exp * 1000 <= now)
      throw this.challenge(expiredToken(new Date(claims.exp * 1000), new Date(now)));
    return claims;
  }

  /** ARM's 401 responses name the authority to get a token from. */
  private challenge(err: ArmError): ArmError {
    err.headers["WWW-Authenticate"] =
      `Bearer authorization_uri="${this.baseUrl()}/${this.principal.tenantId}", error="invalid_token", ` +
      `error_description="${err.message.replace(/"/g, "'")}"`;
    return err;
  }
}
