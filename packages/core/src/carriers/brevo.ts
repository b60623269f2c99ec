import { MailwardenError } from '../errors.js';
import { jsonObjectMembers, type JsonMemberText } from '../json/members.js';
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

/** The header Brevo echoes verbatim, as this field of every webhook event (docs/providers/brevo.md#attaching-the-tracking-id). */
export const BREVO_CUSTOM_HEADER = 'X-Mailin-custom';

export interface BrevoCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/** The email an attach helper returns: the caller's, with `headers` that hold `X-Mailin-custom`. */
export type BrevoWithTrackingId<T> = T & { headers: Record<string, unknown> };

const isCustomHeader = (name: string) => name.toLowerCase() === BREVO_CUSTOM_HEADER.toLowerCase();

/**
 * Returns a copy of a Brevo transactional email (`POST /v3/smtp/email` body, or what `@getbrevo/brevo`'s
 * `transactionalEmails.sendTransacEmail` takes) whose `headers` carry the tracking ID in `X-Mailin-custom`
 * as the JSON object `{"service_id": …}`, which Brevo echoes in every event of the message.
 *
 * The header is written in ASCII: every character from DEL up as a `\uXXXX` JSON escape, since Brevo
 * mishandles raw non-ASCII in custom headers. A caller's own `X-Mailin-custom` (any case) that is a JSON
 * object keeps its other members as written (line breaks between tokens become spaces); one that is not
 * a JSON object cannot share the one header, so the helper throws `tracking_id_not_carriable`. `tags`
 * and the other headers are kept as they are.
 *
 * With `options.stream`, the stream travels beside it as `service_stream`. With `options.unsubscribe`,
 * `headers` get `List-Unsubscribe` and `List-Unsubscribe-Post` with the link of the message's one
 * recipient (`to`, or the `to` of its `messageVersions`); Brevo's headers are per request, so a request to
 * several recipients throws `unsubscribe_not_carriable`.
 *
 * Throws `invalid_tracking_id`, `invalid_stream`, `invalid_request` when `headers` is not an object, and
 * `tracking_id_not_carriable` as above.
 *
 * @example
 * await brevo.transactionalEmails.sendTransacEmail(attachBrevoTrackingId({
 *   sender: { email: 'news@example.com' },
 *   to: [{ email: 'jane@example.com' }],
 *   subject: 'Hello',
 *   textContent: 'Hi',
 * }, 'welcome-2026'));
 */
export function attachBrevoTrackingId<T extends object>(
  email: T,
  trackingId: string,
  options: BrevoCarrierOptions = {},
): BrevoWithTrackingId<T> {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const source = email as Record<string, unknown>;
  const headers = source['headers'];
  if (headers !== undefined && headers !== null && !isRecord(headers)) {
    throw new MailwardenError('invalid_request', 'Brevo headers must be an object of header names to values.');
  }
  const own = ({ name }: JsonMemberText) => name === 'service_id' || (stream !== undefined && name === SERVICE_STREAM_KEY);
  const others = Object.entries(headers ?? {})
    .filter(([name]) => isCustomHeader(name))
    .flatMap(([, value]) => customMembers(value))
    .filter((member) => !own(member))
    .map((member) => member.text.replace(/[\r\n\t]/g, ' '));
  const ours = [`"service_id":${JSON.stringify(id)}`, ...(stream === undefined ? [] : [`"${SERVICE_STREAM_KEY}":"${stream}"`])];
  const custom = asciiJson(`{${[...others, ...ours].join(',')}}`);

  const unsubscribe = unsubscribeHeadersOf(options, recipientsOf(source), 'The Brevo email');
  const next: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (isCustomHeader(name) || (unsubscribe !== undefined && isUnsubscribeHeaderName(name))) continue;
    next[name] = value;
  }
  next[BREVO_CUSTOM_HEADER] = custom;
  if (unsubscribe !== undefined) Object.assign(next, unsubscribe);
  return { ...source, headers: next } as BrevoWithTrackingId<T>;
}

/**
 * The tracking ID of a Brevo webhook event: `service_id` of the JSON object in its `X-Mailin-custom`
 * field (found whatever its case), a number as its decimal string; `null` when absent or not JSON.
 *
 * @example
 * readBrevoTrackingId({ event: 'delivered', 'X-Mailin-custom': '{"service_id":"welcome-2026"}' }); // 'welcome-2026'
 */
export function readBrevoTrackingId(event: unknown): string | null {
  return metadataTrackingId(customObject(event)?.['service_id']);
}

/**
 * The stream of a Brevo webhook event: `service_stream` of its `X-Mailin-custom` JSON; `null` when absent.
 *
 * @example
 * readBrevoStream({ 'X-Mailin-custom': '{"service_id":"a","service_stream":"weekly-digest"}' }); // 'weekly-digest'
 */
export function readBrevoStream(event: unknown): string | null {
  return carriedStream(customObject(event)?.[SERVICE_STREAM_KEY]);
}

/** The event's `X-Mailin-custom` as an object: a JSON object text (as Brevo sends it) or an object. */
function customObject(event: unknown): Record<string, unknown> | undefined {
  if (!isRecord(event)) return undefined;
  const name = Object.hasOwn(event, BREVO_CUSTOM_HEADER) ? BREVO_CUSTOM_HEADER : Object.keys(event).find(isCustomHeader);
  const value = name === undefined ? undefined : event[name];
  if (isRecord(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The members of a caller's `X-Mailin-custom`: none when empty; a JSON object's; else not carriable. */
function customMembers(value: unknown): JsonMemberText[] {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return [];
  const text = typeof value === 'string' ? value : isRecord(value) ? JSON.stringify(value) : undefined;
  const members = text === undefined ? undefined : jsonObjectMembers(text);
  if (members === undefined) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `The email already has an ${BREVO_CUSTOM_HEADER} header that is not a JSON object; Brevo echoes that one header only, ` +
        'so put your value in a JSON object member (it is kept) or in tags.',
    );
  }
  return members;
}

/** JSON with every character from DEL up as `\uXXXX`: in valid JSON they occur only inside strings, where the escape means the same. */
function asciiJson(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Every recipient of the request: its `to`, or the `to` of each message version (which replaces it). */
function recipientsOf(email: Record<string, unknown>): string[] {
  const versions = email['messageVersions'];
  if (Array.isArray(versions) && versions.length > 0) {
    return versions.flatMap((version: unknown) => (isRecord(version) ? recipientAddresses(version['to']) : []));
  }
  return recipientAddresses(email['to']);
}
