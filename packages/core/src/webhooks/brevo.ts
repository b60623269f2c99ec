import { readBrevoStream, readBrevoTrackingId } from '../carriers/brevo.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { isRecord, stringField } from '../json/record.js';
import { checkSharedSecret, type SharedSecretAuth } from './auth.js';
import { bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { streamField } from './stream-field.js';

/**
 * Brevo webhooks are not signed: configure the basic credentials of the webhook URL, its bearer token or
 * a custom header (docs/providers/brevo.md#authentication-brevowebhookauth).
 */
export type BrevoWebhookAuth = SharedSecretAuth;

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * Normalizes a decoded Brevo transactional webhook body: one event object, or an array of them when the
 * webhook is batched. Items that cannot be used are skipped with a warning; an empty batch is a ping.
 * Throws only `invalid_payload`, for a body that is neither an object nor an array.
 *
 * @example
 * const receipt = parseBrevoWebhook(JSON.parse(body));
 */
export function parseBrevoWebhook(payload: unknown): WebhookReceipt {
  if (!Array.isArray(payload) && !isRecord(payload)) {
    throw new MailwardenError('invalid_payload', 'A Brevo webhook body is a JSON event object, or an array of them when batched.');
  }
  const items: unknown[] = Array.isArray(payload) ? payload : [payload];
  return receiptOf(items.map(parseItem));
}

/**
 * The Brevo receiver: checks the configured basic credentials, bearer token or custom header (Brevo signs
 * nothing), then parses the JSON body.
 *
 * @example
 * const brevo = createBrevoWebhook(env);
 * const receipt = await brevo.receive(request, { basic: [{ username: 'brevo', password: secret }] });
 */
export function createBrevoWebhook(_env: WebhookEnvironment): ProviderWebhook<BrevoWebhookAuth> {
  return {
    provider: 'brevo',
    async receive(request, auth) {
      checkSharedSecret(request, auth);
      return parseBrevoWebhook(bodyJson(request.rawBody));
    },
  };
}

/**
 * Brevo can authenticate with basic credentials: a 401 invites them. It discards an event answered with
 * a 5xx (or a 4xx other than 429) and retries only 429: a store outage is answered 429.
 */
export const brevoWebhookDefinition: ProviderWebhookDefinition<BrevoWebhookAuth> = {
  basicChallenge: true,
  storeUnavailableStatus: 429,
  createReceiver: createBrevoWebhook,
};

function parseItem(item: unknown): ItemOutcome {
  if (!isRecord(item)) return 'the item is not an object';
  const type = stringField(item, 'event');
  if (type === undefined) return 'the item has no event';
  const recipient = stringField(item, 'email');
  if (recipient === undefined) return `the ${type} event has no email`;
  const occurredAt = timestampOf(item);
  if (occurredAt === undefined) return `the ${type} event has no valid ts_epoch, ts_event or ts`;
  const rawMessageId = stringField(item, 'message-id');
  const classified = classify(type);
  const details = detailsOf(item, classified);
  return {
    provider: 'brevo',
    ...classified,
    messageId: messageIdOf(rawMessageId),
    recipient,
    trackingId: readBrevoTrackingId(item),
    ...streamField(readBrevoStream(item)),
    occurredAt,
    // Brevo gives no event id (`id` is the webhook's): hash the fields a retry repeats.
    eventKey: hashedEventKey([type, rawMessageId, recipient, item['ts_epoch'], item['ts_event'], item['link']]),
    ...(details === undefined ? {} : { details }),
  };
}

/** Payload `event` values (docs/providers/brevo.md#events-and-how-they-map); they differ from the subscription names. */
function classify(type: string): Classified {
  switch (type) {
    case 'request':
    case 'sent':
      return { type: 'sent' };
    case 'delivered':
      return { type: 'delivered' };
    case 'deferred':
      return { type: 'deferred' };
    case 'hard_bounce':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'soft_bounce':
      return { type: 'bounced', bounceClass: 'soft' };
    // Brevo's blocklist mixes bounces, unsubscribes and complaints, and `blocked` never says which.
    case 'blocked':
      return { type: 'rejected', providerSuppression: null };
    // Brevo refused to send: an address it judges invalid, or an error of the request.
    case 'invalid_email':
    case 'error':
      return { type: 'rejected', providerSuppression: null };
    case 'spam':
    case 'complaint':
      return { type: 'complained' };
    // Opening is a fact of the message, so counting a first or a proxy open as an open cannot double count.
    case 'opened':
    case 'unique_opened':
    case 'proxy_open':
    case 'unique_proxy_open':
      return { type: 'opened' };
    case 'click':
      return { type: 'clicked' };
    case 'unsubscribe':
    case 'unsubscribed':
      return { type: 'unsubscribed' };
    default:
      return { type: 'unknown' };
  }
}

/** `reason` (an SMTP reply on bounces and deferrals, Brevo's words on blocked and errors), the bounce's event name, a click's `link`. */
function detailsOf(item: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const reason = stringField(item, 'reason');
  const rejected = classified.type === 'rejected';
  return eventDetails({
    smtpStatus: smtpStatusIn(reason),
    diagnostic: rejected ? undefined : reason,
    // Brevo classifies a bounce by its event name alone.
    bounceClassification: classified.type === 'bounced' ? item['event'] : undefined,
    rejectReason: rejected ? reason : undefined,
    userAgent: item['user_agent'],
    url: item['link'],
  });
}

/**
 * `ts_epoch` (documented as milliseconds, seen in seconds: told apart by magnitude, 10^11 being 1973 in
 * milliseconds and 5138 in seconds), else `ts_event`, else `ts` (seconds). `date` is local time: unused.
 */
function timestampOf(item: Record<string, unknown>): Date | undefined {
  for (const [name, unit] of [
    ['ts_epoch', undefined],
    ['ts_event', 1000],
    ['ts', 1000],
  ] as const) {
    const value = numberOf(item[name]);
    if (value === undefined) continue;
    const ms = value * (unit ?? (Math.abs(value) >= 1e11 ? 1 : 1000));
    const date = new Date(ms);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return undefined;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return Number(value);
  return undefined;
}

/** `message-id` without the angle brackets live events have (docs examples have none). */
function messageIdOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  const id = /^<(.*)>$/.exec(value)?.[1] ?? value;
  return id === '' || id.length > 1024 ? null : id;
}
