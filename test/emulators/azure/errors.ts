// ARM's error envelope and every error the emulator can answer with. Codes and wording follow what ARM and the
// Microsoft.Network resource provider (NRP) return; where a check exists in Azure but its exact code is not on
// public record, the constructor says so, and the code is named after NRP's conventions.

export interface ArmErrorDetail {
  code: string;
  message: string;
  target?: string;
}

/** An ARM error response: status, `{"error":{"code","message","details"}}`, and any extra headers. */
export class ArmError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ArmErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    details: ArmErrorDetail[] = [],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  body(): { error: { code: string; message: string; details: ArmErrorDetail[] } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

const badRequest = (code: string, message: string, details: ArmErrorDetail[] = []): ArmError =>
  new ArmError(400, code, message, details);

// --- ARM front door -------------------------------------------------------------------------------------------

export const missingAuthorization = (): ArmError =>
  new ArmError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.");

export const invalidToken = (): ArmError =>
  new ArmError(401, "InvalidAuthenticationToken", "The access token is invalid.");

export const expiredToken = (expiry: Date, now: Date): ArmError =>
  new ArmError(
    401,
    "ExpiredAuthenticationToken",
    `The access token expiry UTC time '${expiry.toISOString()}' is earlier than current UTC time '${now.toISOString()}'.`,
  );

export const subscriptionNotFound = (subscriptionId: string): ArmError =>
  new ArmError(404, "SubscriptionNotFound", `The subscription '${subscriptionId}' could not be found.`);

export const missingApiVersion = (): ArmError =>
  badRequest(
    "MissingApiVersionParameter",
    "The api-version query parameter (?api-version=) is required for all requests.",
  );

export const unsupportedApiVersion = (
  apiVersion: string,
  type: string,
  location: string,
  supported: readonly string[],
): ArmError =>
  badRequest(
    "NoRegisteredProviderFound",
    `No registered resource provider found for location '${location}' and API version '${apiVersion}' for type '${type}'. ` +
      `The supported api-versions are '${supported.join(", ")}'.`,
  );

export const invalidResourceType = (type: string, namespace: string, apiVersion: string): ArmError =>
  badRequest(
    "InvalidResourceType",
    `The resource type '${type}' could not be found in the namespace '${namespace}' for api version '${apiVersion}'.`,
  );

export const invalidResourceNamespace = (namespace: string): ArmError =>
  badRequest("InvalidResourceNamespace", `The resource namespace '${namespace}' is invalid.`);

export const methodNotAllowed = (method: string): ArmError =>
  new ArmError(405, "MethodNotAllowed", `The requested resource does not support http method '${method}'.`);

export const resourceGroupNotFound = (name: string): ArmError =>
  new ArmError(404, "ResourceGroupNotFound", `Resource group '${name}' could not be found.`);

/** ARM returns this for a missing top-level resource. */
export const resourceNotFound = (type: string, name: string, resourceGroup: string): ArmError =>
  new ArmError(
    404,
    "ResourceNotFound",
    `The Resource '${type}/${name}' under resource group '${resourceGroup}' was not found. ` +
      "For more details please go to https://aka.ms/ARMResourceNotFoundFix",
  );

/** NRP returns this for a missing child resource (a backend pool, a subnet, a security rule...). */
export const childNotFound = (id: string): ArmError =>
  new ArmError(404, "NotFound", `Resource ${id} not found.`);

export const operationNotFound = (id: string): ArmError =>
  new ArmError(404, "NotFound", `Operation ${id} not found.`);

export const locationRequired = (): ArmError =>
  badRequest("LocationRequired", "The location property is required for this definition.");

export const locationNotAvailable = (
  location: string,
  type: string,
  available: readonly string[],
): ArmError =>
  badRequest(
    "LocationNotAvailableForResourceType",
    `The provided location '${location}' is not available for resource type '${type}'. ` +
      `List of available regions for the resource type is '${available.join(",")}'.`,
  );

export const invalidResourceName = (name: string): ArmError =>
  badRequest(
    "InvalidResourceName",
    `Resource name ${name} is invalid. The name can be up to 80 characters long. It must begin with a word character, ` +
      "and it must end with a word character or with '_'. The name may contain word characters or '.', '-', '_'.",
  );

export const invalidResourceGroupName = (name: string): ArmError =>
  badRequest(
    "InvalidResourceGroupName",
    `The provided resource group name '${name}' has these invalid characters: ''. The name can only be a letter, ` +
      "digit, '-', '.', '(', ')' or '_'.",
  );

/** ARM's answer to a body it cannot parse; the details name the property, like Newtonsoft's messages. */
export const invalidRequestFormat = (details: ArmErrorDetail[]): ArmError =>
  badRequest("InvalidRequestFormat", "Cannot parse the request.", details);

export const invalidJson = (message: string): ArmError =>
  invalidRequestFormat([{ code: "InvalidJson", message }]);

export const missingReferenceId = (path: string): ArmError =>
  invalidRequestFormat([
    { code: "MissingJsonReferenceId", message: `Value for reference id is missing. Path ${path}.` },
  ]);

export const linkedInvalidPropertyId = (value: string, path: string): ArmError =>
  badRequest(
    "LinkedInvalidPropertyId",
    `Property id '${value}' at path '${path}' is invalid. Expect fully qualified resource Id that start with ` +
      "'/subscriptions/{subscriptionId}' or '/providers/{resourceProviderNamespace}/'.",
  );

// --- tags, which ARM checks for every resource type -------------------------------------------------------------

/** ARM returns this, in these words, for tag names with any of `<>%&\?/` or a control character. */
export const invalidTagNameCharacters = (names: string[]): ArmError =>
  badRequest(
    "InvalidTagNameCharacters",
    `The tag names '${names.join(",")}' have reserved characters '<,>,%,&,\\,?,/' or control characters.`,
  );

/** ARM returns this, in these words, for a tag value over 256 characters. */
export const invalidTagValueLength = (value: string, max: number): ArmError =>
  badRequest(
    "InvalidTagValueLength",
    `Tag value too large.  Following tag value '${value}' exceeded the maximum length. Maximum allowed length for ` +
      `tag value - '${max}' characters.`,
  );

/**
 * Empty and over-long tag names, and too many tags: the limits are documented; these codes and words are the ones
 * Microsoft's Az.Migrate module reproduces from ARM, not seen in an ARM response on public record.
 */
export const emptyTagName = (): ArmError =>
  badRequest(
    "InvalidTagName",
    "The tag name must be non-null, non-empty and non-whitespace only. Please provide an actual value.",
  );

export const invalidTagNameLength = (name: string, max: number): ArmError =>
  badRequest(
    "InvalidTagName",
    `Tag key too large. Following tag name '${name}' exceeded the maximum length. Maximum allowed length for tag ` +
      `name - '${max}' characters.`,
  );

export const tooManyTags = (count: number, max: number): ArmError =>
  badRequest(
    "InvalidTags",
    `Too many tags specified. Requested tag count - '${count}'. Maximum number of tags allowed - '${max}'.`,
  );

// --- conditional requests and concurrency ---------------------------------------------------------------------

export const preconditionFailed = (header: string, value: string, id: string): ArmError =>
  new ArmError(
    412,
    "PreconditionFailed",
    `The condition '${header}: ${value}' is not met for resource ${id}. The resource may have been changed by another request.`,
  );

export const anotherOperationInProgress = (operationUrl: string): ArmError =>
  new ArmError(
    409,
    "AnotherOperationInProgress",
    "Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: " +
      `${operationUrl}.`,
  );

/** NRP answers 429 RetryableError when a referenced resource is still being provisioned. */
export const referencedResourceNotProvisioned = (
  referenced: string,
  referencing: string,
  state: string,
  operationName: string,
  retryAfterSeconds: number,
): ArmError =>
  new ArmError(
    429,
    "RetryableError",
    "A retryable error occurred.",
    [
      {
        code: "ReferencedResourceNotProvisioned",
        message:
          `Cannot proceed with operation because resource ${referenced} used by resource ${referencing} is not in ` +
          `Succeeded state. Resource is in ${state} state and the last operation that updated/is updating the ` +
          `resource is ${operationName}.`,
      },
    ],
    { "Retry-After": String(retryAfterSeconds) },
  );

export const throttled = (subscriptionId: string, operation: string, retryAfterSeconds: number): ArmError =>
  new ArmError(
    429,
    "SubscriptionRequestsThrottled",
    `Number of requests for subscription '${subscriptionId}' and operation '${operation}' exceeded the backend ` +
      `storage limit. Please try again after '${retryAfterSeconds}' seconds.`,
    [],
    { "Retry-After": String(retryAfterSeconds) },
  );

/**
 * A resource provider's own limit, in the shape ARM answers with for the resource providers' limits it enforces
 * (Microsoft.Cdn's, Microsoft.Authorization's, on public record); NRP's own code for its limits is not documented.
 */
export const resourceRequestsThrottled = (
  action: string,
  window: { limit: number; windowSeconds: number },
  retryAfterSeconds: number,
): ArmError =>
  new ArmError(
    429,
    "ResourceRequestsThrottled",
    `Number of requests for action '${action}' exceeded the limit of '${window.limit}' for time interval ` +
      `'${timeSpan(window.windowSeconds)}'. Please try again after '${retryAfterSeconds}' seconds.`,
    [],
    { "Retry-After": String(retryAfterSeconds) },
  );

/** .NET's TimeSpan text, as ARM prints intervals: 00:05:00. */
const timeSpan = (seconds: number): string =>
  [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, Math.floor(seconds) % 60]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");

export const transientServerError = (status: number): ArmError =>
  status === 503
    ? new ArmError(
        503,
        "ServiceUnavailable",
        "The service is temporarily unavailable. Please try again later.",
      )
    : new ArmError(status, "InternalServerError", "An error occurred.");
