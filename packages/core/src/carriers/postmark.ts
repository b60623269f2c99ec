import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { isRecord } from '../json/record.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/** What `attachPostmarkTrackingId` takes beside the tracking ID. */
export interface PostmarkCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/** Postmark refuses `Metadata` with more fields than this, counting the caller's own. */
export const POSTMARK_METADATA_MAX_FIELDS = 10;
/**
 * Postmark refuses metadata values longer than 80 characters. Its service counts .NET string length
 * (UTF-16 code units), which is never less than the code point count, so chunks are measured in code units.
 */
export const POSTMARK_METADATA_VALUE_MAX = 80;

/** `service_id`, `service_id_2`, `service_id_3`, …: the keys a tracking ID is split over. */
export function postmarkTrackingIdKey(index: number): string {
  return index === 0 ? 'service_id' : `service_id_${index + 1}`;
}

/** Our keys, whatever the caller already wrote there: they are replaced, never mixed with ours. */
const OWN_KEY = /^service_id(_\d+)?$/;

/**
 * Splits a tracking ID into values Postmark accepts: in order, on code point boundaries, each at most
 * 80 UTF-16 code units (so at most 80 characters by either count). One chunk when it fits as is.
 */
export function splitPostmarkTrackingId(trackingId: string): string[] {
  const chunks: string[] = [];
  let chunk = '';
  for (const char of trackingId) {
    if (chunk.length + char.length > POSTMARK_METADATA_VALUE_MAX) {
      chunks.push(chunk);
      chunk = '';
    }
    chunk += char;
  }
  if (chunk !== '') chunks.push(chunk);
  return chunks;
}

/**
 * Returns a copy of a Postmark message (the body of `POST /email` or `/email/withTemplate`, or the
 * `postmark` SDK's `sendEmail` argument), or of a batch (an array of them), carrying the tracking ID in
 * `Metadata`: plain `service_id` when it fits 80 characters, else split in order over `service_id`,
 * `service_id_2`, … . Keys `service_id` and `service_id_<n>` belong to this carrier: existing ones are
 * replaced.
 *
 * With `options.stream`, the stream travels as `Metadata.service_stream` (a stream name always fits one
 * value). Not in Postmark's own `MessageStream` field: that one must name a message stream that exists in
 * the Postmark account, and the request's `MessageStream`, if any, is left as it is.
 *
 * With `options.unsubscribe`, each message gets `Headers` `List-Unsubscribe` and `List-Unsubscribe-Post`
 * with the link of its one `To` recipient (replacing those it had). A batch is one message per
 * recipient, so each carries its own; a message with several `To` recipients throws
 * `unsubscribe_not_carriable`.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream; `tracking_id_not_carriable` when the caller's fields plus
 * ours exceed Postmark's 10 fields, or a caller key equals one of ours but for case (Postmark refuses
 * keys differing only by case); `invalid_request` when `Metadata` is not an object.
 *
 * @example
 * await client.sendEmail(attachPostmarkTrackingId({
 *   From: 'news@example.com', To: 'jane@example.com', Subject: 'Hello', TextBody: 'Hi',
 * }, 'welcome-2026'));
 */
export function attachPostmarkTrackingId<M extends object>(
  messages: readonly M[],
  trackingId: string,
  options?: PostmarkCarrierOptions,
): PostmarkWithTrackingId<M>[];
export function attachPostmarkTrackingId<M extends object>(
  message: M,
  trackingId: string,
  options?: PostmarkCarrierOptions,
): PostmarkWithTrackingId<M>;
export function attachPostmarkTrackingId<M extends object>(
  message: M | readonly M[],
  trackingId: string,
  options?: PostmarkCarrierOptions,
): PostmarkWithTrackingId<M> | PostmarkWithTrackingId<M>[] {
  const chunks = splitPostmarkTrackingId(assertTrackingId(trackingId));
  const stream = streamToCarry(options);
  if (Array.isArray(message)) {
    return message.map((one: M, index) =>
      withUnsubscribe(attachOne(one, chunks, stream), options, `Postmark message [${index}] of the batch`),
    );
  }
  return withUnsubscribe(attachOne(message as M, chunks, stream), options, 'The Postmark message');
}

