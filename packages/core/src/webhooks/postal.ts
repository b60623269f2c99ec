import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { readPostalTrackingId } from '../carriers/postal.js';
import { MailwardenError } from '../errors.js';
import { eventDetails, smtpStatusIn, type DeliveryEvent, type EventDetails } from '../events/delivery-event.js';
import { unauthorized } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyText } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';

export const POSTAL_SIGNATURE_256_HEADER = 'x-postal-signature-256';
export const POSTAL_SIGNATURE_HEADER = 'x-postal-signature';

/** How a project's Postal webhooks are authenticated (docs/providers/postal.md#authentication-postalwebhookauth). */
export interface PostalWebhookAuth {
  /**
   * The Postal server's signing key (RSA): a PEM (`BEGIN PUBLIC KEY` or `BEGIN RSA PUBLIC KEY`), or the
   * base64 key Postal shows (the `p=` of `postal default-dkim-record`, or that whole record).
   */
  publicKey: string;
}

type Classified = Pick<DeliveryEvent, 'type' | 'bounceClass' | 'providerSuppression'>;

/** Postal's events that are not about a message, and so record nothing (docs/providers/postal.md#events). */
const NOT_MESSAGE_EVENTS = new Set(['DomainDNSError', 'SendLimitApproaching', 'SendLimitExceeded']);

/**
 * Normalizes one Postal webhook POST, given as its JSON text: `{ event, timestamp, uuid, payload }`, one
 * event per request. Events about incoming mail and those that are not about a message (`DomainDNSError`,
 * `SendLimit*`) record nothing; an unknown event or a payload without a recipient is skipped with a
 * warning. Throws only `invalid_payload`, for text that is not a JSON object.
 *
 * @example
 * const receipt = parsePostalWebhook(body);
 */
export function parsePostalWebhook(text: string): WebhookReceipt {
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    throw new MailwardenError('invalid_payload', 'The Postal webhook body is not JSON.');
  }
  if (!isRecord(envelope)) throw new MailwardenError('invalid_payload', 'A Postal webhook body is one JSON object.');
  return receiptOf([parseEnvelope(envelope)]);
}

/**
 * The Postal receiver: verifies the RSA signature over the raw body, `X-Postal-Signature-256` (SHA-256)
 * when present, else the legacy `X-Postal-Signature` (SHA-1) that Postal before 3.2 sends alone, against
 * the configured public key; then parses the body. Postal signs no timestamp: a replay is the same `uuid`,
 * a duplicate.
 *
 * @example
 * const postal = createPostalWebhook(env);
 * const receipt = await postal.receive(request, { publicKey: process.env.POSTAL_WEBHOOK_KEY! });
 */
export function createPostalWebhook(_env: WebhookEnvironment): ProviderWebhook<PostalWebhookAuth> {
  // Parsing a key costs more than verifying with it; projects have one key each, so a small cache suffices.
  const keys = new LRUCache<string, KeyObject>({ max: 100 });
  const keyOf = (text: string): KeyObject => {
    let key = keys.get(text);
    if (key === undefined) {
      key = parsePostalPublicKey(text);
      keys.set(text, key);
    }
    return key;
  };
  return {
    provider: 'postal',
    async receive(request, auth) {
      if (typeof auth?.publicKey !== 'string' || auth.publicKey.trim() === '') throw unauthorized('No Postal public key is configured.');
      verifyPostalSignature(request, keyOf(auth.publicKey));
      return parsePostalWebhook(bodyText(request.rawBody));
    },
  };
}

/** Postal signs its payloads (no basic credentials): a 401 invites none. */
export const postalWebhookDefinition: ProviderWebhookDefinition<PostalWebhookAuth> = {
  basicChallenge: false,
  createReceiver: createPostalWebhook,
};

function verifyPostalSignature(request: WebhookRequest, key: KeyObject): void {
  const sha256 = headerValue(request, POSTAL_SIGNATURE_256_HEADER);
  const [algorithm, signature] = sha256 !== undefined ? ['sha256', sha256] : ['sha1', headerValue(request, POSTAL_SIGNATURE_HEADER)];
  if (signature === undefined || signature === '')
    throw unauthorized('The request has no X-Postal-Signature-256 or X-Postal-Signature header.');
  let valid = false;
  try {
    valid = verify(algorithm, request.rawBody, key, Buffer.from(signature, 'base64'));
  } catch {
    // A malformed signature is a failed verification, not a server error.
  }
  if (!valid)
    throw unauthorized(`The ${algorithm === 'sha256' ? 'X-Postal-Signature-256' : 'X-Postal-Signature'} does not match the body.`);
}

/**
 * The configured key: a PEM, or base64 DER (SubjectPublicKeyInfo, as Postal's DKIM-style record and
 * anymail's `POSTAL_WEBHOOK_KEY` give it, or PKCS#1), alone or as the `p=` of a whole record. RSA only.
 */
export function parsePostalPublicKey(text: string): KeyObject {
  let key: KeyObject | undefined;
  if (text.includes('-----BEGIN')) {
    try {
      key = createPublicKey(text);
    } catch {
      // Reported below.
    }
  } else {
    const base64 = (/(?:^|;)\s*p=([^;]*)/.exec(text)?.[1] ?? text).replace(/\s+/g, '');
    const der = Buffer.from(base64, 'base64');
    for (const type of ['spki', 'pkcs1'] as const) {
      try {
        key = createPublicKey({ key: der, format: 'der', type });
        break;
      } catch {
        // Try the next encoding.
      }
    }
  }
  if (key === undefined) throw unauthorized('The configured Postal public key is not a valid public key.');
  if (key.asymmetricKeyType !== 'rsa') throw unauthorized('The configured Postal public key is not an RSA key.');
  return key;
}

