import { readSparkPostStream, readSparkPostTrackingId } from '../carriers/sparkpost.js';
import { streamField } from './stream-field.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type BounceClass, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { checkSharedSecret, type SharedSecretAuth } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';

/** SparkPost webhooks are not signed: configure basic auth or an OAuth2 bearer token (docs/providers/sparkpost.md#authentication-sparkpostwebhookauth). */
export type SparkPostWebhookAuth = SharedSecretAuth;

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * Normalizes a decoded SparkPost webhook body: an array of `{ msys: { <class>: {...} } }`. Pings
 * (`{ msys: {} }`) are ignored; a batch of only pings is a ping. Items that cannot be used are skipped with
 * a warning. Throws only `invalid_payload`, for a body that is neither an array nor an object.
 *
 * @example
 * const receipt = parseSparkPostWebhook(JSON.parse(body));
 */
export function parseSparkPostWebhook(payload: unknown): WebhookReceipt {
  if (!Array.isArray(payload) && !isRecord(payload)) {
    throw new MailwardenError('invalid_payload', 'A SparkPost webhook body is a JSON array of events.');
  }
  const items: unknown[] = Array.isArray(payload) ? payload : [payload];
  // A batch of only pings (`{ msys: {} }`) is SparkPost testing the endpoint.
  return receiptOf(items.map(parseItem));
}

/**
 * The SparkPost receiver: checks the configured basic auth or bearer token (there is no payload
 * signature), then parses the JSON body.
 *
 * @example
 * const sparkpost = createSparkPostWebhook(env);
 * const receipt = await sparkpost.receive(request, { basic: [{ username: 'sparkpost', password: secret }] });
 */
export function createSparkPostWebhook(_env: WebhookEnvironment): ProviderWebhook<SparkPostWebhookAuth> {
  return {
    provider: 'sparkpost',
    async receive(request, auth) {
      checkSharedSecret(request, auth);
      return parseSparkPostWebhook(bodyJson(request.rawBody));
    },
  };
}

/** SparkPost can authenticate with basic credentials: a 401 invites them. */
export const sparkPostWebhookDefinition: ProviderWebhookDefinition<SparkPostWebhookAuth> = {
  basicChallenge: true,
  createReceiver: createSparkPostWebhook,
};

