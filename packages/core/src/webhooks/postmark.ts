import { readPostmarkStream, readPostmarkTrackingId } from '../carriers/postmark.js';
import { streamField } from './stream-field.js';
import { isStreamName } from '../stream.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { checkSharedSecret, type SharedSecretAuth } from './auth.js';
import { jsonObjectMembers } from '../json/members.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyText } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type WebhookReceipt } from './receipt.js';

/** Postmark webhooks are not signed: configure `HttpAuth` (basic auth) and/or `HttpHeaders` (docs/providers/postmark.md#authentication-postmarkwebhookauth). */
export type PostmarkWebhookAuth = SharedSecretAuth;

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/** Where each record type keeps its time. */
const TIME_FIELDS = ['BouncedAt', 'DeliveredAt', 'ReceivedAt', 'ChangedAt'] as const;

/**
 * Normalizes one Postmark webhook POST, given as the raw JSON text: Postmark's numeric `ID` can exceed
 * 2^53, so its digits are read from the text, never from the rounded number. `receivedAt` stands in for
 * the event time when the record has none (anymail #447). A record that is not a delivery event (an
 * inbound message, an unknown `RecordType`) is skipped with a warning. Throws only `invalid_payload`,
 * for text that is not a JSON object.
 *
 * @example
 * const receipt = parsePostmarkWebhook(body, new Date());
 */
export function parsePostmarkWebhook(text: string, receivedAt: Date): WebhookReceipt {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    throw new MailwardenError('invalid_payload', 'The Postmark webhook body is not JSON.');
  }
  if (!isRecord(record)) throw new MailwardenError('invalid_payload', 'A Postmark webhook body is one JSON object.');
  return receiptOf([parseRecord(record, recordIdOf(record, text), receivedAt)]);
}

/**
 * `postmarkRecordId(text)` for a record already parsed from `text`: only a numeric `ID` needs its digits
 * read from the text (most records, deliveries, opens and clicks, have no `ID` at all).
 */
export function recordIdOf(record: Record<string, unknown>, text: string): string | undefined {
  const id = record['ID'];
  return typeof id === 'number' ? postmarkRecordId(text) : stringRecordId(id);
}

/** A string `ID` counts when it is non-empty and at most 100 characters. */
function stringRecordId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= 100 ? value : undefined;
}

/**
 * The Postmark receiver: checks the configured basic auth or custom header secret (there is no payload
 * signature), then parses the body; the time of receipt comes from `env.now`.
 *
 * @example
 * const postmark = createPostmarkWebhook(env);
 * const receipt = await postmark.receive(request, { headers: [{ name: 'X-Webhook-Secret', value: secret }] });
 */
export function createPostmarkWebhook(env: WebhookEnvironment): ProviderWebhook<PostmarkWebhookAuth> {
  return {
    provider: 'postmark',
    async receive(request, auth) {
      checkSharedSecret(request, auth);
      return parsePostmarkWebhook(bodyText(request.rawBody), new Date(env.now()));
    },
  };
}

/** Postmark can authenticate with basic credentials (`HttpAuth`): a 401 invites them. */
export const postmarkWebhookDefinition: ProviderWebhookDefinition<PostmarkWebhookAuth> = {
  basicChallenge: true,
  createReceiver: createPostmarkWebhook,
};