function parseEnvelope(envelope: Record<string, unknown>): ItemOutcome {
  const event = stringField(envelope, 'event');
  if (event === undefined) return 'the request has no event';
  if (NOT_MESSAGE_EVENTS.has(event)) return 'ignored';
  const payload = envelope['payload'];
  if (!isRecord(payload)) return `the ${event} event has no payload object`;
  const message = event === 'MessageBounced' ? payload['original_message'] : payload['message'];
  if (!isRecord(message)) return `the ${event} event has no ${event === 'MessageBounced' ? 'original_message' : 'message'} object`;
  // Postal reports incoming mail with the same events: not mail this project sent.
  if (message['direction'] === 'incoming') return 'ignored';
  const classified = classify(event, payload);
  if (classified === undefined) return `unknown Postal event ${event}`;
  const recipient = stringField(message, 'to');
  if (recipient === undefined) return `the ${event} event's message has no to`;
  const envelopeTime = timeOf(envelope['timestamp']);
  const occurredAt = timeOf(payload['timestamp']) ?? envelopeTime;
  if (occurredAt === undefined) return `the ${event} event has no valid timestamp`;
  const messageId = idOf(message['message_id']);
  const uuid = stringField(envelope, 'uuid');
  const details = detailsOf(payload, classified);
  return {
    provider: 'postal',
    ...classified,
    messageId,
    recipient,
    trackingId: readPostalTrackingId(payload),
    occurredAt,
    // The envelope `uuid` is the same on every delivery attempt of one webhook request. Without one, a
    // SHA-256 of the event, the per-recipient message id, the status and the times, which a retry repeats.
    eventKey:
      uuid !== undefined && uuid.length <= 200
        ? uuid
        : hashedEventKey([
            event,
            message['id'] ?? null,
            messageId,
            recipient,
            payload['status'] ?? null,
            envelope['timestamp'] ?? null,
            payload['url'] ?? null,
          ]),
    ...(details === undefined ? {} : { details }),
  };
}

function classify(event: string, payload: Record<string, unknown>): Classified | undefined {
  switch (event) {
    case 'MessageSent':
      return { type: 'delivered' };
    case 'MessageDelayed':
      return { type: 'deferred' };
    case 'MessageDeliveryFailed':
      return classifyHardFail(payload);
    case 'MessageHeld':
      return classifyHeld(payload);
    case 'MessageBounced':
      // A bounce message (DSN) Postal received after delivery; Postal does not classify it.
      return { type: 'bounced', bounceClass: 'undetermined' };
    case 'MessageLinkClicked':
      return { type: 'clicked' };
    case 'MessageLoaded':
      return { type: 'opened' };
    default:
      return undefined;
  }
}

/**
 * A `HardFail` is a hard bounce only when the receiving server refused the address (a 5xx reply, "Permanent
 * SMTP delivery error"). Postal also fails a message for good after its maximum number of delivery
 * attempts (each a temporary failure: a soft bounce, which suppresses nothing), and for reasons of its own
 * (outbound spam, the message or its domain removed): those say nothing of the address, so `rejected`
 * (docs/providers/postal.md#events).
 */
function classifyHardFail(payload: Record<string, unknown>): Classified {
  const details = stringField(payload, 'details') ?? '';
  const output = stringField(payload, 'output') ?? '';
  if (/maximum number of delivery attempts/i.test(details)) return { type: 'bounced', bounceClass: 'soft' };
  if (/permanent smtp delivery error/i.test(details) || /^\s*5[0-9]{2}(?![0-9])/.test(output)) {
    return { type: 'bounced', bounceClass: 'hard' };
  }
  return { type: 'rejected', providerSuppression: null };
}

/**
 * A held message is not sent until someone releases it. Held because the recipient is on Postal's
 * suppression list, it is a reject; Postal's list entries expire and came from failures already reported,
 * so it suppresses nothing. Held for the server's send limit or a credential hold it is `unknown`.
 */
function classifyHeld(payload: Record<string, unknown>): Classified {
  const details = stringField(payload, 'details') ?? '';
  return /suppression list/i.test(details) ? { type: 'rejected', providerSuppression: null } : { type: 'unknown' };
}

/**
 * What Postal said: `output` (the SMTP reply) and the code in it, `details` (Postal's own explanation) as
 * the diagnostic when there is no reply and as a reject's reason, the status as a bounce's classification,
 * a click's `url` and the reader's `user_agent`.
 */
function detailsOf(payload: Record<string, unknown>, classified: Classified): EventDetails | undefined {
  const output = stringField(payload, 'output');
  const details = stringField(payload, 'details');
  const failed = classified.type === 'bounced' || classified.type === 'deferred';
  return eventDetails({
    smtpStatus: smtpStatusIn(output),
    diagnostic: output ?? details,
    bounceClassification: failed ? payload['status'] : undefined,
    rejectReason: classified.type === 'rejected' || classified.type === 'unknown' ? details : undefined,
    userAgent: payload['user_agent'],
    url: payload['url'],
  });
}

/** Postal times are float unix seconds. */
function timeOf(value: unknown): Date | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const date = new Date(Math.round(value * 1000));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function idOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value.length <= 1024 ? value : null;
}
