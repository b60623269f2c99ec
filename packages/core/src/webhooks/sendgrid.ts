import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { readSendGridStream, readSendGridTrackingId } from '../carriers/sendgrid.js';
import { streamField } from './stream-field.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails, type ProviderSuppression } from '../events/delivery-event.js';
import { checkSharedSecret, unauthorized } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, receiptOf, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';

/** How far the signed timestamp may be from now, either way, when `toleranceSeconds` is not set. */
export const SENDGRID_DEFAULT_TOLERANCE_SECONDS = 600;

export const SENDGRID_SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const SENDGRID_TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/** How a project's SendGrid Event Webhook is authenticated (docs/providers/sendgrid.md#authentication-sendgridwebhookauth). */
export interface SendGridWebhookAuth {
  /**
   * The verification key SendGrid shows for the Signed Event Webhook (base64 DER SubjectPublicKeyInfo of
   * an ECDSA P-256 key), or the same key as a PEM.
   */
  publicKey: string;
  /** How far the signed timestamp may be from now, either way. Default 600 seconds. */
  toleranceSeconds?: number;
  /**
   * SendGrid's OAuth option: when set, the request must also carry `Authorization: Bearer <token>` with
   * one of these tokens (a list, for rotation).
   */
  oauthTokens?: readonly string[];
  /**
   * SendGrid unsubscribe groups (`asm_group_id`) by the stream each stands for: `{ "<groupId>": "<stream>" }`.
   * An `unsubscribe` or `group_unsubscribe` event of a mapped group is recorded in that stream, whatever
   * stream the message carried (docs/providers/sendgrid.md#unsubscribes).
   */
  unsubscribeGroups?: Readonly<Record<string, string>>;
}

/** What the SendGrid parser needs from the project's configuration. */
export interface ParseSendGridWebhookOptions {
  /** `SendGridWebhookAuth.unsubscribeGroups`. */
  unsubscribeGroups?: Readonly<Record<string, string>> | undefined;
}

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * `dropped` reasons that name SendGrid's own suppression lists (sendgrid-docs `event.md`). A Map, not an
 * object literal: a reason such as "constructor" must not find Object.prototype's members.
 */
const dropSuppressions = new Map<string, ProviderSuppression>([
  ['bounced address', 'bounce'],
  ['spam reporting address', 'complaint'],
  ['unsubscribed address', 'unsubscribe'],
]);

/**
 * The console's "Test Your Integration" posts SendGrid's documentation sample: every event is for
 * `example@test.com` (a domain nobody sends real mail to through their own account).
 */
const testPostRecipient = 'example@test.com';

/**
 * Normalizes a decoded SendGrid Event Webhook body: a JSON array of flat event objects, one recipient each.
 * Items that cannot be used are skipped with a warning; an empty array and the console's test post are
 * pings. Throws only `invalid_payload`, for a body that is not an array.
 *
 * @example
 * const receipt = parseSendGridWebhook(JSON.parse(body));
 */
export function parseSendGridWebhook(payload: unknown, options: ParseSendGridWebhookOptions = {}): WebhookReceipt {
  if (!Array.isArray(payload)) {
    throw new MailwardenError('invalid_payload', 'A SendGrid Event Webhook body is a JSON array of events.');
  }
  if (payload.every((item: unknown) => isRecord(item) && item['email'] === testPostRecipient)) return noticeReceipt('ping');
  return receiptOf(payload.map((item) => parseItem(item, options.unsubscribeGroups)));
}

/**
 * The SendGrid receiver: verifies the ECDSA P-256 signature over the timestamp header plus the raw body
 * bytes (re-serialized JSON never verifies: real bodies separate events with `\r\n`), rejects a timestamp
 * outside the tolerance, checks the OAuth bearer token when configured, then parses the body.
 *
 * @example
 * const sendgrid = createSendGridWebhook(env);
 * const receipt = await sendgrid.receive(request, { publicKey: process.env.SENDGRID_WEBHOOK_KEY! });
 */
