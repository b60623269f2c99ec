import { createHmac } from 'node:crypto';
import { readMailgunLegacyStream, readMailgunLegacyTrackingId, readMailgunStream, readMailgunTrackingId } from '../carriers/mailgun.js';
import { streamField } from './stream-field.js';
import { MailwardenError } from '../errors.js';
import {
  eventDetails,
  isSmtpStatus,
  smtpStatusIn,
  type DeliveryEvent,
  type EventDetails,
  type ProviderSuppression,
} from '../events/delivery-event.js';
import { secretsEqual, unauthorized } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyForm, bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, receiptOf, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';

/**
 * Mailgun retries a failed POST for about 8 hours (10 min, 10 min, 15 min, 30 min, 1 h, 2 h, 4 h) and
 * resends the original signature block, so a tighter default would refuse every retry after an outage.
 */
export const MAILGUN_DEFAULT_TOLERANCE_SECONDS = 9 * 60 * 60;

/**
 * How long a used token is remembered against replays, at least: past any tolerance up to this, so a
 * tolerance loosened later cannot readmit a token whose record has expired.
 */
export const MAILGUN_TOKEN_MEMORY_SECONDS = 7 * 24 * 60 * 60;

/** How a project's Mailgun webhooks are authenticated (docs/providers/mailgun.md#authentication-mailgunwebhookauth). */
export interface MailgunWebhookAuth {
  /** The HTTP webhook signing key (Mailgun console: Sending → Webhooks); it can differ from the API key. */
  signingKey: string;
  /** How far the signed timestamp may be from now, either way. Default 9 hours, Mailgun's retry window. */
  toleranceSeconds?: number;
}

/** A legacy webhook's form fields in order; a user variable precedes the Mailgun field of the same name. */
export type MailgunFormFields = readonly (readonly [name: string, value: string])[];

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/**
 * `failed` reasons for a recipient on Mailgun's own suppression lists (docs/decisions.md#automatic-suppression). Maps, not object
 * literals: a reason such as "constructor" must not find Object.prototype's members.
 */
const failedSuppressions = new Map<string, ProviderSuppression>([
  ['suppress-bounce', 'bounce'],
  ['suppress-complaint', 'complaint'],
  ['suppress-unsubscribe', 'unsubscribe'],
]);

/** Legacy `dropped` codes: 605 previously bounced, 606 unsubscribed, 607 marked as spam. */
const legacyDropSuppressions = new Map<string, ProviderSuppression>([
  ['605', 'bounce'],
  ['606', 'unsubscribe'],
  ['607', 'complaint'],
]);

/** The console's "Test webhook" posts Mailgun's sample event, whose message id is always this one. */
const testPostMessageId = /^<?20130503182626\.18666\.16540@/;

/**
 * Normalizes a decoded Mailgun webhook body (the current JSON format, one event per POST:
 * `{ signature, "event-data" }`). An event that cannot be used is skipped with a warning; the console's
 * test post is a ping. Throws only `invalid_payload`, for a body without an `event-data` object.
 *
 * @example
 * const receipt = parseMailgunWebhook(JSON.parse(body));
 */
export function parseMailgunWebhook(payload: unknown): WebhookReceipt {
  if (!isRecord(payload) || !isRecord(payload['event-data'])) {
    throw new MailwardenError('invalid_payload', 'A Mailgun webhook body is a JSON object with an event-data object.');
  }
  const data = payload['event-data'];
  if (testPostMessageId.test(stringField(messageHeaders(data), 'message-id') ?? '')) return noticeReceipt('ping');
  return receiptOf([parseEventData(data)]);
}

/**
 * Normalizes a legacy Mailgun webhook (form-encoded, before 2018-06-29). User variables are merged in as
 * form fields and can collide with Mailgun's: Mailgun's own value comes first, except for `timestamp`,
 * `token` and `signature`, where it comes last (anymail `webhooks/mailgun.py`). Throws only
 * `invalid_payload`, for an empty form.
 *
 * @example
 * const receipt = parseMailgunLegacyWebhook([...new URLSearchParams(body)]);
 */
export function parseMailgunLegacyWebhook(fields: MailgunFormFields): WebhookReceipt {
  if (fields.length === 0) throw new MailwardenError('invalid_payload', 'The Mailgun webhook form is empty.');
  return receiptOf([parseLegacyFields(fields)]);
}

