import { createHmac } from 'node:crypto';
import { readMailerSendStream, readMailerSendTrackingId } from '../carriers/mailersend.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { isRecord, stringField } from '../json/record.js';
import { secretsEqual, unauthorized } from './auth.js';
import { bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { headerValue } from './request.js';
import { streamField } from './stream-field.js';

/** How a project's MailerSend webhooks are authenticated (docs/providers/mailersend.md#authentication-mailersendwebhookauth). */
export interface MailerSendWebhookAuth {
  /** The webhook's signing secret (MailerSend: Domains → Webhooks → the webhook); a list while rotating. */
  signingSecret: string | readonly string[];
}

/**
 * The secret MailerSend signs its `webhook.test` ping with, whatever the webhook's own: public, so a
 * request it signs is only ever taken as that ping, and records nothing (docs/providers/mailersend.md#authentication-mailersendwebhookauth).
 */
export const MAILERSEND_TEST_SECRET = 'test_Am3L1GuOIc4blLUuHqAPxxwkZaJyEk8G';

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * Normalizes a decoded MailerSend webhook body: one activity per POST, in either payload version (1:
 * `data.email.{recipient,message,tags}` and `data.morph`; 2: `data.recipient`, `data.message_id`,
 * `data.tags` and `data.meta`). The `webhook.test` ping and account events (no `activity.` type) are a
 * ping; an activity that cannot be used is skipped with a warning. Throws only `invalid_payload`, for a
 * body that is not a JSON object.
 *
 * @example
 * const receipt = parseMailerSendWebhook(JSON.parse(body));
 */
export function parseMailerSendWebhook(payload: unknown): WebhookReceipt {
  if (!isRecord(payload)) throw new MailwardenError('invalid_payload', 'A MailerSend webhook body is a JSON object.');
  return receiptOf([parseActivity(payload)]);
}

/**
 * The MailerSend receiver: checks the `Signature` header, the hex HMAC-SHA256 of the raw body keyed with
 * the signing secret, in constant time, then parses. MailerSend escapes `/` as `\/`, so only the bytes as
 * received are ever verified. A body signed with MailerSend's public test secret is admitted only as the
 * `webhook.test` ping, answered 2xx (MailerSend saves a webhook only then) and recorded as nothing. The
 * signature has no timestamp: a replay is a duplicate of `data.id`, the activity id.
 *
 * @example
 * const mailersend = createMailerSendWebhook(env);
 * const receipt = await mailersend.receive(request, { signingSecret: process.env.MAILERSEND_WEBHOOK_SECRET! });
 */
export function createMailerSendWebhook(_env: WebhookEnvironment): ProviderWebhook<MailerSendWebhookAuth> {
  return {
    provider: 'mailersend',
    async receive(request, auth) {
      const secrets = typeof auth.signingSecret === 'string' ? [auth.signingSecret] : auth.signingSecret;
      if (secrets.length === 0) throw unauthorized('No MailerSend signing secret is configured.');
      const given = headerValue(request, 'signature');
      if (given === undefined) throw unauthorized('The MailerSend webhook has no Signature header.');
      let ok = false;
      for (const secret of secrets) ok = secretsEqual(given, mailerSendSignature(request.rawBody, secret)) || ok;
      if (ok) return parseMailerSendWebhook(bodyJson(request.rawBody));
      if (secretsEqual(given, mailerSendSignature(request.rawBody, MAILERSEND_TEST_SECRET)) && isTestPing(request.rawBody)) {
        return noticeReceipt('ping');
      }
      throw unauthorized('The MailerSend signature does not match.');
    },
  };
}

/** MailerSend signs its payloads (no basic credentials): a 401 invites none. */
export const mailerSendWebhookDefinition: ProviderWebhookDefinition<MailerSendWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createMailerSendWebhook,
};

