import { MailwardenError } from '../errors.js';
import { isRecord } from '../json/record.js';
import { assertTrackingId } from '../tracking-id.js';
import { metadataTrackingId } from './metadata-value.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/** What `attachMailjetTrackingId` takes beside the tracking ID. */
export interface MailjetCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/**
 * Returns a copy of a Mailjet Send API v3.1 request (the body of `POST /v3.1/send`, `{ Messages: [...] }`,
 * as `node-mailjet`'s `post('send', { version: 'v3.1' }).request(...)` takes it), of one of its messages,
 * or of an array of messages, each message carrying the tracking ID in `EventPayload` as the JSON object
 * `{"service_id": …}`. Mailjet echoes `EventPayload` in every event as `Payload`
 * (docs/providers/mailjet.md#the-tracking-id-eventpayload).
 *
 * The caller's own `EventPayload` is kept when it is a JSON object: ours is merged into it (`service_id`
 * and, with `options.stream`, `service_stream` replaced), the rest kept. An `EventPayload` that is not a
 * JSON object (CSV, XML, a bare string) cannot hold a second value without changing what the caller
 * reads back, and Mailjet echoes no other free field, so it throws `tracking_id_not_carriable`. Our JSON
 * is written in ASCII (`\u` escapes), so an ID of any script comes back unchanged however Mailjet relays
 * it. `CustomID` is the caller's and is never touched.
 *
 * With `options.unsubscribe`, each message gets `Headers` `List-Unsubscribe` and `List-Unsubscribe-Post`
 * with the link of its one `To` recipient (replacing those it had): a Mailjet message is per recipient
 * when it has one `To`; a message with several throws `unsubscribe_not_carriable`.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream,
 * `tracking_id_not_carriable` as above, and `invalid_request` when `EventPayload` is not a string or
 * `Headers` not an object.
 *
 * @example
 * await mailjet.post('send', { version: 'v3.1' }).request(attachMailjetTrackingId({
 *   Messages: [{ From: { Email: 'news@example.com' }, To: [{ Email: 'jane@example.com' }], Subject: 'Hello', TextPart: 'Hi' }],
 * }, 'welcome-2026'));
 */
export function attachMailjetTrackingId<T extends object>(request: T, trackingId: string, options: MailjetCarrierOptions = {}): T {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const attach = (message: unknown, where: string): unknown => {
    if (!isRecord(message)) throw new MailwardenError('invalid_request', `${where} must be an object.`);
    return withUnsubscribe(withEventPayload(message, id, stream, where), options, where);
  };
  if (Array.isArray(request)) return request.map((message: unknown, index) => attach(message, `Mailjet message [${index}]`)) as T;
  const source = request as Record<string, unknown>;
  const messages = source['Messages'];
  if (messages === undefined) return attach(source, 'The Mailjet message') as T;
  if (!Array.isArray(messages)) throw new MailwardenError('invalid_request', 'Mailjet Messages must be an array of messages.');
  return { ...source, Messages: messages.map((message: unknown, index) => attach(message, `Mailjet Messages[${index}]`)) } as T;
}

/**
 * The tracking ID of a Mailjet event: `service_id` of the JSON object in `Payload` (the message's
 * `EventPayload`), a number as its decimal string; `null` when absent or when `Payload` is no JSON object.
 *
 * @example
 * readMailjetTrackingId({ event: 'sent', Payload: '{"service_id":"welcome-2026"}' }); // 'welcome-2026'
 */
export function readMailjetTrackingId(event: unknown): string | null {
  const payload = payloadObject(event);
  return payload === undefined ? null : metadataTrackingId(payload['service_id']);
}

/**
 * The stream of a Mailjet event: `service_stream` of the JSON object in `Payload`; `null` when absent.
 *
 * @example
 * readMailjetStream({ event: 'open', Payload: '{"service_id":"a","service_stream":"weekly-digest"}' }); // 'weekly-digest'
 */
export function readMailjetStream(event: unknown): string | null {
  const payload = payloadObject(event);
  return payload === undefined ? null : carriedStream(payload[SERVICE_STREAM_KEY]);
}

function payloadObject(event: unknown): Record<string, unknown> | undefined {
  if (!isRecord(event)) return undefined;
  const payload = event['Payload'];
  // Mailjet echoes the string it was given; an object is taken as the same JSON already parsed.
  if (isRecord(payload)) return payload;
  if (typeof payload !== 'string' || !payload.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(payload);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function withEventPayload(
  message: Record<string, unknown>,
  id: string,
  stream: string | undefined,
  where: string,
): Record<string, unknown> {
  const existing = message['EventPayload'];
  let own: Record<string, unknown> = {};
  if (existing !== undefined && existing !== null && existing !== '') {
    if (typeof existing !== 'string') throw new MailwardenError('invalid_request', `The EventPayload of ${lower(where)} must be a string.`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      throw new MailwardenError(
        'tracking_id_not_carriable',
        `The EventPayload of ${lower(where)} is not a JSON object, so it cannot also hold the tracking ID, and Mailjet ` +
          'echoes no other free field; make it a JSON object (its other keys are kept) or move its value to CustomID.',
      );
    }
    own = parsed;
  }
  const payload = { ...own, service_id: id, ...(stream === undefined ? {} : { [SERVICE_STREAM_KEY]: stream }) };
  return { ...message, EventPayload: asciiJson(payload) };
}

/** JSON with every character past ASCII as `\uXXXX`: SMTP-safe, and parsed back to the same text. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A message with the unsubscribe headers of its one `To` recipient in `Headers`, if it has a link. */
function withUnsubscribe(
  message: Record<string, unknown>,
  options: UnsubscribeCarrierOptions | undefined,
  where: string,
): Record<string, unknown> {
  const headers = unsubscribeHeadersOf(options, recipientAddresses(message['To']), where);
  if (headers === undefined) return message;
  const existing = message['Headers'];
  if (existing !== undefined && existing !== null && !isRecord(existing)) {
    throw new MailwardenError('invalid_request', `Mailjet Headers of ${lower(where)} must be an object of header values.`);
  }
  const kept = Object.entries(existing ?? {}).filter(([name]) => !isUnsubscribeHeaderName(name));
  return { ...message, Headers: { ...Object.fromEntries(kept), ...headers } };
}

function lower(where: string): string {
  return where.charAt(0).toLowerCase() + where.slice(1);
}
