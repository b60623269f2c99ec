import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { BASE64URL_ID_ENCODING, decodeBase64urlId, encodeBase64urlId } from './base64url-id.js';
import { isRecord } from '../json/record.js';

/** The tag that carries the tracking ID. */
export const SERVICE_ID_TAG = 'service_id';
/** Present (value `b64u`) when `service_id` holds base64url of the ID's UTF-8 instead of the ID itself. */
export const SERVICE_ID_ENCODING_TAG = 'service_id_enc';

/** SES `MessageTag` names and values: ASCII letters, digits, `_` and `-`, 1–256 characters. */
const TAG_VALUE = /^[A-Za-z0-9_-]{1,256}$/;
const MAX_TAG_VALUE = 256;

/** Which SES API the request is for: v1 (`@aws-sdk/client-ses`) takes `Tags`, v2 (`@aws-sdk/client-sesv2`) `EmailTags`. */
export type SesApiVersion = 'v1' | 'v2';

/** An SES `MessageTag`. */
export interface SesMessageTag {
  Name?: string | undefined;
  Value?: string | undefined;
}

/**
 * SES v1 `SendEmail` / `SendRawEmail` / `SendTemplatedEmail` input, as far as tags go (`object &`
 * keeps TypeScript from rejecting a request without tags as a weak-type mismatch).
 */
export type SesV1TagsRequest = object & { Tags?: readonly SesMessageTag[] | undefined };

/** SES v2 `SendEmail` input, as far as tags go. */
export type SesV2TagsRequest = object & { EmailTags?: readonly SesMessageTag[] | undefined };

/**
 * The tags that carry a tracking ID: `service_id` with the ID itself when it fits the tag alphabet,
 * else with base64url (no padding) of its UTF-8 plus `service_id_enc=b64u`. Throws
 * `tracking_id_not_carriable` when even the encoded form is over 256 characters (UTF-8 over 192
 * bytes), and `invalid_tracking_id` for an invalid ID.
 */
export function sesTrackingTags(trackingId: string): { Name: string; Value: string }[] {
  const id = assertTrackingId(trackingId);
  if (TAG_VALUE.test(id)) return [{ Name: SERVICE_ID_TAG, Value: id }];
  const encoded = encodeBase64urlId(id);
  if (encoded.length > MAX_TAG_VALUE) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `This tracking ID needs ${encoded.length} characters as an SES message tag (base64url of its UTF-8), over the tag limit of ${MAX_TAG_VALUE}. Carry it in the X-Service-Id header instead (attachSesHeaderTrackingId).`,
    );
  }
  return [
    { Name: SERVICE_ID_TAG, Value: encoded },
    { Name: SERVICE_ID_ENCODING_TAG, Value: BASE64URL_ID_ENCODING },
  ];
}

/**
 * Adds the tracking ID tags to an SES send request and returns a new request (the input is not
 * changed): into `Tags` for `api: 'v1'`, `EmailTags` for `api: 'v2'` — the AWS SDK silently drops the
 * other name, so a request that carries the other API's fields is refused with `invalid_request`.
 * Existing `service_id` / `service_id_enc` tags are replaced; the caller's other tags are kept in order.
 * SES publishes tags only through configuration-set event publishing, not in identity feedback
 * notifications.
 *
 * @example
 * await sesv2.send(new SendEmailCommand(attachSesTagsTrackingId({
 *   FromEmailAddress: 'shop@example.com',
 *   Destination: { ToAddresses: ['ana@example.org'] },
 *   Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
 *   ConfigurationSetName: 'tracking',
 * }, 'spring-sale', { api: 'v2' })));
 */
export function attachSesTagsTrackingId<R extends SesV1TagsRequest>(request: R, trackingId: string, options: { api: 'v1' }): R;
export function attachSesTagsTrackingId<R extends SesV2TagsRequest>(request: R, trackingId: string, options: { api: 'v2' }): R;
export function attachSesTagsTrackingId(
  request: SesV1TagsRequest & SesV2TagsRequest & Record<string, unknown>,
  trackingId: string,
  options: { api: SesApiVersion },
): SesV1TagsRequest | SesV2TagsRequest {
  const key = options.api === 'v1' ? 'Tags' : 'EmailTags';
  // Field names of the other API (v1 and v2 share none of these), so a mix-up fails loudly.
  const foreignFields = options.api === 'v1' ? ['EmailTags', 'Content', 'FromEmailAddress'] : ['Tags', 'Message', 'RawMessage', 'Source'];
  const foreign = foreignFields.filter((name) => request[name] !== undefined);
  if (foreign.length > 0) {
    throw new MailwardenError(
      'invalid_request',
      `The request has ${foreign.join(', ')}, which SES ${options.api} does not take: is it for the other API version? (v1 takes Tags, v2 EmailTags.)`,
    );
  }
  const added = sesTrackingTags(trackingId);
  const kept = (request[key] ?? []).filter((tag) => tag.Name !== SERVICE_ID_TAG && tag.Name !== SERVICE_ID_ENCODING_TAG);
  return { ...request, [key]: [...kept, ...added] };
}

/**
 * The tracking ID in SES `mail.tags` (`{ name: [values] }`, event publishing only): the first
 * `service_id` value, base64url-decoded when `service_id_enc` is `b64u`. `null` when absent, or
 * when the encoding is unknown or the value does not decode.
 */
export function readSesTagsTrackingId(tags: unknown): string | null {
  if (!isRecord(tags)) return null;
  const value = firstValue(tags[SERVICE_ID_TAG]);
  if (value === undefined || value === '') return null;
  const encoding = firstValue(tags[SERVICE_ID_ENCODING_TAG]);
  if (encoding === undefined) return value;
  return encoding === BASE64URL_ID_ENCODING ? decodeBase64urlId(value) : null;
}

/** SES publishes each tag as a list of values; a bare string is accepted too. */
function firstValue(values: unknown): string | undefined {
  const value = Array.isArray(values) ? values[0] : values;
  return typeof value === 'string' ? value : undefined;
}