function parseRecord(record: Record<string, unknown>, id: string | undefined, receivedAt: Date): DeliveryEvent | string {
  const recordType = stringField(record, 'RecordType');
  if (recordType === undefined) return 'the record has no RecordType (an inbound message?)';
  const classified = classify(recordType, record);
  if (classified === undefined) return `unknown RecordType ${recordType}`;
  const recipient = stringField(record, 'Email') ?? stringField(record, 'Recipient');
  if (recipient === undefined) return `the ${recordType} record names no recipient`;

  const timeField = TIME_FIELDS.map((name) => stringField(record, name)).find((value) => value !== undefined);
  const messageId = stringField(record, 'MessageID') ?? null;
  const details = detailsOf(recordType, record, classified);
  return {
    provider: 'postmark',
    ...classified,
    messageId,
    recipient,
    trackingId: readPostmarkTrackingId(record),
    ...streamField(readPostmarkStream(record) ?? (classified.type === 'unsubscribed' ? messageStreamOf(record) : null)),
    occurredAt: timeOf(timeField) ?? receivedAt,
    // Bounce and SpamComplaint records have a unique ID; the others are keyed by a SHA-256 of RecordType,
    // MessageID, recipient, the record's own time field, and what tells records of one message apart
    // (bounce TypeCode, subscription state, clicked link). Never the receipt time: a retry must match.
    eventKey:
      id !== undefined
        ? `${recordType}:${id}`
        : hashedEventKey([
            recordType,
            messageId,
            recipient,
            timeField ?? null,
            record['TypeCode'] ?? null,
            record['SuppressSending'] ?? null,
            record['SuppressionReason'] ?? null,
            record['OriginalLink'] ?? null,
          ]),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * An unsubscribe's scope when the message carried no stream: Postmark's own `MessageStream` (Postmark
 * suppresses per message stream), when its ID is a stream name; `null` otherwise
 * (docs/providers/postmark.md#unsubscribes).
 */
function messageStreamOf(record: Record<string, unknown>): string | null {
  const stream = record['MessageStream'];
  return isStreamName(stream) ? stream : null;
}

/**
 * What Postmark said: `Details` (the SMTP reply; else `Description`, Postmark's explanation) and the
 * code in it, a bounce's `Type` (`HardBounce`, `Transient`, …) as its classification or, when Postmark
 * did not send, as the reject reason (else a subscription change's `SuppressionReason`), an open's or
 * click's `UserAgent` and a click's `OriginalLink`. Postmark's spam complaints carry no feedback type.
 */
function detailsOf(recordType: string, record: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const reply = stringField(record, 'Details') ?? stringField(record, 'Description');
  const bounceType = recordType === 'Bounce' ? record['Type'] : undefined;
  return eventDetails({
    smtpStatus: smtpStatusIn(reply),
    diagnostic: reply,
    bounceClassification: classified.type === 'bounced' || classified.type === 'deferred' ? bounceType : undefined,
    rejectReason: classified.type === 'rejected' ? (bounceType ?? record['SuppressionReason']) : undefined,
    userAgent: record['UserAgent'],
    url: record['OriginalLink'],
  });
}

function classify(recordType: string, record: Record<string, unknown>): Classified | undefined {
  switch (recordType) {
    case 'Bounce':
    case 'SpamComplaint':
      return classifyBounceType(record['Type'], record['TypeCode']);
    case 'Delivery':
      return { type: 'delivered' };
    case 'Open':
      return { type: 'opened' };
    case 'Click':
      return { type: 'clicked' };
    case 'SubscriptionChange':
      return classifySubscriptionChange(record);
    default:
      return undefined;
  }
}

/** Postmark's bounce `Type` names by `TypeCode` (postmark.js `BounceTypeCode`), for records that lack `Type`. */
const TYPE_BY_CODE: Record<number, string> = {
  1: 'HardBounce',
  2: 'Transient',
  16: 'Unsubscribe',
  32: 'Subscribe',
  64: 'AutoResponder',
  128: 'AddressChange',
  256: 'DnsError',
  512: 'SpamNotification',
  1024: 'OpenRelayTest',
  2048: 'Unknown',
  4096: 'SoftBounce',
  8192: 'VirusNotification',
  16384: 'ChallengeVerification',
  100000: 'BadEmailAddress',
  100001: 'SpamComplaint',
  100002: 'ManuallyDeactivated',
  100003: 'Unconfirmed',
  100006: 'Blocked',
  100007: 'SMTPApiError',
  100008: 'InboundError',
  100009: 'DMARCPolicy',
  100010: 'TemplateRenderingFailed',
};

/**
 * A bounce record's `Type`. `Inactive: true` only says Postmark deactivated the address (it does for hard
 * bounces, complaints and manual deactivation); hard bounces and complaints already suppress by type, and
 * a manual deactivation is not a bounce or complaint, so `Inactive` adds no suppression.
 */
function classifyBounceType(typeValue: unknown, codeValue: unknown): Classified {
  const type = typeof typeValue === 'string' ? typeValue : typeof codeValue === 'number' ? TYPE_BY_CODE[codeValue] : undefined;
  switch (type) {
    case 'HardBounce':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'SoftBounce':
    case 'VirusNotification': // the message carried (or was taken for) a virus: not the address's fault
      return { type: 'bounced', bounceClass: 'soft' };
    case 'Transient': // "delayed", Postmark keeps trying
    case 'DnsError': // a temporary DNS failure, Postmark keeps trying
      return { type: 'deferred' };
    case 'BadEmailAddress':
    case 'ManuallyDeactivated':
    case 'Blocked':
    case 'DMARCPolicy':
    case 'Unconfirmed':
      return { type: 'rejected', providerSuppression: null };
    case 'Unsubscribe':
    case 'ManualSuppression':
      return { type: 'unsubscribed' };
    case 'SpamNotification':
    case 'SpamComplaint':
      return { type: 'complained' };
    // Replies, relay tests, sender-side API or template failures and inbound errors say nothing about
    // the recipient's address.
    default:
      return { type: 'unknown' };
  }
}

/**
 * Postmark's suppression list changed. A suppression for a hard bounce or complaint is that bounce or
 * complaint of the message (broadcast streams report bounces only this way), a `ManualSuppression` the
 * recipient's unsubscribe; a reactivation (`SuppressSending: false`) does not lift a mailwarden
 * suppression, so it is `unknown` (docs/providers/postmark.md#unsubscribes).
 */
function classifySubscriptionChange(record: Record<string, unknown>): Classified {
  if (record['SuppressSending'] === false) return { type: 'unknown' };
  switch (record['SuppressionReason']) {
    case 'HardBounce':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'SpamComplaint':
      return { type: 'complained' };
    case 'ManualSuppression':
      return { type: 'unsubscribed' };
    default:
      return { type: 'unknown' };
  }
}

/** Postmark times are ISO 8601 with up to 7 fraction digits; one without an offset is taken as UTC. */
function timeOf(value: string | undefined): Date | undefined {
  if (value === undefined || !/^\d{4}-\d\d-\d\dT/.test(value)) return undefined;
  const date = new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * The exact digits of the top-level `ID` member of a record's JSON text (`JSON.parse` rounds integers
 * above 2^53); nested members (Metadata may hold a key "ID") are not it, and a repeated member counts
 * last, as in `JSON.parse`. A non-empty string `ID` of up to 100 characters counts too; anything else,
 * or a text that is not a JSON object, has no ID.
 *
 * @example
 * postmarkRecordId('{"RecordType":"Bounce","ID":4323372036854775807}'); // '4323372036854775807'
 */
export function postmarkRecordId(text: string): string | undefined {
  const id = jsonObjectMembers(text)
    ?.filter((member) => member.name === 'ID')
    .at(-1)?.value;
  if (id === undefined) return undefined;
  if (/^(0|[1-9][0-9]{0,99})$/.test(id)) return id;
  return id.startsWith('"') ? stringRecordId(JSON.parse(id)) : undefined;
}
