import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { isRecord } from '../json/record.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/**
 * What `attachPostalTrackingId` takes beside the tracking ID. No `stream`: Postal's one tag holds the
 * tracking ID, and Postal reports no unsubscribes a stream would scope (docs/providers/postal.md#streams).
 */
export interface PostalCarrierOptions extends UnsubscribeCarrierOptions {
  /** Not carriable with Postal: a stream other than `null`/`undefined` throws `tracking_id_not_carriable`. */
  stream?: null | undefined;
}

/**
 * Postal stores a message's tag in a `varchar(255)` column of a utf8mb4 table: 255 characters (code
 * points), whatever their UTF-8 size. A tracking ID has at most 128 code points, so it always fits.
 */
export const POSTAL_TAG_MAX_CHARACTERS = 255;

/** The header Postal reads a tag from when the request sets none (docs/providers/postal.md#attaching-the-tracking-id). */
export const POSTAL_TAG_HEADER = 'X-Postal-Tag';

/**
 * Returns a copy of a Postal message (the JSON body of `POST /api/v1/send/message`) carrying the tracking
 * ID as its `tag`, verbatim: Postal echoes the tag as `message.tag` in every message webhook, and has no
 * other field that comes back (it never echoes `headers`). Postal keeps one tag per message, so a message
 * that already has another tag (`tag`, or an `X-Postal-Tag` header) throws `tracking_id_not_carriable`:
 * the two cannot travel together, and dropping the caller's would lose it silently.
 *
 * With `options.unsubscribe`, the message gets `headers` `List-Unsubscribe` and `List-Unsubscribe-Post`
 * with the link of its one `to` recipient (replacing those it had); a message to several `to` recipients
 * throws `unsubscribe_not_carriable` (send one message per recipient).
 *
 * Throws `invalid_tracking_id` for an invalid ID, `tracking_id_not_carriable` as above and for a stream
 * (Postal's one tag cannot hold it beside the ID), `invalid_request` when `headers` is not an object.
 *
 * @example
 * await fetch('https://postal.example.com/api/v1/send/message', {
 *   method: 'POST',
 *   headers: { 'Content-Type': 'application/json', 'X-Server-API-Key': key },
 *   body: JSON.stringify(attachPostalTrackingId({
 *     to: ['jane@example.com'], from: 'news@example.com', subject: 'Hello', plain_body: 'Hi',
 *   }, 'welcome-2026')),
 * });
 */
export function attachPostalTrackingId<M extends object>(
  message: M,
  trackingId: string,
  options?: PostalCarrierOptions,
): PostalWithTrackingId<M> {
  const tag = assertTrackingId(trackingId);
  if (options?.stream != null) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      'Postal carries one tag per message, and it holds the tracking ID: the stream cannot travel with a Postal message (docs/providers/postal.md#streams). Postal reports no unsubscribes, so send without { stream }.',
    );
  }
  const source = message as Record<string, unknown>;
  const headers = source['headers'];
  if (headers !== undefined && headers !== null && !isRecord(headers)) {
    throw new MailwardenError('invalid_request', 'Postal headers must be an object of header names to values.');
  }
  const own = [
    source['tag'],
    ...Object.entries(headers ?? {}).flatMap(([name, value]) => (name.toLowerCase() === 'x-postal-tag' ? [value] : [])),
  ];
  const other = own.find((value) => value !== undefined && value !== null && value !== '' && value !== tag);
  if (other !== undefined) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `The Postal message already has the tag ${JSON.stringify(other)}; Postal keeps one tag per message and its webhooks carry nothing else, so the tracking ID cannot travel beside it. Drop the tag, or use it as the tracking ID.`,
    );
  }
  const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(source['to']), 'The Postal message');
  const result: Record<string, unknown> = { ...source, tag };
  if (unsubscribe !== undefined) {
    const kept = Object.entries(headers ?? {}).filter(([name]) => !isUnsubscribeHeaderName(name));
    result['headers'] = { ...Object.fromEntries(kept), ...unsubscribe };
  }
  return result as PostalWithTrackingId<M>;
}

/**
 * The tracking ID of a Postal webhook payload: its message's `tag` (`payload.message.tag`, or for a
 * `MessageBounced` the `original_message.tag`), verbatim; `null` when absent or empty.
 *
 * @example
 * readPostalTrackingId({ status: 'Sent', message: { id: 1042, tag: 'welcome-2026' } }); // 'welcome-2026'
 */
export function readPostalTrackingId(payload: unknown): string | null {
  if (!isRecord(payload)) return null;
  const message = isRecord(payload['original_message']) ? payload['original_message'] : payload['message'];
  if (!isRecord(message)) return null;
  const tag = message['tag'];
  return typeof tag === 'string' && tag !== '' ? tag : null;
}

/** A Postal message that now has `tag` (whatever type the caller's own `tag` had: `null`, empty). */
export type PostalWithTrackingId<M> = Omit<M, 'tag'> & { tag: string };