/** One batch item: an event, `'ignored'` for a ping, or the reason it was skipped. */
function parseItem(item: unknown): ItemOutcome {
  if (!isRecord(item) || !isRecord(item['msys'])) return 'the item has no msys object';
  const classes = Object.keys(item['msys']);
  if (classes.length === 0) return 'ignored';
  if (classes.length > 1) return `the item has more than one event class (${classes.join(', ')})`;
  const body = item['msys'][classes[0]!];
  if (!isRecord(body)) return 'the event class is not an object';

  const type = stringField(body, 'type');
  if (type === undefined) return 'the event has no type';
  const recipient = stringField(body, 'rcpt_to') ?? stringField(body, 'raw_rcpt_to');
  if (recipient === undefined) return `the ${type} event has no rcpt_to`;
  const occurredAt = timestampOf(body['timestamp']);
  if (occurredAt === undefined) return `the ${type} event has no valid timestamp`;
  const messageId = idOf(body['transmission_id']);
  const classified = classify(type, body);
  const details = detailsOf(body, classified);
  return {
    provider: 'sparkpost',
    ...classified,
    messageId,
    recipient,
    trackingId: readSparkPostTrackingId(body),
    ...streamField(readSparkPostStream(body)),
    occurredAt,
    // SparkPost's event_id is unique per event and kept on retries; without one, hash what identifies it.
    eventKey:
      eventIdOf(body['event_id']) ?? hashedEventKey([type, messageId, stringField(body, 'message_id'), recipient, body['timestamp']]),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * What SparkPost said: `raw_reason` (the SMTP reply; else `reason`) and the code in it, else
 * `error_code`; `bounce_class` (its number: 10 invalid recipient, 22 mailbox full, 25 admin, …); the
 * reply as the reject reason of a policy or generation rejection; a complaint's `fbtype`; `user_agent` of opens and
 * clicks and a click's `target_link_url`.
 */
function detailsOf(body: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const reply = stringField(body, 'raw_reason') ?? stringField(body, 'reason');
  const rejected = classified.type === 'rejected';
  return eventDetails({
    smtpStatus: smtpStatusIn(reply) ?? body['error_code'],
    diagnostic: rejected ? undefined : reply,
    bounceClassification: body['bounce_class'],
    feedbackType: body['fbtype'],
    rejectReason: rejected ? reply : undefined,
    userAgent: body['user_agent'],
    url: body['target_link_url'],
  });
}

function classify(type: string, body: Record<string, unknown>): Classified {
  switch (type) {
    case 'injection':
      return { type: 'sent' };
    case 'delivery':
      return { type: 'delivered' };
    case 'delay':
      return { type: 'deferred' };
    case 'bounce':
    case 'out_of_band':
      return classifyBounce(body['bounce_class']);
    // Since 2018 SparkPost reports suppressed recipients as bounce class 25; these rejections are other
    // policies, and their reason never says which suppression list (bounce, complaint or unsubscribe).
    case 'policy_rejection':
    case 'generation_rejection':
      return { type: 'rejected', providerSuppression: null };
    case 'spam_complaint':
      return { type: 'complained' };
    case 'click':
    case 'amp_click':
      return { type: 'clicked' };
    // Opening is a fact of the message, so counting an initial open as an open cannot double count.
    case 'open':
    case 'amp_open':
    case 'initial_open':
    case 'amp_initial_open':
      return { type: 'opened' };
    case 'list_unsubscribe':
    case 'link_unsubscribe':
      return { type: 'unsubscribed' };
    default:
      return { type: 'unknown' };
  }
}

/**
 * SparkPost's bounce classification codes (support doc "Bounce Classification Codes"). Auto-replies,
 * challenge-responses, subscribe and unsubscribe requests arrive as out-of-band "bounces" but say nothing
 * about deliverability; class 25 (Admin) is SparkPost's own policy refusing the message, including a
 * recipient on its suppression list whose reason (bounce, complaint or unsubscribe) it does not say.
 */
function classifyBounce(value: unknown): Classified {
  const code = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  const bounced = (bounceClass: BounceClass): Classified => ({ type: 'bounced', bounceClass });
  switch (code) {
    case 10: // Invalid Recipient
    case 30: // Generic Bounce: No RCPT
      return bounced('hard');
    case 20: // Soft Bounce
    case 21: // DNS Failure
    case 22: // Mailbox Full
    case 23: // Too Large
    case 24: // Timeout
    case 40: // Generic Bounce
    case 70: // Transient Failure
    case 50: // Mail Block
    case 51: // Spam Block
    case 52: // Spam Content
    case 53: // Prohibited Attachment
    case 54: // Relaying Denied
      return bounced('soft');
    case 25: // Admin Failure
      return { type: 'rejected', providerSuppression: null };
    case 90: // Unsubscribe request
      return { type: 'unsubscribed' };
    case 60: // Auto-Reply
    case 80: // Subscribe request
    case 100: // Challenge-Response
      return { type: 'unknown' };
    default: // 1 Undetermined, or a class this list does not know
      return bounced('undetermined');
  }
}

/** `timestamp` is a string of unix seconds; ISO 8601 strings and numbers are accepted too. */
function timestampOf(value: unknown): Date | undefined {
  let ms = NaN;
  if (typeof value === 'number') ms = value * 1000;
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value))
    ms = Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function idOf(value: unknown): string | null {
  if (typeof value === 'string' && value !== '' && value.length <= 1024) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return null;
}

function eventIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '' && value.length <= 256) return value;
  return undefined;
}