/** The `Signature` MailerSend sends: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret's bytes. */
export function mailerSendSignature(rawBody: Uint8Array, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/** Whether a body is the `webhook.test` ping; anything else signed with the public test secret is forged. */
function isTestPing(rawBody: Uint8Array): boolean {
  try {
    const payload = bodyJson(rawBody);
    return isRecord(payload) && payload['type'] === 'webhook.test';
  } catch {
    return false;
  }
}

function parseActivity(payload: Record<string, unknown>): ItemOutcome {
  const envelopeType = stringField(payload, 'type');
  // The ping, account events (sender_identity.verified, maintenance.start, …) and misrouted inbound mail.
  if (envelopeType !== undefined && !envelopeType.startsWith('activity.')) return 'ignored';
  const data = payload['data'];
  if (!isRecord(data)) return 'the activity has no data object';
  const type = stringField(data, 'type') ?? envelopeType?.slice('activity.'.length);
  if (type === undefined) return 'the activity has no type';
  // Version 1 nests the email; version 2 flattens it into data.
  const email = isRecord(data['email']) ? data['email'] : undefined;
  const recipient = recipientOf(data, email);
  if (recipient === undefined) return `the ${type} activity has no recipient`;
  const createdAt = data['created_at'] ?? payload['created_at'];
  const occurredAt = dateOf(createdAt);
  if (occurredAt === undefined) return `the ${type} activity has no valid created_at`;
  const messageId = idOf(email !== undefined && isRecord(email['message']) ? email['message']['id'] : data['message_id']);
  const tags = email !== undefined ? email['tags'] : data['tags'];
  const classified = classify(type);
  const details = detailsOf(data, classified);
  const activityId = stringField(data, 'id');
  return {
    provider: 'mailersend',
    ...classified,
    messageId,
    recipient,
    trackingId: readMailerSendTrackingId(tags),
    ...streamField(readMailerSendStream(tags)),
    occurredAt,
    // data.id, the activity id, is kept on retries; without one, what a retry repeats.
    eventKey:
      activityId !== undefined && activityId.length <= 256 ? activityId : hashedEventKey([type, messageId, recipient, createdAt ?? null]),
    ...(details === undefined ? {} : { details }),
  };
}

/** `data.email.recipient.email` (version 1), else `data.recipient` (version 2: a string, or an object with `email`), else `data.email` as a string. */
function recipientOf(data: Record<string, unknown>, email: Record<string, unknown> | undefined): string | undefined {
  if (email !== undefined) return isRecord(email['recipient']) ? stringField(email['recipient'], 'email') : undefined;
  const recipient = data['recipient'];
  if (typeof recipient === 'string') return recipient === '' ? undefined : recipient;
  if (isRecord(recipient)) return stringField(recipient, 'email');
  return stringField(data, 'email');
}

function classify(type: string): Classified {
  switch (type) {
    case 'sent':
      return { type: 'sent' };
    case 'delivered':
      return { type: 'delivered' };
    case 'deferred':
      return { type: 'deferred' };
    case 'hard_bounced':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'soft_bounced':
      return { type: 'bounced', bounceClass: 'soft' };
    case 'spam_complaint': // version 1
    case 'spam_complaints': // version 2
      return { type: 'complained' };
    case 'opened':
    case 'opened_unique':
      return { type: 'opened' };
    case 'clicked':
    case 'clicked_unique':
      return { type: 'clicked' };
    case 'unsubscribed':
      return { type: 'unsubscribed' };
    // The recipient is on a MailerSend suppression or hold list; its reason (`on_hold`, …) does not say which kind.
    case 'suppressed':
      return { type: 'rejected', providerSuppression: null };
    default: // survey_opened, survey_submitted, anything newer
      return { type: 'unknown' };
  }
}

/**
 * What MailerSend said: version 1's `morph` (`readable_reason`, else `reason`; a click's `url`) and
 * version 2's `meta` (`bounce_reason`, `bounce_code`, `bounce_type`, `suppression_reason`, `user_agent`,
 * `url`); the SMTP status is the code in the reason, else `bounce_code`.
 */
function detailsOf(data: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const morph = isRecord(data['morph']) ? data['morph'] : {};
  // meta is an empty array when it has nothing.
  const meta = isRecord(data['meta']) ? data['meta'] : {};
  const reason = stringField(morph, 'readable_reason') ?? stringField(morph, 'reason') ?? stringField(meta, 'bounce_reason');
  const rejected = classified.type === 'rejected';
  const failed = classified.type === 'bounced' || classified.type === 'deferred';
  return eventDetails({
    smtpStatus: failed ? (smtpStatusIn(reason) ?? meta['bounce_code']) : undefined,
    diagnostic: failed ? reason : undefined,
    bounceClassification: failed ? meta['bounce_type'] : undefined,
    rejectReason: rejected ? (stringField(meta, 'suppression_reason') ?? stringField(meta, 'reject_reason') ?? reason) : undefined,
    userAgent: meta['user_agent'] ?? morph['user_agent'],
    url: classified.type === 'clicked' ? (meta['url'] ?? morph['url']) : undefined,
  });
}

/**
 * ISO 8601 with up to microseconds (`2023-02-27T21:09:49.506000Z`), or `YYYY-MM-DD HH:MM:SS` (account
 * events), UTC unless an offset is given; the fraction is cut to milliseconds.
 */
function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$/.exec(value);
  if (match === null) return undefined;
  const [, day, time, fraction = '', zone = 'Z'] = match;
  const offset = zone === 'Z' ? zone : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const date = new Date(`${day}T${time}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function idOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value.length <= 1024 ? value : null;
}
