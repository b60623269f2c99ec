import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { isRecord } from '../json/record.js';
import { metadataTrackingId } from './metadata-value.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/** What `attachSendGridTrackingId` takes beside the tracking ID. */
export interface SendGridCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/** "Total custom_args size may not exceed 10,000 bytes" (SendGrid v3 mail send reference). */
export const SENDGRID_CUSTOM_ARGS_MAX_BYTES = 10_000;

/** The custom arguments of a message or a personalization: string values only, as SendGrid requires. */
export type SendGridCustomArgs = Readonly<Record<string, unknown>>;

/**
 * The fields of a v3 personalization this carrier touches; the caller's other fields pass through (the
 * `& object` keeps inline literals with `to`, `subject`… from failing the excess-property check).
 */
export type SendGridPersonalization = {
  custom_args?: SendGridCustomArgs;
  /** The `@sendgrid/mail` spelling, which the SDK sends as `custom_args`. */
  customArgs?: SendGridCustomArgs;
} & object;

/** The fields of a v3 mail send body (or an `@sendgrid/mail` message) this carrier touches. */
export type SendGridMailRequest = {
  personalizations?: readonly SendGridPersonalization[];
  custom_args?: SendGridCustomArgs;
  customArgs?: SendGridCustomArgs;
} & object;

/**
 * Returns a copy of a SendGrid v3 mail send body (`POST /v3/mail/send`, or the message object of
 * `@sendgrid/mail`'s `send`) carrying the tracking ID as `custom_args.service_id`, plain, both on the
 * message (so personalizations added later carry it too) and on every personalization (which wins at
 * SendGrid, so a caller's own personalization-level `service_id` cannot shadow ours).
 *
 * The SDK's camelCase `customArgs` is folded into `custom_args` (the key the API documents; the snake_case
 * value wins a clash) and removed, so no conflicting copy remains.
 *
 * With `options.stream`, the stream travels the same way as `custom_args.service_stream`.
 *
 * With `options.unsubscribe`, each personalization gets `headers` `List-Unsubscribe` and
 * `List-Unsubscribe-Post` with the link of its one `to` recipient (replacing those it had); a message
 * without personalizations (`@sendgrid/mail` with a top-level `to`) gets them in its `headers`. A
 * personalization (or message) with several `to` recipients throws `unsubscribe_not_carriable`: give
 * each recipient a personalization of its own.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream, `invalid_request` when a `custom_args` is not an object,
 * and `tracking_id_not_carriable` when the custom args a recipient ends up with exceed 10,000 bytes (keys
 * plus values in UTF-8).
 *
 * @example
 * await sgMail.send(attachSendGridTrackingId({
 *   to: 'jane@example.com',
 *   from: 'news@example.com',
 *   subject: 'Hello',
 *   text: 'Hi',
 * }, 'welcome-2026', { stream: 'weekly-digest' }));
 */
export function attachSendGridTrackingId<T extends SendGridMailRequest>(
  request: T,
  trackingId: string,
  options?: SendGridCarrierOptions,
): T {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const ours = stream === undefined ? { service_id: id } : { service_id: id, [SERVICE_STREAM_KEY]: stream };
  const messageArgs = { ...customArgsOf(request, 'the message'), ...ours };
  checkSize(messageArgs);
  const next: Record<string, unknown> = withCustomArgs(request, messageArgs);
  if (Array.isArray(request.personalizations)) {
    next['personalizations'] = request.personalizations.map((personalization: unknown, index) => {
      if (!isRecord(personalization)) return personalization;
      const own = { ...customArgsOf(personalization, `personalizations[${index}]`), ...ours };
      checkSize({ ...messageArgs, ...own });
      const where = `SendGrid personalizations[${index}]`;
      return withUnsubscribe(withCustomArgs(personalization, own), options, recipientAddresses(personalization['to']), where);
    });
  } else if (options?.unsubscribe !== undefined) {
    const where = 'The SendGrid message (no personalizations)';
    return withUnsubscribe(next, options, recipientAddresses((request as Record<string, unknown>)['to']), where) as T;
  }
  return next as T;
}

/**
 * The tracking ID of one SendGrid event object: its top-level `service_id` key, where SendGrid flattens
 * custom args. A number (possible through the legacy SMTP API's `unique_args`) comes back as its decimal
 * string; `null` when absent, empty or of another type.
 *
 * @example
 * for (const event of JSON.parse(body)) console.log(event.event, readSendGridTrackingId(event));
 */
export function readSendGridTrackingId(event: unknown): string | null {
  if (!isRecord(event)) return null;
  return metadataTrackingId(event['service_id']);
}

/** The custom args of a message or personalization, camelCase and snake_case merged. */
/**
 * The stream of one SendGrid event object: its top-level `service_stream` key (custom args are flattened
 * there); `null` when absent.
 *
 * @example
 * readSendGridStream({ event: 'delivered', service_stream: 'weekly-digest' }); // 'weekly-digest'
 */
export function readSendGridStream(event: unknown): string | null {
  return isRecord(event) ? carriedStream(event[SERVICE_STREAM_KEY]) : null;
}

/** A personalization (or message) with the unsubscribe headers of its one recipient in its `headers`, if it has a link. */
function withUnsubscribe(
  owner: Record<string, unknown>,
  options: UnsubscribeCarrierOptions | undefined,
  recipients: string[],
  where: string,
): Record<string, unknown> {
  const headers = unsubscribeHeadersOf(options, recipients, where);
  if (headers === undefined) return owner;
  const existing = owner['headers'];
  if (existing !== undefined && existing !== null && !isRecord(existing)) {
    throw new MailwardenError('invalid_request', `SendGrid headers of ${where} must be an object.`);
  }
  const kept = Object.entries(existing ?? {}).filter(([name]) => !isUnsubscribeHeaderName(name));
  return { ...owner, headers: { ...Object.fromEntries(kept), ...headers } };
}

function customArgsOf(owner: object, where: string): Record<string, unknown> {
  const { custom_args: snake, customArgs: camel } = owner as SendGridPersonalization;
  for (const [name, value] of [
    ['custom_args', snake],
    ['customArgs', camel],
  ] as const) {
    if (value !== undefined && value !== null && !isRecord(value)) {
      throw new MailwardenError('invalid_request', `SendGrid ${name} of ${where} must be an object.`);
    }
  }
  return { ...camel, ...snake };
}

function withCustomArgs(owner: object, args: Record<string, unknown>): Record<string, unknown> {
  const { customArgs: _dropped, ...rest } = owner as Record<string, unknown>;
  return { ...rest, custom_args: args };
}

/**
 * SendGrid does not say how it measures the size; counting keys and values in UTF-8 (no JSON punctuation)
 * is the smallest reading, so the helper refuses only what SendGrid would refuse under any reading.
 */
function customArgsBytes(args: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(args)) {
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 'utf8');
  }
  return bytes;
}

function checkSize(args: Readonly<Record<string, unknown>>): void {
  const bytes = customArgsBytes(args);
  if (bytes > SENDGRID_CUSTOM_ARGS_MAX_BYTES) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `SendGrid custom_args would be ${bytes} bytes, over its 10,000-byte limit; SendGrid events carry no other ` +
        'field for the tracking ID, so shrink the other custom_args.',
    );
  }
}
