import { createHmac, timingSafeEqual } from 'node:crypto';
import { readResendStream, readResendTrackingId } from '../carriers/resend.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { isRecord, stringField } from '../json/record.js';
import { unauthorized } from './auth.js';
import { bodyJson } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';
import { streamField } from './stream-field.js';

/** How far `svix-timestamp` may be from now, either way: the Svix and Standard Webhooks libraries' 5 minutes. */
export const RESEND_TOLERANCE_SECONDS = 300;

export const RESEND_ID_HEADER = 'svix-id';
export const RESEND_TIMESTAMP_HEADER = 'svix-timestamp';
export const RESEND_SIGNATURE_HEADER = 'svix-signature';

/** How a project's Resend webhook is authenticated (docs/providers/resend.md#authentication-resendwebhookauth). */
export interface ResendWebhookAuth {
  /**
   * The endpoint's signing secret as Resend shows it (`whsec_…`), or a list of them while rotating: a
   * request signed with any one is admitted.
   */
  signingSecret: string | readonly string[];
}

export interface ParseResendWebhookOptions {
  /** The request's `svix-id` (the same on every retry), which keys the events; absent: a hash of the event's fields. */
  svixId?: string | null | undefined;
}

/** Resend's event types that are not about delivery of a sent message: answered 200, recorded as nothing. */
const ignoredTypes = new Set(['email.scheduled', 'email.received']);
const ignoredFamilies = ['contact.', 'domain.', 'suppression.'];

/**
 * Normalizes one decoded Resend webhook body (`{ type, created_at, data }`): one event per address of
 * `data.to` (docs/providers/resend.md#recipients). Event types that are not about a sent message
 * (`email.scheduled`, `email.received`, `contact.*`, `domain.*`, `suppression.*`) are a ping; an unknown
 * type is skipped with a warning. Throws `invalid_payload` only for a body that is not a JSON object.
 *
 * @example
 * const receipt = parseResendWebhook(JSON.parse(body), { svixId: request.headers['svix-id'] });
 */
export function parseResendWebhook(payload: unknown, options: ParseResendWebhookOptions = {}): WebhookReceipt {
  if (!isRecord(payload)) throw new MailwardenError('invalid_payload', 'A Resend webhook body is a JSON object.');
  return receiptOf([outcomesOf(payload, options.svixId || null)]);
}

/**
 * The Resend receiver: verifies the Svix signature (docs/providers/resend.md#authentication-resendwebhookauth)
 * over `svix-id`, `svix-timestamp` and the raw body bytes, refuses a timestamp more than 5 minutes from
 * now, then parses the body. Checked by hand rather than with `standardwebhooks`, which reads the real
 * clock and decodes the body to a string before signing it.
 *
 * @example
 * const resend = createResendWebhook(env);
 * const receipt = await resend.receive(request, { signingSecret: process.env.RESEND_WEBHOOK_SECRET! });
 */
export function createResendWebhook(env: WebhookEnvironment): ProviderWebhook<ResendWebhookAuth> {
  return {
    provider: 'resend',
    async receive(request, auth) {
      const svixId = verifyResendSignature(request, auth, env.now());
      return parseResendWebhook(bodyJson(request.rawBody), { svixId });
    },
  };
}

/** Resend signs its payloads; a 401 invites no basic credentials. */
export const resendWebhookDefinition: ProviderWebhookDefinition<ResendWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createResendWebhook,
};

/** A secret as its HMAC key: the base64 after `whsec_`; `undefined` for one that does not decode. */
export function resendSigningKey(secret: string): Buffer | undefined {
  const text = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const key = Buffer.from(text, 'base64');
  return key.length > 0 ? key : undefined;
}

/**
 * Svix's `v1` signature of a request, as Resend sends it: HMAC-SHA256 keyed with the secret's key, over
 * `id.timestamp.body` (the raw body). The receiver checks it and the testing kit signs with it; a test
 * holds it to the `standardwebhooks` package.
 */
export function resendSignature(key: Buffer, id: string, timestamp: string, rawBody: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(rawBody).digest();
}

/** The secrets configured, as HMAC keys. A secret that does not decode matches nothing. */
function signingKeys(auth: ResendWebhookAuth): Buffer[] {
  const secrets: readonly unknown[] =
    typeof auth?.signingSecret === 'string' ? [auth.signingSecret] : Array.isArray(auth?.signingSecret) ? auth.signingSecret : [];
  return secrets.flatMap((secret) => {
    const key = typeof secret === 'string' ? resendSigningKey(secret) : undefined;
    return key === undefined ? [] : [key];
  });
}

