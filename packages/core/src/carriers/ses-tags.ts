import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { BASE64URL_ID_ENCODING, decodeBase64urlId, encodeBase64urlId } from './base64url-id.js';
import { isRecord } from '../json/record.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';

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

/** A destination of a bulk send (v1 `BulkEmailDestination`, v2 `BulkEmailEntry`), as far as tags go. */
export type SesBulkEntryTags = object & { ReplacementTags?: readonly SesMessageTag[] | undefined };

/**
 * SES v1 input, as far as tags go: `SendEmail` / `SendRawEmail` / `SendTemplatedEmail` take `Tags`,
 * `SendBulkTemplatedEmail` takes `DefaultTags` and per-destination `ReplacementTags` (`object &` keeps
 * TypeScript from rejecting a request without tags as a weak-type mismatch).
 */
export type SesV1TagsRequest = object & {
  Tags?: readonly SesMessageTag[] | undefined;
  DefaultTags?: readonly SesMessageTag[] | undefined;
  Destinations?: readonly SesBulkEntryTags[] | undefined;
};

/** SES v2 input, as far as tags go: `SendEmail` takes `EmailTags`, `SendBulkEmail` `DefaultEmailTags` and per-entry `ReplacementTags`. */
export type SesV2TagsRequest = object & {
  EmailTags?: readonly SesMessageTag[] | undefined;
  DefaultEmailTags?: readonly SesMessageTag[] | undefined;
  BulkEmailEntries?: readonly SesBulkEntryTags[] | undefined;
};

/** Where an SES operation takes its tags; the AWS SDK drops any other name without a word, and the send succeeds. */
interface TagsShape {
  operation: string;
  tags: string;
  /** The bulk operations' list of destinations, each with optional `ReplacementTags`. */
  entries?: string;
}

const tagShapes: Record<SesApiVersion, { single: TagsShape; bulk: TagsShape & { marks: readonly string[] } }> = {
  v1: {
    single: { operation: 'SendEmail, SendRawEmail or SendTemplatedEmail', tags: 'Tags' },
    bulk: {
      operation: 'SendBulkTemplatedEmail',
      tags: 'DefaultTags',
      entries: 'Destinations',
      marks: ['Destinations', 'DefaultTags', 'DefaultTemplateData'],
    },
  },
  v2: {
    single: { operation: 'SendEmail', tags: 'EmailTags' },
    bulk: {
      operation: 'SendBulkEmail',
      tags: 'DefaultEmailTags',
      entries: 'BulkEmailEntries',
      marks: ['BulkEmailEntries', 'DefaultEmailTags', 'DefaultContent'],
    },
  },
};

/** Top-level fields of the other API version's operations (v1 and v2 share none of these), so a mix-up fails loudly. */
const foreignFields: Record<SesApiVersion, readonly string[]> = {
  v1: ['EmailTags', 'Content', 'FromEmailAddress', 'DefaultEmailTags', 'BulkEmailEntries', 'DefaultContent'],
  v2: ['Tags', 'Message', 'RawMessage', 'Source', 'DefaultTags', 'Destinations', 'Template', 'DefaultTemplateData'],
};

/**
 * The tags that carry a tracking ID: `service_id` with the ID itself when it fits the tag alphabet,
 * else with base64url (no padding) of its UTF-8 plus `service_id_enc=b64u`. Throws
 * `tracking_id_not_carriable` when even the encoded form is over 256 characters (UTF-8 over 192
 * bytes), and `invalid_tracking_id` for an invalid ID. With `options.stream`, a `service_stream` tag
 * too (a stream name is always a tag value as it is); `invalid_stream` for an invalid one.
 *
 * @example
 * sesTrackingTags('spring-sale', { stream: 'weekly-digest' });
 * // [{ Name: 'service_id', Value: 'spring-sale' }, { Name: 'service_stream', Value: 'weekly-digest' }]
 */
export function sesTrackingTags(trackingId: string, options?: StreamCarrierOptions): { Name: string; Value: string }[] {
  const stream = streamToCarry(options);
  const tags = idTags(assertTrackingId(trackingId));
  return stream === undefined ? tags : [...tags, { Name: SERVICE_STREAM_KEY, Value: stream }];
}

