import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { isRecord } from '../json/record.js';
import { BASE64URL_ID_ENCODING, decodeBase64urlId, encodeBase64urlId } from './base64url-id.js';
import { encodeServiceIdHeader, readSesHeaderStream, readSesHeaderTrackingId, SERVICE_ID_HEADER } from './ses-header.js';
import { SERVICE_ID_ENCODING_TAG, SERVICE_ID_TAG } from './ses-tags.js';
import { carriedStream, SERVICE_STREAM_HEADER, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import {
  isUnsubscribeHeaderName,
  recipientAddresses,
  unsubscribeHeadersOf,
  type UnsubscribeCarrierOptions,
} from './unsubscribe-headers.js';

/** What `attachResendTrackingId` takes beside the tracking ID. */
export interface ResendCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/** Resend tag names and values: ASCII letters, digits, `_` and `-`, 1–256 characters (the SES rule). */
const TAG_VALUE = /^[A-Za-z0-9_-]{1,256}$/;
const MAX_TAG_VALUE = 256;
/** Resend refuses an email with more tags than this, counting the caller's own. */
export const RESEND_MAX_TAGS = 75;

/** A Resend tag as `emails.send` and `batch.send` take it. */
export interface ResendTag {
  name: string;
  value: string;
}

/** A Resend email (`CreateEmailOptions`) as far as the carrier goes. */
export type ResendEmailCarrierFields = object & {
  tags?: readonly ResendTag[] | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  to?: string | readonly string[] | undefined;
};

/**
 * Returns a copy of a Resend email (the `resend` SDK's `emails.send` argument, the body of `POST /emails`),
 * or of a batch (`batch.send`'s array), carrying the tracking ID in tags, as SES does
 * (docs/providers/resend.md#attaching-the-tracking-id): `service_id` with the ID itself when it fits the tag
 * alphabet `[A-Za-z0-9_-]{1,256}`, else with base64url of its UTF-8 plus `service_id_enc=b64u`. When even
 * that cannot fit (UTF-8 over 192 bytes) or the caller's tags leave no room under Resend's 75, the ID
 * travels in the `X-Service-Id` header instead (RFC 2047 words when not printable ASCII), which Resend
 * echoes in the webhook's `data.headers`.
 *
 * With `options.stream`, a `service_stream` tag (an `X-Service-Stream` header when the ID went to the
 * header). With `options.unsubscribe`, `List-Unsubscribe` and `List-Unsubscribe-Post` headers with the link
 * of the email's one `to` recipient (`unsubscribe_not_carriable` for several).
 *
 * Existing `service_id` / `service_id_enc` tags and `X-Service-Id` headers are replaced; the caller's other
 * tags and headers are kept in order. Throws `invalid_tracking_id`, `invalid_stream`, and `invalid_request`
 * when `tags` is not an array or `headers` not an object.
 *
 * @example
 * await resend.emails.send(attachResendTrackingId({
 *   from: 'shop@example.com', to: 'ana@example.org', subject: 'Hi', text: 'Hello',
 * }, 'spring-sale', { stream: 'weekly-digest' }));
 */
export function attachResendTrackingId<E extends object>(
  emails: readonly E[],
  trackingId: string,
  options?: ResendCarrierOptions,
): ResendWithTrackingId<E>[];
export function attachResendTrackingId<E extends object>(
  email: E,
  trackingId: string,
  options?: ResendCarrierOptions,
): ResendWithTrackingId<E>;
export function attachResendTrackingId<E extends object>(
  email: E | readonly E[],
  trackingId: string,
  options?: ResendCarrierOptions,
): ResendWithTrackingId<E> | ResendWithTrackingId<E>[] {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  if (Array.isArray(email)) {
    return email.map((one: E, index) => attachOne(one, id, stream, options, `Resend email [${index}] of the batch`));
  }
  return attachOne(email as E, id, stream, options, 'The Resend email');
}

/** The tags that carry an ID, or `undefined` when its base64url is over the tag limit. */
function idTags(id: string): ResendTag[] | undefined {
  if (TAG_VALUE.test(id)) return [{ name: SERVICE_ID_TAG, value: id }];
  const encoded = encodeBase64urlId(id);
  if (encoded.length > MAX_TAG_VALUE) return undefined;
  return [
    { name: SERVICE_ID_TAG, value: encoded },
    { name: SERVICE_ID_ENCODING_TAG, value: BASE64URL_ID_ENCODING },
  ];
}

/**
 * A Resend email that now carries the tracking ID: in `tags`, or in `headers` when no tag can hold it
 * (each is present when it has an entry, or was present before).
 */
export type ResendWithTrackingId<E> = E & { tags?: ResendTag[]; headers?: Record<string, string> };

function attachOne<E extends object>(
  email: E,
  id: string,
  stream: string | undefined,
  options: UnsubscribeCarrierOptions | undefined,
  where: string,
): ResendWithTrackingId<E> {
  const source = email as Record<string, unknown>;
  const existingTags = source['tags'] ?? [];
  if (!Array.isArray(existingTags))
    throw new MailwardenError('invalid_request', `The tags of ${where.toLowerCase()} must be an array of { name, value }.`);
  const existingHeaders = source['headers'] ?? {};
  if (!isRecord(existingHeaders))
    throw new MailwardenError('invalid_request', `The headers of ${where.toLowerCase()} must be an object of strings.`);

  const ownTag = (tag: unknown) =>
    isRecord(tag) &&
    (tag['name'] === SERVICE_ID_TAG ||
      tag['name'] === SERVICE_ID_ENCODING_TAG ||
      (stream !== undefined && tag['name'] === SERVICE_STREAM_KEY));
  const keptTags = (existingTags as unknown[]).filter((tag) => !ownTag(tag));
  const tagged = idTags(id);
  const ourTags = tagged === undefined ? [] : [...tagged, ...(stream === undefined ? [] : [{ name: SERVICE_STREAM_KEY, value: stream }])];
  const inTags = tagged !== undefined && keptTags.length + ourTags.length <= RESEND_MAX_TAGS;

  const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(source['to']), where);
  const ownHeader = (name: string) =>
    isServiceHeader(name, SERVICE_ID_HEADER) ||
    (stream !== undefined && isServiceHeader(name, SERVICE_STREAM_HEADER)) ||
    (unsubscribe !== undefined && isUnsubscribeHeaderName(name));
  const headers: Record<string, unknown> = Object.fromEntries(Object.entries(existingHeaders).filter(([name]) => !ownHeader(name)));
  if (!inTags) {
    headers[SERVICE_ID_HEADER] = encodeServiceIdHeader(id).join(' ');
    if (stream !== undefined) headers[SERVICE_STREAM_HEADER] = stream;
  }
  Object.assign(headers, unsubscribe);

  const next: Record<string, unknown> = { ...source };
  const tags = inTags ? [...keptTags, ...ourTags] : keptTags;
  if (tags.length > 0 || source['tags'] !== undefined) next['tags'] = tags;
  if (Object.keys(headers).length > 0 || source['headers'] !== undefined) next['headers'] = headers;
  return next as ResendWithTrackingId<E>;
}

