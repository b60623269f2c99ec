import { MailwardenError } from './errors.js';

/**
 * A stream names a kind of mail (`marketing`, `weekly-digest`, `product-updates`): messages carry it, and
 * an unsubscribe blocks that kind only (docs/decisions.md#streams). Its name is 1 to 64 lower-case ASCII
 * letters, digits, `-` and `_`, starting with a letter or digit: a name that fits every provider's
 * carrier as it is (Postmark's message stream IDs have this shape too) and needs no escaping in a key,
 * a header or a URL.
 */
export const MAX_STREAM_LENGTH = 64;

export const STREAM_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Whether `value` is a valid stream name (see `MAX_STREAM_LENGTH`). */
export function isStreamName(value: unknown): value is string {
  return typeof value === 'string' && STREAM_NAME.test(value);
}

/**
 * Validates a stream given by a caller (a query, a body field, a send helper), or throws
 * `invalid_stream`. Names are taken exactly as given: `Marketing` is refused, not folded.
 *
 * @example
 * assertStreamName('weekly-digest'); // 'weekly-digest'
 */
export function assertStreamName(value: string): string {
  if (isStreamName(value)) return value;
  throw new MailwardenError(
    'invalid_stream',
    `stream must be 1 to ${MAX_STREAM_LENGTH} lower-case letters, digits, '-' and '_', starting with a letter or digit`,
  );
}