export function createSendGridWebhook(env: WebhookEnvironment): ProviderWebhook<SendGridWebhookAuth> {
  // Parsing a key costs more than verifying with it; projects have one key each, so a small cache suffices.
  const keys = new LRUCache<string, KeyObject>({ max: 100 });
  const keyOf = (text: string): KeyObject => {
    let key = keys.get(text);
    if (key === undefined) {
      key = parsePublicKey(text);
      keys.set(text, key);
    }
    return key;
  };
  return {
    provider: 'sendgrid',
    async receive(request, auth) {
      verifySendGridSignature(request, keyOf(auth.publicKey), auth.toleranceSeconds, env.now());
      if (auth.oauthTokens !== undefined && auth.oauthTokens.length > 0) {
        checkSharedSecret(request, { bearer: auth.oauthTokens });
      }
      return parseSendGridWebhook(bodyJson(request.rawBody), { unsubscribeGroups: auth.unsubscribeGroups });
    },
  };
}

/** SendGrid signs its payloads; its OAuth option is a bearer token, not basic credentials: a 401 invites none. */
export const sendGridWebhookDefinition: ProviderWebhookDefinition<SendGridWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createSendGridWebhook,
};

function verifySendGridSignature(
  request: WebhookRequest,
  key: KeyObject,
  toleranceSeconds = SENDGRID_DEFAULT_TOLERANCE_SECONDS,
  now: number,
): void {
  const signature = headerValue(request, SENDGRID_SIGNATURE_HEADER);
  const timestamp = headerValue(request, SENDGRID_TIMESTAMP_HEADER);
  if (signature === undefined || timestamp === undefined) {
    throw unauthorized('The SendGrid signature or timestamp header is missing.');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw unauthorized('The SendGrid timestamp header is not unix seconds.');
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw unauthorized('The SendGrid timestamp is outside the accepted tolerance.');
  }
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), request.rawBody]);
  let valid = false;
  try {
    valid = verify('sha256', signed, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    // A malformed DER signature is a failed verification, not a server error.
  }
  if (!valid) throw unauthorized('The SendGrid signature does not match the body.');
}