function isServiceHeader(name: string, header: string): boolean {
  return name.trim().toLowerCase() === header.toLowerCase();
}

/**
 * The tags of a Resend webhook's `data.tags` as one object: Resend sends `{ name: value }`, older
 * documentation and Resend's own ingester a list of `{ name, value }`; both are read.
 */
function tagsOf(tags: unknown): Record<string, unknown> {
  if (isRecord(tags)) return tags;
  const result: Record<string, unknown> = {};
  if (!Array.isArray(tags)) return result;
  for (const tag of tags) {
    if (isRecord(tag) && typeof tag['name'] === 'string' && !Object.hasOwn(result, tag['name'])) result[tag['name']] = tag['value'];
  }
  return result;
}

/**
 * The tracking ID of a Resend webhook's `data`: the `service_id` tag (base64url-decoded when
 * `service_id_enc` is `b64u`), else the `X-Service-Id` header of `data.headers`; `null` when absent, or
 * when the tag's encoding is unknown or its value does not decode.
 *
 * @example
 * readResendTrackingId({ tags: { service_id: 'spring-sale' } }); // 'spring-sale'
 */
export function readResendTrackingId(data: unknown): string | null {
  if (!isRecord(data)) return null;
  const tags = tagsOf(data['tags']);
  const value = tags[SERVICE_ID_TAG];
  if (typeof value === 'string' && value !== '') {
    const encoding = tags[SERVICE_ID_ENCODING_TAG];
    if (encoding === undefined) return value;
    return encoding === BASE64URL_ID_ENCODING ? decodeBase64urlId(value) : null;
  }
  return readSesHeaderTrackingId(data['headers']);
}

/**
 * The stream of a Resend webhook's `data`: the `service_stream` tag, else the `X-Service-Stream` header;
 * `null` when absent.
 *
 * @example
 * readResendStream({ tags: [{ name: 'service_stream', value: 'weekly-digest' }] }); // 'weekly-digest'
 */
export function readResendStream(data: unknown): string | null {
  if (!isRecord(data)) return null;
  return carriedStream(tagsOf(data['tags'])[SERVICE_STREAM_KEY]) ?? readSesHeaderStream(data['headers']);
}
