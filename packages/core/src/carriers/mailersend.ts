import { MailwardenError } from '../errors.js';
import { isRecord } from '../json/record.js';
import { assertTrackingId } from '../tracking-id.js';
import { decodeBase64urlId, encodeBase64urlId } from './base64url-id.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';
import { LIST_UNSUBSCRIBE, recipientAddresses, unsubscribeHeadersOf, type UnsubscribeCarrierOptions } from './unsubscribe-headers.js';

/** What `attachMailerSendTrackingId` takes beside the tracking ID. */
export interface MailerSendCarrierOptions extends StreamCarrierOptions, UnsubscribeCarrierOptions {}

/**
 * The most tags one MailerSend email takes, the caller's and ours together: the limit MailerSend's API
 * reference is quoted with ("max 5 tags"), not confirmed in a source here (UNVERIFIED,
 * docs/providers/mailersend.md#carrier-limits-and-encodings). No length limit per tag is assumed.
 */
export const MAILERSEND_MAX_TAGS = 5;

/** The tag prefix of a tracking ID written as it is (printable ASCII). */
export const MAILERSEND_ID_TAG_PREFIX = 'service_id:';
/** The tag prefix of a tracking ID written as base64url (no padding) of its UTF-8. */
export const MAILERSEND_ID_B64U_TAG_PREFIX = 'service_id_b64u:';
/** The tag prefix of the stream. */
export const MAILERSEND_STREAM_TAG_PREFIX = `${SERVICE_STREAM_KEY}:`;

/**
 * IDs that travel as they are: printable ASCII that does not end with a space. MailerSend's API is a
 * Laravel application, whose default middleware trims request strings: a trailing space would be lost
 * (docs/decisions.md, "MailerSend: the tracking ID in one tag").
 */
const PLAIN_ID = /^[\x20-\x7e]*[\x21-\x7e]$/;

/**
 * The tags that carry a tracking ID (and a stream) on MailerSend, which has no metadata: one tag
 * `service_id:<ID>` for printable ASCII, else `service_id_b64u:<base64url of its UTF-8>`, and
 * `service_stream:<name>` with `options.stream`. Throws `invalid_tracking_id` or `invalid_stream`.
 *
 * @example
 * mailerSendTrackingTags('spring-sale', { stream: 'weekly-digest' });
 * // ['service_id:spring-sale', 'service_stream:weekly-digest']
 */
export function mailerSendTrackingTags(trackingId: string, options?: StreamCarrierOptions): string[] {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const idTag = PLAIN_ID.test(id) ? `${MAILERSEND_ID_TAG_PREFIX}${id}` : `${MAILERSEND_ID_B64U_TAG_PREFIX}${encodeBase64urlId(id)}`;
  return stream === undefined ? [idTag] : [idTag, `${MAILERSEND_STREAM_TAG_PREFIX}${stream}`];
}

/**
 * Returns a copy of a MailerSend email (the body of `POST /v1/email`, or the `mailersend` SDK's
 * `EmailParams`, whose class it keeps), or of a bulk send (an array of them, `POST /v1/bulk-email`),
 * carrying the tracking ID in `tags` (`mailerSendTrackingTags`). Tags starting with `service_id:` or
 * `service_id_b64u:` (and `service_stream:` when a stream is given) belong to this carrier and are
 * replaced; the caller's other tags are kept in order, before ours. MailerSend echoes tags in every
 * activity webhook; it has no metadata, and `personalization` is not echoed.
 *
 * With `options.unsubscribe`, each email gets `list_unsubscribe` (MailerSend's field for the RFC 8058
 * `List-Unsubscribe` header) with the link of its one `to` recipient. An email with several `to`
 * recipients throws `unsubscribe_not_carriable`: send one email per recipient (a bulk send does).
 *
 * Throws `invalid_tracking_id`, `invalid_stream`; `tracking_id_not_carriable` when the caller's tags plus
 * ours exceed MailerSend's 5; `invalid_request` when `tags` is not an array of strings.
 *
 * @example
 * const params = new EmailParams()
 *   .setFrom(new Sender('news@example.com'))
 *   .setTo([new Recipient('jane@example.com')])
 *   .setSubject('Hello')
 *   .setText('Hi');
 * await mailerSend.email.send(attachMailerSendTrackingId(params, 'welcome-2026', { stream: 'onboarding' }));
 */