/**
 * The stream of a Postmark webhook record: `Metadata.service_stream` (not `MessageStream`, which names
 * the Postmark message stream); `null` when absent.
 *
 * @example
 * readPostmarkStream({ RecordType: 'Delivery', Metadata: { service_stream: 'weekly-digest' } }); // 'weekly-digest'
 */
export function readPostmarkStream(record: unknown): string | null {
  if (!isRecord(record) || !isRecord(record['Metadata'])) return null;
  return carriedStream(record['Metadata'][SERVICE_STREAM_KEY]);
}

/**
 * The tracking ID of a Postmark webhook record: `Metadata.service_id`, `service_id_2`, … joined in order
 * up to the first missing one; `null` when absent. Postmark returns metadata values as strings.
 */
export function readPostmarkTrackingId(record: unknown): string | null {
  if (!isRecord(record) || !isRecord(record['Metadata'])) return null;
  const metadata = record['Metadata'];
  let trackingId = '';
  for (let index = 0; index < POSTMARK_METADATA_MAX_FIELDS; index++) {
    const value = metadata[postmarkTrackingIdKey(index)];
    if (typeof value !== 'string' || value === '') break;
    trackingId += value;
  }
  return trackingId === '' ? null : trackingId;
}

/** A Postmark message that now has `Metadata`. */
export type PostmarkWithTrackingId<M> = M & { Metadata: Record<string, string> };

/** A message with the unsubscribe headers of its one `To` recipient in `Headers`, if it has a link. */
function withUnsubscribe<T extends object>(message: T, options: UnsubscribeCarrierOptions | undefined, where: string): T {
  const source = message as Record<string, unknown>;
  const headers = unsubscribeHeadersOf(options, recipientAddresses(source['To']), where);
  if (headers === undefined) return message;
  const existing = source['Headers'];
  if (existing !== undefined && existing !== null && !Array.isArray(existing)) {
    throw new MailwardenError('invalid_request', `Postmark Headers of ${where.toLowerCase()} must be an array of { Name, Value }.`);
  }
  const kept = ((existing ?? []) as unknown[]).filter((header) => !(isRecord(header) && isUnsubscribeHeaderName(header['Name'])));
  return { ...source, Headers: [...kept, ...Object.entries(headers).map(([Name, Value]) => ({ Name, Value }))] } as T;
}

function attachOne<M extends object>(message: M, chunks: string[], stream: string | undefined): PostmarkWithTrackingId<M> {
  const source = message as Record<string, unknown>;
  const existing = source['Metadata'];
  if (existing !== undefined && existing !== null && !isRecord(existing)) {
    throw new MailwardenError('invalid_request', 'Postmark Metadata must be an object of strings.');
  }
  const ours = chunks.map((_, index) => postmarkTrackingIdKey(index));
  if (stream !== undefined) ours.push(SERVICE_STREAM_KEY);
  const kept = Object.entries(existing ?? {}).filter(
    ([key]) => !OWN_KEY.test(key) && !(stream !== undefined && key === SERVICE_STREAM_KEY),
  );
  const clash = kept.find(([key]) => ours.includes(key.toLowerCase()));
  if (clash !== undefined) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `Postmark Metadata key "${clash[0]}" differs from the tracking ID's key only by case, which Postmark refuses; rename it.`,
    );
  }
  if (kept.length + ours.length > POSTMARK_METADATA_MAX_FIELDS) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `The tracking ID${stream === undefined ? '' : ' and the stream'} need${stream === undefined ? 's' : ''} ${ours.length} Postmark Metadata fields and the message has ${kept.length} others, ` +
        `over Postmark's ${POSTMARK_METADATA_MAX_FIELDS}; Postmark webhooks carry no other field for it, so drop some metadata.`,
    );
  }
  const metadata: Record<string, unknown> = Object.fromEntries(kept);
  chunks.forEach((chunk, index) => (metadata[ours[index]!] = chunk));
  if (stream !== undefined) metadata[SERVICE_STREAM_KEY] = stream;
  return { ...source, Metadata: metadata } as PostmarkWithTrackingId<M>;
}
