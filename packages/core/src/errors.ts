/**
 * Every failure mailwarden reports has a stable `code`. This table is the one place that maps a code to
 * its HTTP status; the HTTP handler, the docs and the OpenAPI document all read it.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_email: 400,
  invalid_cursor: 400,
  batch_too_large: 400,
  invalid_tracking_id: 400,
  invalid_stream: 400,
  invalid_payload: 400,
  invalid_unsubscribe_token: 400,
  tracking_id_not_carriable: 400,
  unsubscribe_not_carriable: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  webhook_unauthorized: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  suppression_not_found: 404,
  allowlist_entry_not_found: 404,
  unsubscribe_links_not_configured: 404,
  change_feed_not_configured: 404,
  alerts_not_configured: 404,
  endpoint_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  change_cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  store_unavailable: 503,
  verification_unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

export const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/** Where each code is explained, so a user who meets one in a log can look it up. */
export function errorDocsUrl(code: ErrorCode): string {
  return `https://github.com/mailwarden/mailwarden/blob/main/docs/errors.md#${code}`;
}

export interface MailwardenErrorOptions {
  details?: unknown;
  cause?: unknown;
}

/**
 * The one error class mailwarden throws on purpose. `code` is stable and documented in docs/errors.md;
 * `message` is a sentence for humans; `details` is JSON-safe data for callers (for example the offending
 * entries of a batch).
 *
 * @example
 * try {
 *   await mailwarden.suppressions.remove('acme', hash);
 * } catch (error) {
 *   if (isMailwardenError(error) && error.code === 'suppression_not_found') return;
 *   throw error;
 * }
 */
/** On every MailwardenError, whichever copy of the package made it; `Symbol.for` is one symbol per realm. */
const errorBrand = Symbol.for('@mailwarden/error');

export class MailwardenError extends Error {
  override readonly name = 'MailwardenError';
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: MailwardenErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  get [errorBrand](): true {
    return true;
  }

  /** The error body of every non-2xx HTTP response: `{ error: { code, message, details? } }`. */
  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/**
 * Whether `error` is a mailwarden error: of this copy of the package, or of another one (CommonJS loaded
 * beside ESM, or two versions in one app), which `instanceof` alone would miss, so a store's
 * `store_unavailable` would turn into a 500.
 */
export function isMailwardenError(error: unknown): error is MailwardenError {
  return (
    error instanceof MailwardenError ||
    (typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[errorBrand] === true)
  );
}