function idTags(id: string): { Name: string; Value: string }[] {
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
 * changed), under the name its operation takes — the AWS SDK silently drops any other, and the send
 * succeeds without the tag:
 *
 * - `api: 'v1'`: `Tags` (`SendEmail`, `SendRawEmail`, `SendTemplatedEmail`); for `SendBulkTemplatedEmail`
 *   (a request with `Destinations`) `DefaultTags`, and the `ReplacementTags` of each destination that has them.
 * - `api: 'v2'`: `EmailTags` (`SendEmail`); for `SendBulkEmail` (a request with `BulkEmailEntries`)
 *   `DefaultEmailTags`, and the `ReplacementTags` of each entry that has them.
 *
 * A bulk send carries one tracking ID for all its destinations. A request with fields of the other API
 * version, or a bulk request with the single-send tag field, is refused with `invalid_request`.
 * Existing `service_id` / `service_id_enc` tags are replaced; the caller's other tags are kept in order.
 * With `options.stream`, a `service_stream` tag is added too (replacing an existing one).
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
export function attachSesTagsTrackingId<R extends SesV1TagsRequest>(
  request: R,
  trackingId: string,
  options: { api: 'v1' } & StreamCarrierOptions,
): R;
export function attachSesTagsTrackingId<R extends SesV2TagsRequest>(
  request: R,
  trackingId: string,
  options: { api: 'v2' } & StreamCarrierOptions,
): R;
export function attachSesTagsTrackingId(
  request: SesV1TagsRequest & SesV2TagsRequest & Record<string, unknown>,
  trackingId: string,
  options: { api: SesApiVersion } & StreamCarrierOptions,
): SesV1TagsRequest | SesV2TagsRequest {
  const { api } = options;
  const foreign = foreignFields[api].filter((name) => request[name] !== undefined);
  if (foreign.length > 0) {
    throw new MailwardenError(
      'invalid_request',
      `The request has ${foreign.join(', ')}, which SES ${api} does not take: is it for the other API version? (v1 takes Tags, v2 EmailTags.)`,
    );
  }
  const { single, bulk } = tagShapes[api];
  const marks = bulk.marks.filter((name) => request[name] !== undefined);
  if (marks.length > 0 && request[single.tags] !== undefined) {
    throw new MailwardenError(
      'invalid_request',
      `The request has ${marks.join(', ')}, so it is an SES ${api} ${bulk.operation} input, which takes ${bulk.tags} and per-destination ` +
        `ReplacementTags: SES would drop its ${single.tags}. Move them to ${bulk.tags}.`,
    );
  }
  const shape: TagsShape = marks.length > 0 ? bulk : single;
  const added = sesTrackingTags(trackingId, options);
  const next: Record<string, unknown> = {
    ...request,
    [shape.tags]: withTrackingTags(request[shape.tags] as readonly SesMessageTag[] | undefined, added),
  };
  const entries = shape.entries === undefined ? undefined : request[shape.entries];
  if (shape.entries !== undefined && Array.isArray(entries)) {
    // Whether SES merges an entry's ReplacementTags with the default tags or uses them instead is not
    // documented: an entry with its own tags gets ours too, so it carries the ID either way.
    next[shape.entries] = (entries as SesBulkEntryTags[]).map((entry) =>
      entry.ReplacementTags === undefined ? entry : { ...entry, ReplacementTags: withTrackingTags(entry.ReplacementTags, added) },
    );
  }
  return next;
}

/** The caller's tags in order without any `service_id` / `service_id_enc` (nor a tag we add), then ours. */
function withTrackingTags(tags: readonly SesMessageTag[] | undefined, added: readonly SesMessageTag[]): SesMessageTag[] {
  const ours = (name: string | undefined) =>
    name === SERVICE_ID_TAG || name === SERVICE_ID_ENCODING_TAG || added.some((tag) => tag.Name === name);
  return [...(tags ?? []).filter((tag) => !ours(tag.Name)), ...added];
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

/**
 * The stream in SES `mail.tags` (event publishing only): the first `service_stream` value; `null` when absent.
 *
 * @example
 * readSesTagsStream({ service_stream: ['weekly-digest'] }); // 'weekly-digest'
 */
export function readSesTagsStream(tags: unknown): string | null {
  return isRecord(tags) ? carriedStream(firstValue(tags[SERVICE_STREAM_KEY])) : null;
}

/** SES publishes each tag as a list of values; a bare string is accepted too. */
function firstValue(values: unknown): string | undefined {
  const value = Array.isArray(values) ? values[0] : values;
  return typeof value === 'string' ? value : undefined;
}
