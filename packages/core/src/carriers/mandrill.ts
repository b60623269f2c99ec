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

/** What `attachMandrillTrackingId` takes beside the tracking ID. */
export interface MandrillCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/**
 * Mandrill limits a message's metadata to 200 bytes of JSON (the newer Mailchimp Transactional article
 * says 250; the smaller, older figure is the safe one).
 */
export const MANDRILL_METADATA_MAX_BYTES = 200;

/**
 * Returns a copy of a Mandrill send request (the body of `messages/send` or `messages/send-template`, or
 * the argument of `@mailchimp/mailchimp_transactional`'s `messages.send`) carrying the tracking ID as
 * `message.metadata.service_id`. Mandrill lets `recipient_metadata` values override the message's, so an
 * entry that has its own `service_id` gets ours instead.
 *
 * With `options.stream`, the stream travels the same way as `metadata.service_stream`.
 *
 * With `options.unsubscribe`, `message.headers` gets `List-Unsubscribe` and `List-Unsubscribe-Post` with
 * the link of the message's one `to` recipient (type `to` or none; replacing those it had). Mandrill has
 * no headers per recipient (`preserve_recipients: false` sends each a copy with the same headers), so a
 * message to several throws `unsubscribe_not_carriable`: send one request per recipient.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream; `tracking_id_not_carriable` when the metadata, the
 * caller's plus ours, is over 200 bytes of JSON for some recipient (measured as `JSON.stringify` writes
 * it, in UTF-8); `invalid_request` when `metadata` is not an object.
 *
 * @example
 * await mailchimp.messages.send(attachMandrillTrackingId({
 *   message: { from_email: 'news@example.com', to: [{ email: 'jane@example.com' }], subject: 'Hello', text: 'Hi' },
 * }, 'welcome-2026'));
 */
export function attachMandrillTrackingId<R extends { message: object }>(
  request: R,
  trackingId: string,
  options?: MandrillCarrierOptions,
): MandrillWithTrackingId<R> {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const ours = stream === undefined ? { service_id: id } : { service_id: id, [SERVICE_STREAM_KEY]: stream };
  const message = request.message as Record<string, unknown>;
  const metadata = { ...metadataOf(message['metadata'], 'message.metadata'), ...ours };
  checkSize(metadata);
  const next: Record<string, unknown> = { ...message, metadata };
  const perRecipient = message['recipient_metadata'];
  if (Array.isArray(perRecipient)) {
    next['recipient_metadata'] = perRecipient.map((entry: unknown, index) => {
      if (!isRecord(entry)) return entry;
      const values = metadataOf(entry['values'], `message.recipient_metadata[${index}].values`);
      if (values === undefined || !('service_id' in values || (stream !== undefined && SERVICE_STREAM_KEY in values))) {
        checkSize({ ...metadata, ...values });
        return entry;
      }
      const nextValues = { ...values, ...ours };
      checkSize({ ...metadata, ...nextValues });
      return { ...entry, values: nextValues };
    });
  }
  const to = Array.isArray(message['to'])
    ? message['to'].filter((entry: unknown) => !isRecord(entry) || (entry['type'] ?? 'to') === 'to')
    : [];
  const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(to), 'The Mandrill message');
  if (unsubscribe !== undefined) {
    const existing = message['headers'];
    if (existing !== undefined && existing !== null && !isRecord(existing)) {
      throw new MailwardenError('invalid_request', 'Mandrill message.headers must be an object.');
    }
    const kept = Object.entries(existing ?? {}).filter(([name]) => !isUnsubscribeHeaderName(name));
    next['headers'] = { ...Object.fromEntries(kept), ...unsubscribe };
  }
  return { ...request, message: next } as MandrillWithTrackingId<R>;
}

/** A Mandrill send request whose message now has `metadata`. */
export type MandrillWithTrackingId<R> = R & { message: { metadata: Record<string, unknown> } };

/**
 * The tracking ID of a Mandrill message event: `msg.metadata.service_id`, a number as its decimal string;
 * `null` when absent.
 */
export function readMandrillTrackingId(event: unknown): string | null {
  if (!isRecord(event) || !isRecord(event['msg']) || !isRecord(event['msg']['metadata'])) return null;
  return metadataTrackingId(event['msg']['metadata']['service_id']);
}

/**
 * The stream of a Mandrill message event: `msg.metadata.service_stream`; `null` when absent.
 *
 * @example
 * readMandrillStream({ event: 'send', msg: { metadata: { service_stream: 'weekly-digest' } } }); // 'weekly-digest'
 */
export function readMandrillStream(event: unknown): string | null {
  if (!isRecord(event) || !isRecord(event['msg']) || !isRecord(event['msg']['metadata'])) return null;
  return carriedStream(event['msg']['metadata'][SERVICE_STREAM_KEY]);
}

function metadataOf(value: unknown, where: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (isRecord(value)) return value;
  throw new MailwardenError('invalid_request', `Mandrill ${where} must be an object.`);
}

function checkSize(metadata: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > MANDRILL_METADATA_MAX_BYTES) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `Mandrill metadata would be ${bytes} bytes of JSON, over its ${MANDRILL_METADATA_MAX_BYTES}-byte limit; ` +
        'Mandrill events carry no other field for it, so use a shorter tracking ID or less metadata.',
    );
  }
}
