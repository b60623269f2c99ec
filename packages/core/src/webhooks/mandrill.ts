import { createHmac } from 'node:crypto';
import { readMandrillStream, readMandrillTrackingId } from '../carriers/mandrill.js';
import { streamField } from './stream-field.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { secretsEqual, unauthorized } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyForm } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';

export interface MandrillWebhookAuth {
  /** The webhook's key, from Mandrill's Webhooks page or the `webhooks/add` response. */
  webhookKey: string;
  /**
   * The webhook URL exactly as entered at Mandrill (scheme, host, path, query string; a trailing slash
   * matters). Mandrill signs it, and behind a proxy the app's own view of its URL differs.
   */
  url: string;
  /**
   * Accept Mandrill's URL check, `mandrill_events=[]` signed with the generic key `test-webhook`, as a
   * ping. Default `true`: the check comes before the webhook (and its key) exists, and an empty batch can
   * change nothing. Any other body signed with that key is refused.
   */
  allowTestKey?: boolean;
}

/** The key Mandrill signs its URL-verification POST with, before the webhook has a key of its own. */
const TEST_KEY = 'test-webhook';

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * Normalizes the decoded `mandrill_events` array. An empty array is a ping. Sync events (`type`
 * whitelist/blacklist) and inbound messages are not about a sent message and are ignored; malformed
 * items are skipped with a warning. Throws only `invalid_payload`, when the value is not an array.
 *
 * @example
 * const receipt = parseMandrillWebhook(JSON.parse(form.get('mandrill_events')!));
 */
export function parseMandrillWebhook(events: unknown): WebhookReceipt {
  if (!Array.isArray(events)) throw new MailwardenError('invalid_payload', 'mandrill_events is not a JSON array.');
  return receiptOf(events.map(parseEvent));
}

/**
 * The Mandrill receiver: checks `X-Mandrill-Signature` (base64 HMAC-SHA1 under the webhook key of the
 * configured URL followed by every form field, sorted by name, as name + value), then parses the
 * `mandrill_events` field. Mandrill's `HEAD` probe is answered by the HTTP layer, not here.
 *
 * @example
 * const mandrill = createMandrillWebhook(env);
 * const receipt = await mandrill.receive(request, { webhookKey, url: 'https://mail.example.com/projects/acme/webhooks/mandrill' });
 */
export function createMandrillWebhook(_env: WebhookEnvironment): ProviderWebhook<MandrillWebhookAuth> {
  return {
    provider: 'mandrill',
    async receive(request, auth) {
      const entries = bodyForm(request.rawBody);
      if (verify(request, entries, auth) === 'test') return noticeReceipt('ping');
      const raw = new Map(entries).get('mandrill_events');
      if (raw === undefined) throw new MailwardenError('invalid_payload', 'The Mandrill webhook has no mandrill_events field.');
      let events: unknown;
      try {
        events = JSON.parse(raw);
      } catch {
        throw new MailwardenError('invalid_payload', 'mandrill_events is not JSON.');
      }
      return parseMandrillWebhook(events);
    },
  };
}

/** Mandrill signs its payloads (no basic credentials): a 401 invites none. */
export const mandrillWebhookDefinition: ProviderWebhookDefinition<MandrillWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createMandrillWebhook,
};

/** Which key signed the request, or `webhook_unauthorized`. The test key is only good for the empty URL check. */
function verify(request: WebhookRequest, entries: [string, string][], auth: MandrillWebhookAuth): 'webhook' | 'test' {
  // Like PHP's $_POST, which Mandrill's reference code signs, a repeated field counts once, last wins.
  const fields = new Map(entries);
  if (!auth?.webhookKey || !auth.url) throw unauthorized('No Mandrill webhook key and URL are configured.');
  const signature = headerValue(request, 'x-mandrill-signature') ?? headerValue(request, 'x-mailchimp-signature');
  if (signature === undefined) throw unauthorized('The request has no X-Mandrill-Signature header.');
  const signed =
    auth.url +
    [...fields.keys()]
      .sort()
      .map((name) => name + fields.get(name))
      .join('');
  if (secretsEqual(signature, sign(auth.webhookKey, signed))) return 'webhook';
  const isUrlCheck = entries.length === 1 && fields.get('mandrill_events') === '[]';
  if (auth.allowTestKey !== false && isUrlCheck && secretsEqual(signature, sign(TEST_KEY, signed))) return 'test';
  throw unauthorized('The X-Mandrill-Signature does not match the webhook key and URL.');
}