/**
 * The Mailgun receiver: decodes the JSON body (or a legacy form, urlencoded or multipart), checks the hex
 * HMAC-SHA256 of timestamp + token with the signing key in constant time and the timestamp's freshness,
 * then parses. Mailgun signs no body, so the token is what binds a request: the receipt names it
 * (`oneTimeToken`), and intake claims it in the store with the body's digest before storing anything. The
 * same request again (a retry, also after a 503) is accepted, its events deduplicated; the token with any
 * other body is refused, on every instance sharing the store.
 *
 * @example
 * const mailgun = createMailgunWebhook(env);
 * const receipt = await mailgun.receive(request, { signingKey: process.env.MAILGUN_WEBHOOK_SIGNING_KEY! });
 */
export function createMailgunWebhook(env: WebhookEnvironment): ProviderWebhook<MailgunWebhookAuth> {
  return {
    provider: 'mailgun',
    async receive(request, auth) {
      const body = await decode(request);
      const signature = body.kind === 'json' ? jsonSignature(body.payload) : formSignature(body.fields);
      const tolerance = auth.toleranceSeconds ?? MAILGUN_DEFAULT_TOLERANCE_SECONDS;
      verifyMailgunSignature(signature, auth.signingKey, tolerance, env.now());

      const receipt = body.kind === 'json' ? parseMailgunWebhook(body.payload) : parseMailgunLegacyWebhook(body.fields);
      receipt.oneTimeToken = {
        token: `mailgun:${signature.token}`,
        expiresAt: (Number(signature.timestamp) + Math.max(tolerance, MAILGUN_TOKEN_MEMORY_SECONDS)) * 1000,
      };
      return receipt;
    },
  };
}

/** Mailgun signs its payloads (no basic credentials): a 401 invites none. */
export const mailgunWebhookDefinition: ProviderWebhookDefinition<MailgunWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createMailgunWebhook,
};

interface MailgunSignature {
  timestamp: string;
  token: string;
  signature: string;
}

type DecodedBody = { kind: 'json'; payload: unknown } | { kind: 'form'; fields: MailgunFormFields };

async function decode(request: WebhookRequest): Promise<DecodedBody> {
  const contentType = headerValue(request, 'content-type') ?? '';
  if (/^\s*application\/x-www-form-urlencoded/i.test(contentType)) return { kind: 'form', fields: bodyForm(request.rawBody) };
  if (/^\s*multipart\/form-data/i.test(contentType)) return { kind: 'form', fields: await multipartFields(request.rawBody, contentType) };
  return { kind: 'json', payload: bodyJson(request.rawBody) };
}