/** Throws `webhook_unauthorized` unless one configured secret signed the request; answers its `svix-id`. */
function verifyResendSignature(request: WebhookRequest, auth: ResendWebhookAuth, now: number): string {
  const keys = signingKeys(auth);
  if (keys.length === 0) throw unauthorized('No Resend signing secret (whsec_…) is configured.');
  const id = headerValue(request, RESEND_ID_HEADER);
  const timestamp = headerValue(request, RESEND_TIMESTAMP_HEADER);
  const signatures = headerValue(request, RESEND_SIGNATURE_HEADER);
  if (id === undefined || id === '' || timestamp === undefined || signatures === undefined) {
    throw unauthorized('The Resend svix-id, svix-timestamp or svix-signature header is missing.');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw unauthorized('The Resend svix-timestamp header is not unix seconds.');
  if (Math.abs(now / 1000 - Number(timestamp)) > RESEND_TOLERANCE_SECONDS) {
    throw unauthorized('The Resend svix-timestamp is more than 5 minutes from now.');
  }
  const given = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  let ok = false;
  for (const key of keys) {
    const expected = resendSignature(key, id, timestamp, request.rawBody);
    for (const signature of given) ok = (signature.length === expected.length && timingSafeEqual(signature, expected)) || ok;
  }
  if (!ok) throw unauthorized('The Resend signature does not match the body.');
  return id;
}

function outcomesOf(payload: Record<string, unknown>, svixId: string | null): ItemOutcome | ItemOutcome[] {
  const type = stringField(payload, 'type');
  if (type === undefined) return 'The Resend event has no type.';
  if (ignoredTypes.has(type) || ignoredFamilies.some((family) => type.startsWith(family))) return 'ignored';
  const data = payload['data'];
  if (!isRecord(data)) return `The ${type} event has no data object.`;
  const classified = classify(type, data);
  if (classified === undefined) return `Resend event type "${type}" is not a delivery event mailwarden understands.`;
  const at = validTime(payload['created_at']) ?? validTime(data['created_at']);
  if (at === undefined) return `The ${type} event has no valid created_at.`;
  const recipients = Array.isArray(data['to']) ? data['to'] : typeof data['to'] === 'string' ? [data['to']] : [];
  if (recipients.length === 0) return `The ${type} event has no data.to.`;
  const messageId = stringField(data, 'email_id') ?? null;
  if (messageId !== null && messageId.length > 1024) return `The ${type} event has an over-long email_id.`;
  const trackingId = readResendTrackingId(data);
  const stream = readResendStream(data);
  const details = detailsOf(type, data);
  return recipients.map((recipient, index): ItemOutcome => {
    if (typeof recipient !== 'string' || recipient === '') return `data.to[${index}] of the ${type} event is not an address.`;
    const event: DeliveryEvent = {
      provider: 'resend',
      type: classified.type,
      bounceClass: classified.bounceClass ?? null,
      providerSuppression: classified.providerSuppression ?? null,
      messageId,
      recipient,
      trackingId,
      ...streamField(stream),
      occurredAt: at,
      // svix-id is the same on every retry of one webhook message (docs/providers/resend.md#message-id-and-dedup-key).
      eventKey:
        svixId !== null
          ? `${svixId}:${recipient}`
          : hashedEventKey([type, messageId, payload['created_at'] ?? null, recipient, clickLink(type, data)]),
    };
    if (details !== undefined) event.details = details;
    return event;
  });
}

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/** Resend's email event types (docs/providers/resend.md#event-mapping); `undefined` for one it does not document. */
function classify(type: string, data: Record<string, unknown>): Classified | undefined {
  switch (type) {
    case 'email.sent':
      return { type: 'sent' };
    case 'email.delivered':
      return { type: 'delivered' };
    case 'email.delivery_delayed':
      return { type: 'deferred' };
    case 'email.bounced': {
      // Classified by bounce.type, not by the event name: Resend also posts non-permanent bounces here.
      const bounceType = isRecord(data['bounce']) ? stringField(data['bounce'], 'type') : undefined;
      if (bounceType === 'Permanent') return { type: 'bounced', bounceClass: 'hard' };
      if (bounceType === 'Transient' || bounceType === 'Temporary') return { type: 'bounced', bounceClass: 'soft' };
      return { type: 'bounced', bounceClass: 'undetermined' };
    }
    case 'email.complained':
      return { type: 'complained' };
    case 'email.opened':
      return { type: 'opened' };
    case 'email.clicked':
      return { type: 'clicked' };
    case 'email.failed':
      return { type: 'rejected' };
    case 'email.suppressed':
      // Resend did not send: the address is on its suppression list, as SES's OnAccountSuppressionList (docs/decisions.md).
      return { type: 'rejected', providerSuppression: 'bounce' };
    default:
      return undefined;
  }
}

/** What Resend said: a bounce's diagnostic codes and SES-style type/subtype, a failure's or suppression's reason, a click's link. */
function detailsOf(type: string, data: Record<string, unknown>): EventDetails | undefined {
  const part = (name: string): Record<string, unknown> => (isRecord(data[name]) ? data[name] : {});
  switch (type) {
    case 'email.bounced': {
      const bounce = part('bounce');
      const codes = Array.isArray(bounce['diagnosticCode']) ? bounce['diagnosticCode'] : [bounce['diagnosticCode']];
      const diagnostic = codes.find((code): code is string => typeof code === 'string' && code !== '') ?? bounce['message'];
      const bounceType = stringField(bounce, 'type');
      const subType = stringField(bounce, 'subType');
      return eventDetails({
        smtpStatus: smtpStatusIn(diagnostic),
        diagnostic,
        bounceClassification: bounceType === undefined ? undefined : subType === undefined ? bounceType : `${bounceType}/${subType}`,
      });
    }
    case 'email.failed':
      return eventDetails({ rejectReason: part('failed')['reason'] });
    case 'email.suppressed': {
      const suppressed = part('suppressed');
      return eventDetails({ rejectReason: stringField(suppressed, 'type') ?? suppressed['message'] ?? suppressed['reason'] });
    }
    case 'email.opened':
      return eventDetails({ userAgent: part('open')['userAgent'] });
    case 'email.clicked':
      return eventDetails({ url: part('click')['link'], userAgent: part('click')['userAgent'] });
    default:
      return undefined;
  }
}

function clickLink(type: string, data: Record<string, unknown>): unknown {
  return type === 'email.clicked' && isRecord(data['click']) ? (stringField(data['click'], 'link') ?? null) : null;
}

function validTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
