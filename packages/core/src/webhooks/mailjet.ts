import { readMailjetStream, readMailjetTrackingId } from '../carriers/mailjet.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { parseJsonWithExactIntegers } from '../json/exact-integers.js';
import { isRecord, stringField } from '../json/record.js';
import { checkSharedSecret, type BasicAuthCredentials } from './auth.js';
import { bodyText } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { streamField } from './stream-field.js';

/**
 * Mailjet signs nothing: it sends the basic credentials of the webhook URL (`https://user:pass@…`), the
 * only authentication it offers (docs/providers/mailjet.md#authentication-mailjetwebhookauth). A list
 * allows rotating them.
 */
export interface MailjetWebhookAuth {
  basic: readonly BasicAuthCredentials[];
}

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * Normalizes one Mailjet webhook POST, given as the raw JSON text: an array of events ("group events",
 * version 2) or one bare event (version 1). `MessageID` exceeds 2^53, so integers past it are read as
 * their exact digits (`parseJsonWithExactIntegers`), never rounded. An empty array is a ping. Items that
 * cannot be used are skipped with a warning. Throws only `invalid_payload`, for text that is neither.
 *
 * @example
 * const receipt = parseMailjetWebhook('[{"event":"sent","time":1762164252,"MessageID":19421777835146490,"email":"x@example.org"}]');
 */
export function parseMailjetWebhook(text: string): WebhookReceipt {
  let payload: unknown;
  try {
    payload = parseJsonWithExactIntegers(text);
  } catch {
    throw new MailwardenError('invalid_payload', 'The Mailjet webhook body is not JSON.');
  }
  if (!Array.isArray(payload) && !isRecord(payload)) {
    throw new MailwardenError('invalid_payload', 'A Mailjet webhook body is a JSON array of events or one event object.');
  }
  return receiptOf((Array.isArray(payload) ? payload : [payload]).map(parseItem));
}

/**
 * The Mailjet receiver: checks the configured basic credentials (there is no payload signature), then
 * parses the body.
 *
 * @example
 * const mailjet = createMailjetWebhook(env);
 * const receipt = await mailjet.receive(request, { basic: [{ username: 'mailjet', password: secret }] });
 */
export function createMailjetWebhook(_env: WebhookEnvironment): ProviderWebhook<MailjetWebhookAuth> {
  return {
    provider: 'mailjet',
    async receive(request, auth) {
      checkSharedSecret(request, { basic: auth.basic });
      return parseMailjetWebhook(bodyText(request.rawBody));
    },
  };
}

/** Mailjet authenticates only with the basic credentials of the URL: a 401 invites them. */
export const mailjetWebhookDefinition: ProviderWebhookDefinition<MailjetWebhookAuth> = {
  basicChallenge: true,
  createReceiver: createMailjetWebhook,
};

function parseItem(item: unknown): ItemOutcome {
  if (!isRecord(item)) return 'the item is not an object';
  const type = stringField(item, 'event');
  if (type === undefined) return 'the item has no event';
  const recipient = stringField(item, 'email');
  if (recipient === undefined) return `the ${type} event has no email`;
  const occurredAt = timeOf(item['time']);
  if (occurredAt === undefined) return `the ${type} event has no valid time`;
  const messageId = messageIdOf(item['MessageID']) ?? messageIdOf(item['mj_message_id']);
  const classified = classify(type, item);
  const details = detailsOf(item, classified);
  return {
    provider: 'mailjet',
    ...classified,
    messageId,
    recipient,
    trackingId: readMailjetTrackingId(item),
    ...streamField(readMailjetStream(item)),
    occurredAt,
    // Mailjet gives no event id; these fields repeat on a retry and tell two events apart (a click's URL).
    eventKey: hashedEventKey([type, messageId, recipient, item['time'], item['url']]),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * The reference's table (docs/providers/mailjet.md#events-and-how-they-map): `sent` is the receiving server's acceptance;
 * a greylisting bounce that is not hard is a deferral; `blocked` is Mailjet refusing to send, for its own
 * suppression only when it says `preblocked` (recently or repeatedly bounced) or `spam reporter`.
 * `blacklisted` is Mailjet's exclusion list, which mixes unsubscribes with manual entries, so it
 * suppresses nothing.
 */
function classify(type: string, item: Record<string, unknown>): Classified {
  const error = stringField(item, 'error')?.toLowerCase();
  switch (type) {
    case 'sent':
      return { type: 'delivered' };
    case 'bounce':
      if (isTrue(item['hard_bounce'])) return { type: 'bounced', bounceClass: 'hard' };
      return error === 'greylisted' ? { type: 'deferred' } : { type: 'bounced', bounceClass: 'soft' };
    case 'blocked':
      return {
        type: 'rejected',
        providerSuppression: error === 'preblocked' ? 'bounce' : error === 'spam reporter' ? 'complaint' : null,
      };
    case 'spam':
      return { type: 'complained' };
    case 'open':
      return { type: 'opened' };
    case 'click':
      return { type: 'clicked' };
    case 'unsub':
      return { type: 'unsubscribed' };
    default:
      return { type: 'unknown' };
  }
}

/**
 * What Mailjet said: the SMTP reply (`smtp_reply` of a `sent`, `comment` of a bounce) and its status;
 * `error_related_to: error` as the bounce classification, or the reject reason of a `blocked`; a
 * complaint's `source` (the feedback loop); `agent` of opens and clicks and a click's `url`.
 */
function detailsOf(item: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const reply = stringField(item, 'smtp_reply') ?? stringField(item, 'comment');
  const related = stringField(item, 'error_related_to');
  const error = stringField(item, 'error');
  const reason = error === undefined ? undefined : related === undefined ? error : `${related}: ${error}`;
  const rejected = classified.type === 'rejected';
  return eventDetails({
    smtpStatus: smtpStatusIn(reply),
    diagnostic: rejected ? reply : (reply ?? error),
    bounceClassification: rejected ? undefined : reason,
    feedbackType: item['source'],
    rejectReason: rejected ? reason : undefined,
    userAgent: item['agent'],
    url: item['url'],
  });
}

function isTrue(value: unknown): boolean {
  return value === true || value === 'true' || value === 1;
}

/** `time` is unix seconds, a number (a numeric string is accepted too). */
function timeOf(value: unknown): Date | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * `MessageID` as its exact decimal digits: a safe integer, or the string `parseJsonWithExactIntegers`
 * made of a larger one; a string Mailjet never sends is taken as is.
 */
function messageIdOf(value: unknown): string | null {
  if (typeof value === 'string' && value !== '' && value.length <= 1024) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return null;
}