/** Accepts the base64 DER key SendGrid shows (white space ignored) or a PEM; only ECDSA P-256 keys. */
function parsePublicKey(text: string): KeyObject {
  let key: KeyObject;
  try {
    key = text.includes('-----BEGIN')
      ? createPublicKey(text)
      : createPublicKey({ key: Buffer.from(text.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw unauthorized('The configured SendGrid verification key is not a valid public key.');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw unauthorized('The configured SendGrid verification key is not an ECDSA P-256 key.');
  }
  return key;
}

/** One batch item: an event, or the reason it was skipped. */
function parseItem(item: unknown, unsubscribeGroups: Readonly<Record<string, string>> | undefined): DeliveryEvent | string {
  if (!isRecord(item)) return 'the item is not an object';
  const event = stringField(item, 'event');
  if (event === undefined) return 'the item has no event';
  const recipient = stringField(item, 'email');
  if (recipient === undefined) return `the ${event} event has no email`;
  const timestamp = item['timestamp'];
  const occurredAt = new Date(typeof timestamp === 'number' ? timestamp * 1000 : NaN);
  if (Number.isNaN(occurredAt.getTime())) return `the ${event} event has no valid timestamp`;
  const sgMessageId = stringField(item, 'sg_message_id');
  // docs/providers/sendgrid.md#message-id-and-dedup-key: the X-Message-Id the send API returned is sg_message_id up to its first dot.
  const messageId = sgMessageId?.split('.', 1)[0] || null;
  if (messageId !== null && messageId.length > 1024) return `the ${event} event has an over-long sg_message_id`;
  const details = detailsOf(event, item);
  const classified = classify(event, item);
  const groupStream = classified.type === 'unsubscribed' ? unsubscribeGroupStream(item, unsubscribeGroups) : undefined;
  return {
    provider: 'sendgrid',
    ...classified,
    messageId,
    recipient,
    trackingId: readSendGridTrackingId(item),
    ...(groupStream === undefined ? streamField(readSendGridStream(item)) : { stream: groupStream }),
    occurredAt,
    eventKey: eventKeyOf(event, item, recipient, timestamp as number),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * The stream an unsubscribe's group stands for (`unsubscribeGroups`), or `undefined` when the event names
 * no group or an unmapped one. A mapped name that is no stream name is passed on as it is: the event then
 * records it as an invalid stream, with a warning, rather than guess.
 */
function unsubscribeGroupStream(
  item: Record<string, unknown>,
  unsubscribeGroups: Readonly<Record<string, string>> | undefined,
): string | undefined {
  const group = item['asm_group_id'];
  if (unsubscribeGroups === undefined || (typeof group !== 'number' && typeof group !== 'string')) return undefined;
  const id = String(group);
  return Object.hasOwn(unsubscribeGroups, id) ? unsubscribeGroups[id] : undefined;
}

/**
 * What SendGrid said: `status` (enhanced code) and `reason` (or a deferral's `response`, the SMTP
 * reply); a bounce's `bounce_classification` (else its `type`, bounce or blocked); a drop's `reason`;
 * an open's or click's `useragent` and a click's `url`. SendGrid's spam reports carry no feedback type.
 */
function detailsOf(event: string, item: Record<string, unknown>): EventDetails | undefined {
  const reply = stringField(item, 'reason') ?? stringField(item, 'response');
  switch (event) {
    case 'bounce':
      return eventDetails({
        smtpStatus: stringField(item, 'status') ?? smtpStatusIn(reply),
        diagnostic: reply,
        bounceClassification: stringField(item, 'bounce_classification') ?? item['type'],
      });
    case 'deferred':
    case 'delivered':
      return eventDetails({ smtpStatus: stringField(item, 'status') ?? smtpStatusIn(reply), diagnostic: reply });
    case 'dropped':
      return eventDetails({ rejectReason: item['reason'] });
    case 'open':
      return eventDetails({ userAgent: item['useragent'] });
    case 'click':
      return eventDetails({ url: item['url'], userAgent: item['useragent'] });
    default:
      return undefined;
  }
}

function classify(event: string, item: Record<string, unknown>): Classified {
  switch (event) {
    case 'processed':
      return { type: 'sent' };
    case 'delivered':
      return { type: 'delivered' };
    case 'deferred':
      return { type: 'deferred' };
    case 'bounce': {
      // `blocked` is the receiver refusing this message (reputation, content, rate), not the address.
      const type = stringField(item, 'type');
      const bounceClass = type === 'bounce' ? 'hard' : type === 'blocked' ? 'soft' : 'undetermined';
      return { type: 'bounced', bounceClass };
    }
    case 'dropped': {
      const reason = stringField(item, 'reason')?.trim().toLowerCase() ?? '';
      return { type: 'rejected', providerSuppression: dropSuppressions.get(reason) ?? null };
    }
    case 'open':
      return { type: 'opened' };
    case 'click':
      return { type: 'clicked' };
    case 'spamreport':
      return { type: 'complained' };
    case 'unsubscribe':
    case 'group_unsubscribe':
      return { type: 'unsubscribed' };
    default: // group_resubscribe, account events, anything newer
      return { type: 'unknown' };
  }
}

/**
 * `sg_event_id` changes when SendGrid retries a batch (docs/providers/sendgrid.md#message-id-and-dedup-key), so the key is the SHA-256 of the JSON
 * array [event, sg_message_id (else smtp-id, else null), email, timestamp, url (click events only, else
 * null)]: the fields a retry repeats and that tell two events of one recipient apart.
 */
function eventKeyOf(event: string, item: Record<string, unknown>, email: string, timestamp: number): string {
  const messageRef = stringField(item, 'sg_message_id') ?? stringField(item, 'smtp-id') ?? null;
  const url = event === 'click' ? (stringField(item, 'url') ?? null) : null;
  return hashedEventKey([event, messageRef, email, timestamp, url]);
}
