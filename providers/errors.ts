// Errors a provider raises, classified so the controller knows whether retrying can help.

/**
 * The Service asks for something that cannot be done as written. Retrying does not help; the user must
 * change the field named here. Becomes a Warning Event and a condition, and nothing is created.
 */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
  readonly reason: string;
  readonly field: string;
  readonly fix: string;
  constructor(reason: string, field: string, problem: string, fix: string) {
    super(fix ? `${field}: ${problem}; ${fix}` : `${field}: ${problem}`);
    this.reason = reason;
    this.field = field;
    this.fix = fix;
  }
}

/**
 * A cloud API call failed. `retryable` errors (throttling, 5xx, conflicts) are retried with backoff,
 * honouring `retryAfterMs`; permanent ones (validation, access denied) are reported and retried only slowly.
 */
export class CloudError extends Error {
  override name = "CloudError";
  readonly operation: string;
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(opts: {
    operation: string;
    code: string;
    message: string;
    retryable: boolean;
    retryAfterMs?: number;
  }) {
    super(`${opts.operation} failed: ${opts.code}: ${opts.message}`);
    this.operation = opts.operation;
    this.code = opts.code;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}