/** Legacy bounce and drop notifications may carry the bounce message as attachments: multipart; files are ignored. */
async function multipartFields(rawBody: Uint8Array, contentType: string): Promise<MailgunFormFields> {
  let form: FormData;
  try {
    form = await new Response(rawBody, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new MailwardenError('invalid_payload', 'The Mailgun webhook body is not valid multipart/form-data.');
  }
  const fields: [string, string][] = [];
  for (const [name, value] of form.entries()) if (typeof value === 'string') fields.push([name, value]);
  return fields;
}

function jsonSignature(payload: unknown): MailgunSignature {
  if (!isRecord(payload)) throw new MailwardenError('invalid_payload', 'A Mailgun webhook body is a JSON object.');
  const block = payload['signature'];
  if (!isRecord(block)) throw unauthorized('The Mailgun webhook has no signature block.');
  const timestamp = typeof block['timestamp'] === 'number' ? String(block['timestamp']) : stringField(block, 'timestamp');
  const token = stringField(block, 'token');
  const signature = stringField(block, 'signature');
  if (timestamp === undefined || token === undefined || signature === undefined) {
    throw unauthorized('The Mailgun signature block lacks timestamp, token or signature.');
  }
  return { timestamp, token, signature };
}

/** The *last* value of each: a user variable of the same name is posted before Mailgun's own field. */
function formSignature(fields: MailgunFormFields): MailgunSignature {
  const timestamp = last(fields, 'timestamp');
  const token = last(fields, 'token');
  const signature = last(fields, 'signature');
  if (timestamp === undefined || token === undefined || signature === undefined) {
    throw unauthorized('The Mailgun webhook form lacks timestamp, token or signature.');
  }
  return { timestamp, token, signature };
}

function verifyMailgunSignature(given: MailgunSignature, signingKey: string, toleranceSeconds: number, now: number): void {
  const expected = createHmac('sha256', signingKey)
    .update(given.timestamp + given.token)
    .digest('hex');
  if (!secretsEqual(given.signature, expected)) throw unauthorized('The Mailgun signature does not match.');
  if (!/^\d{1,15}$/.test(given.timestamp) || Math.abs(now / 1000 - Number(given.timestamp)) > toleranceSeconds) {
    throw unauthorized('The Mailgun timestamp is outside the accepted tolerance.');
  }
}

function parseEventData(data: Record<string, unknown>): DeliveryEvent | string {
  const event = stringField(data, 'event');
  if (event === undefined) return 'the event-data has no event';
  const recipient = stringField(data, 'recipient') ?? recipientFromTo(data);
  if (recipient === undefined) return `the ${event} event has no recipient`;
  const timestamp = data['timestamp'];
  const occurredAt = dateOf(timestamp);
  if (occurredAt === undefined) return `the ${event} event has no valid timestamp`;
  const headers = messageHeaders(data);
  const messageId = messageIdOf(stringField(headers, 'message-id'));
  if (messageId !== null && messageId.length > 1024) return `the ${event} event has an over-long message-id`;
  const classified = classify(event, data);
  const details = detailsOf(data, classified);
  return {
    provider: 'mailgun',
    ...classified,
    messageId,
    recipient,
    trackingId: readMailgunTrackingId(data),
    ...streamField(readMailgunStream(data)),
    occurredAt,
    // event-data.id is unique only within a day: with the timestamp (kept on retries) it is unique for good.
    eventKey: hashedEventKey([stringField(data, 'id') ?? null, timestamp, event, recipient]),
    ...(details === undefined ? {} : { details }),
  };
}

/**
 * What Mailgun said: `delivery-status` (its `enhanced-code`, else the code in its `message`, else its
 * `code`; the `message`, the SMTP reply, else its `description`), a failure's `severity` and `reason`,
 * a rejection's `reject.reason` (or the suppress-… reason of a failure), an open's or click's
 * `client-info.user-agent` and a click's `url`. Mailgun's complaints carry no feedback type.
 */
function detailsOf(data: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  // delivery-status can be null (anymail #361); rejected events explain themselves in reject.reason.
  const status = isRecord(data['delivery-status']) ? data['delivery-status'] : {};
  const reject = isRecord(data['reject']) ? data['reject'] : {};
  const client = isRecord(data['client-info']) ? data['client-info'] : {};
  const rejected = classified.type === 'rejected';
  // Empty strings are common here (`"description": ""`): they say nothing.
  const description = stringField(status, 'description') || undefined;
  const reply = stringField(status, 'message') || (rejected ? undefined : description);
  // A suppress-… failure's code is Mailgun's own (605), which eventDetails leaves out as no SMTP status.
  const code = typeof status['code'] === 'number' ? String(status['code']) : undefined;
  const enhanced = stringField(status, 'enhanced-code');
  const severity = stringField(data, 'severity');
  const reason = stringField(data, 'reason');
  return eventDetails({
    smtpStatus: (enhanced !== undefined && isSmtpStatus(enhanced) ? enhanced : undefined) ?? smtpStatusIn(reply) ?? code,
    diagnostic: reply,
    bounceClassification:
      classified.type === 'bounced' || classified.type === 'deferred' ? [severity, reason].filter(Boolean).join('/') : undefined,
    rejectReason: rejected ? stringField(reject, 'reason') || description || reason : undefined,
    userAgent: client['user-agent'],
    url: data['event'] === 'clicked' ? data['url'] : undefined,
  });
}

function classify(event: string, data: Record<string, unknown>): Classified {
  switch (event) {
    case 'accepted':
      return { type: 'sent' };
    case 'delivered':
      return { type: 'delivered' };
    case 'failed': {
      const suppression = failedSuppressions.get(stringField(data, 'reason') ?? '');
      if (suppression !== undefined) return { type: 'rejected', providerSuppression: suppression };
      const severity = stringField(data, 'severity');
      // Mailgun retries temporary failures itself: a later delivery or permanent failure follows.
      if (severity === 'temporary') return { type: 'deferred' };
      return { type: 'bounced', bounceClass: severity === 'permanent' ? 'hard' : 'undetermined' };
    }
    case 'rejected':
      return { type: 'rejected', providerSuppression: null };
    case 'opened':
      return { type: 'opened' };
    case 'clicked':
      return { type: 'clicked' };
    case 'unsubscribed':
      return { type: 'unsubscribed' };
    case 'complained':
      return { type: 'complained' };
    default: // stored, list events, anything newer
      return { type: 'unknown' };
  }
}

/** `rejected` events name no recipient; a single `To` address (bare or `Name <addr>`) stands in. */
function recipientFromTo(data: Record<string, unknown>): string | undefined {
  const to = stringField(messageHeaders(data), 'to');
  if (to === undefined || to.includes(',')) return undefined;
  return /<([^<>]+)>\s*$/.exec(to)?.[1] ?? to.trim();
}

function parseLegacyFields(fields: MailgunFormFields): DeliveryEvent | string {
  const event = first(fields, 'event');
  if (event === undefined) return 'the form has no event field (is an inbound route posting here?)';
  const recipient = first(fields, 'recipient');
  if (recipient === undefined) return `the ${event} event has no recipient`;
  const timestamp = last(fields, 'timestamp');
  const occurredAt = dateOf(timestamp);
  if (occurredAt === undefined) return `the ${event} event has no valid timestamp`;
  const messageId = messageIdOf(first(fields, 'Message-Id') ?? first(fields, 'message-id'));
  if (messageId !== null && messageId.length > 1024) return `the ${event} event has an over-long Message-Id`;
  const url = event === 'clicked' ? (first(fields, 'url') ?? null) : null;
  const classified = classifyLegacy(event, first(fields, 'code'));
  // The legacy forms: `code` and `error` (the SMTP reply) of a bounce or drop, `notification`,
  // `description` and `reason`, `user-agent` of opens and clicks.
  // A drop's `code` is Mailgun's own (605), which eventDetails leaves out as no SMTP status.
  const rejected = classified.type === 'rejected';
  const reply = first(fields, 'error') ?? first(fields, 'notification') ?? (rejected ? undefined : first(fields, 'description'));
  const details = eventDetails({
    smtpStatus: smtpStatusIn(reply) ?? first(fields, 'code'),
    diagnostic: reply,
    rejectReason: rejected ? (first(fields, 'description') ?? first(fields, 'reason')) : undefined,
    userAgent: first(fields, 'user-agent'),
    url: url ?? undefined,
  });
  return {
    provider: 'mailgun',
    ...classified,
    messageId,
    recipient,
    trackingId: readMailgunLegacyTrackingId(fields),
    ...streamField(readMailgunLegacyStream(fields)),
    occurredAt,
    // Legacy events have no id: SHA-256 of ["legacy", event, message id, recipient, timestamp, url of a click].
    eventKey: hashedEventKey(['legacy', event, messageId, recipient, timestamp, url]),
    ...(details === undefined ? {} : { details }),
  };
}

/** The legacy webhooks: a `bounced` one was sent for permanent failures only (hard bounces). */
function classifyLegacy(event: string, code: string | undefined): Classified {
  switch (event) {
    case 'delivered':
      return { type: 'delivered' };
    case 'dropped':
      return { type: 'rejected', providerSuppression: legacyDropSuppressions.get(code?.trim() ?? '') ?? null };
    case 'bounced':
      return { type: 'bounced', bounceClass: 'hard' };
    case 'complained':
      return { type: 'complained' };
    case 'unsubscribed':
      return { type: 'unsubscribed' };
    case 'opened':
      return { type: 'opened' };
    case 'clicked':
      return { type: 'clicked' };
    default:
      return { type: 'unknown' };
  }
}

/** `message.headers` of an event (opened and clicked events carry only `message-id` there). */
function messageHeaders(data: Record<string, unknown>): Record<string, unknown> {
  const message = data['message'];
  return isRecord(message) && isRecord(message['headers']) ? message['headers'] : {};
}

/** Unix seconds as a number (the JSON format, with a fraction) or a string of digits (legacy forms). */
function dateOf(value: unknown): Date | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The message id without its angle brackets (docs/providers/mailgun.md#message-id-and-dedup-key). */
function messageIdOf(value: string | undefined): string | null {
  const id = value?.trim().replace(/^<(.*)>$/s, '$1');
  return id === undefined || id === '' ? null : id;
}

function first(fields: MailgunFormFields, name: string): string | undefined {
  const value = fields.find(([field]) => field === name)?.[1];
  return value === '' ? undefined : value;
}

function last(fields: MailgunFormFields, name: string): string | undefined {
  for (let i = fields.length - 1; i >= 0; i--) {
    const [field, value] = fields[i]!;
    if (field === name) return value === '' ? undefined : value;
  }
  return undefined;
}