function sign(key: string, text: string): string {
  return createHmac('sha1', key).update(text, 'utf8').digest('base64');
}

function parseEvent(item: unknown): ItemOutcome {
  if (!isRecord(item)) return 'the event is not an object';
  const event = stringField(item, 'event');
  if (event === undefined) return 'type' in item ? 'ignored' : 'the event has no event name';
  if (event === 'inbound') return 'ignored';
  const msg = item['msg'];
  if (!isRecord(msg)) return `the ${event} event has no msg object`;
  const recipient = stringField(msg, 'email');
  if (recipient === undefined) return `the ${event} event has no msg.email`;
  const ts = item['ts'];
  const occurredAt = timeOf(ts);
  if (occurredAt === undefined) return `the ${event} event has no valid ts`;
  const messageId = idOf(item['_id']) ?? idOf(msg['_id']);
  const url = event === 'click' ? (stringField(item, 'url') ?? null) : null;
  const classified = classify(event);
  const details = detailsOf(item, msg, classified);
  return {
    provider: 'mandrill',
    ...classified,
    messageId,
    recipient,
    trackingId: readMandrillTrackingId(item),
    ...streamField(readMandrillStream(item)),
    occurredAt,
    // Mandrill events have no id: a SHA-256 of the message id, recipient, event name, event time and
    // clicked URL. The recipient keeps apart events of payloads that lack `_id`.
    eventKey: hashedEventKey([messageId, recipient, event, ts, url]),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * What Mandrill said: `msg.diag` (the SMTP reply) and the code in it, `msg.bounce_description`
 * (`bad_mailbox`, `mailbox_full`, …) as a bounce's classification or a rejection's reason (else
 * `msg.reject_reason`), and `user_agent` of opens and clicks and a click's `url`. Mandrill's spam
 * reports carry no feedback type.
 */
function detailsOf(item: Record<string, unknown>, msg: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const failed = classified.type === 'deferred' || classified.type === 'bounced';
  const reply = stringField(msg, 'diag') ?? (failed ? latestSmtpReply(msg['smtp_events']) : undefined);
  const rejected = classified.type === 'rejected';
  return eventDetails({
    smtpStatus: smtpStatusIn(reply),
    diagnostic: reply,
    bounceClassification: rejected ? undefined : msg['bounce_description'],
    rejectReason: rejected ? (stringField(msg, 'bounce_description') ?? msg['reject_reason']) : undefined,
    userAgent: item['user_agent'],
    url: item['url'],
  });
}

/**
 * A deferral carries its reply in `msg.smtp_events` (each attempt: `ts`, `type`, `diag`, …) rather
 * than `msg.diag`: the `diag` of the latest attempt that has one. (A delivery's `250 OK` is not read:
 * it says nothing a person needs.)
 */
function latestSmtpReply(events: unknown): string | undefined {
  if (!Array.isArray(events)) return undefined;
  let latest: { ts: number; diag: string } | undefined;
  for (const attempt of events) {
    if (!isRecord(attempt) || typeof attempt['diag'] !== 'string' || attempt['diag'] === '') continue;
    const ts = typeof attempt['ts'] === 'number' ? attempt['ts'] : -Infinity;
    if (latest === undefined || ts >= latest.ts) latest = { ts, diag: attempt['diag'] };
  }
  return latest?.diag;
}

function classify(event: string): Classified {
  switch (event) {
    case 'send':
      return { type: 'sent' };
    case 'deferral':
      return { type: 'deferred' };
    case 'hard_bounce':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'soft_bounce':
      return { type: 'bounced', bounceClass: 'soft' };
    case 'delivered':
      return { type: 'delivered' };
    case 'open':
      return { type: 'opened' };
    case 'click':
      return { type: 'clicked' };
    case 'spam':
      return { type: 'complained' };
    case 'unsub':
      return { type: 'unsubscribed' };
    // The reject event does not say why; the bounce or complaint that put the address on Mandrill's
    // rejection blacklist came as its own event and suppressed it then.
    case 'reject':
      return { type: 'rejected', providerSuppression: null };
    default:
      return { type: 'unknown' };
  }
}

/** `ts` is integer unix seconds; a string of digits is accepted too. */
function timeOf(value: unknown): Date | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function idOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value.length <= 1024 ? value : null;
}