export function attachMailerSendTrackingId<E extends object>(
  emails: readonly E[],
  trackingId: string,
  options?: MailerSendCarrierOptions,
): MailerSendWithTrackingId<E>[];
export function attachMailerSendTrackingId<E extends object>(
  email: E,
  trackingId: string,
  options?: MailerSendCarrierOptions,
): MailerSendWithTrackingId<E>;
export function attachMailerSendTrackingId(
  input: object | readonly object[],
  trackingId: string,
  options: MailerSendCarrierOptions = {},
): object | object[] {
  const tags = mailerSendTrackingTags(trackingId, options);
  if (Array.isArray(input)) return input.map((email: unknown, index) => attachOne(email, tags, options, `MailerSend email ${index}`));
  return attachOne(input, tags, options, 'The MailerSend email');
}

/** A MailerSend email that now has `tags`. */
export type MailerSendWithTrackingId<E> = E & { tags: string[] };

function attachOne(email: unknown, ours: readonly string[], options: MailerSendCarrierOptions, where: string): object {
  if (!isRecord(email)) throw new MailwardenError('invalid_request', `${where} must be an object.`);
  const existing = email['tags'];
  if (existing !== undefined && existing !== null && !(Array.isArray(existing) && existing.every((tag) => typeof tag === 'string'))) {
    throw new MailwardenError('invalid_request', `The tags of ${where.toLowerCase()} must be an array of strings.`);
  }
  const replaced =
    ours.length > 1 ? [MAILERSEND_ID_TAG_PREFIX, MAILERSEND_ID_B64U_TAG_PREFIX, MAILERSEND_STREAM_TAG_PREFIX] : ownIdPrefixes;
  const kept = ((existing ?? []) as string[]).filter((tag) => !replaced.some((prefix) => tag.startsWith(prefix)));
  if (kept.length + ours.length > MAILERSEND_MAX_TAGS) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `The tracking ID${ours.length > 1 ? ' and the stream' : ''} need${ours.length > 1 ? '' : 's'} ${ours.length} MailerSend tag${ours.length > 1 ? 's' : ''} ` +
        `and ${where.toLowerCase()} has ${kept.length} others, over MailerSend's ${MAILERSEND_MAX_TAGS}; MailerSend webhooks carry no other field for it, so drop some tags.`,
    );
  }
  const fields: Record<string, unknown> = { tags: [...kept, ...ours] };
  const unsubscribe = unsubscribeHeadersOf(options, recipientAddresses(email['to']), where);
  if (unsubscribe !== undefined) fields['list_unsubscribe'] = unsubscribe[LIST_UNSUBSCRIBE];
  // A copy of the same class: the SDK's EmailParams keeps its setters.
  return Object.assign(Object.create(Object.getPrototypeOf(email) as object | null) as object, email, fields);
}

const ownIdPrefixes = [MAILERSEND_ID_TAG_PREFIX, MAILERSEND_ID_B64U_TAG_PREFIX];

/**
 * The tracking ID in a MailerSend activity's tags (`data.email.tags` in version 1 webhooks,
 * `data.tags` in version 2): the first `service_id:` tag's value, else the first `service_id_b64u:`
 * tag decoded; `null` when absent or undecodable.
 *
 * @example
 * readMailerSendTrackingId(['newsletter', 'service_id:spring-sale']); // 'spring-sale'
 */
export function readMailerSendTrackingId(tags: unknown): string | null {
  const plain = tagValue(tags, MAILERSEND_ID_TAG_PREFIX);
  if (plain !== undefined) return plain === '' ? null : plain;
  const encoded = tagValue(tags, MAILERSEND_ID_B64U_TAG_PREFIX);
  return encoded === undefined ? null : decodeBase64urlId(encoded);
}

/**
 * The stream in a MailerSend activity's tags: the first `service_stream:` tag's value; `null` when absent.
 *
 * @example
 * readMailerSendStream(['service_id:spring-sale', 'service_stream:weekly-digest']); // 'weekly-digest'
 */
export function readMailerSendStream(tags: unknown): string | null {
  return carriedStream(tagValue(tags, MAILERSEND_STREAM_TAG_PREFIX));
}

function tagValue(tags: unknown, prefix: string): string | undefined {
  if (!Array.isArray(tags)) return undefined;
  const tag = tags.find((value): value is string => typeof value === 'string' && value.startsWith(prefix));
  return tag?.slice(prefix.length);
}
