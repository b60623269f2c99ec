import { createPrivateKey, generateKeyPairSync, hash, randomInt, randomUUID, sign, type KeyObject } from 'node:crypto';
import { attachPostalTrackingId } from '../carriers/postal.js';
import {
  encoder,
  invalid,
  payloadText,
  reportEvents,
  requestTime,
  type ReportedEvent,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Postal's webhooks as it posts them: one event per POST, `{ event, timestamp, uuid, payload }` written by
 * Rails' `to_json` (which escapes `<`, `>`, `&`, U+2028 and U+2029), signed with the Postal server's RSA
 * key over the raw body: `X-Postal-Signature-256` (SHA-256) and the legacy `X-Postal-Signature` (SHA-1).
 */

/** JSON as Rails' `to_json` writes it: HTML-significant characters and line separators as `\u` escapes. */
export function railsJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The signature headers Postal sends for a body: base64 RSA PKCS#1 v1.5 over the raw bytes, SHA-256 and SHA-1. */
export function signPostalBody(
  privateKey: string | KeyObject,
  rawBody: Uint8Array,
  options: { legacy?: boolean } = {},
): Record<string, string> {
  const key = signingKeyOf(privateKey);
  const sha1 = sign('sha1', rawBody, key).toString('base64');
  if (options.legacy === true) return { 'x-postal-signature': sha1 };
  return {
    'x-postal-signature': sha1,
    'x-postal-signature-256': sign('sha256', rawBody, key).toString('base64'),
    'x-postal-signature-kid': keyIdOf(key),
  };
}

/** Parsing a PEM costs more than signing with it: the few keys a test run uses are kept parsed. */
const parsedKeys = new Map<string, KeyObject>();
const keyIds = new WeakMap<KeyObject, string>();

function signingKeyOf(privateKey: string | KeyObject): KeyObject {
  if (typeof privateKey !== 'string') return privateKey;
  let key = parsedKeys.get(privateKey);
  if (key === undefined) {
    key = createPrivateKey(privateKey);
    if (parsedKeys.size >= 16) parsedKeys.clear();
    parsedKeys.set(privateKey, key);
  }
  return key;
}

/** The key's JWK thumbprint (RFC 7638), as Postal names its key in `X-Postal-Signature-KID`. */
function keyIdOf(key: KeyObject): string {
  let kid = keyIds.get(key);
  if (kid === undefined) {
    const { e, n } = key.export({ format: 'jwk' });
    kid = hash('sha256', JSON.stringify({ e, kty: 'RSA', n }), 'base64url');
    keyIds.set(key, kid);
  }
  return kid;
}

/**
 * A new RSA key pair, as a Postal server has for signing: `publicKey` as Postal shows it (base64 DER
 * SubjectPublicKeyInfo, for `postal.publicKey`), `privateKey` as PEM (which only Postal holds in real life).
 *
 * @example
 * const { publicKey, privateKey } = createPostalKeyPair();
 */
export function createPostalKeyPair(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

export interface PostalWebhookOptions {
  /** The private half of the key pair whose public key the project is configured with (`createPostalKeyPair`). */
  privateKey: string | KeyObject;
  /** When Postal posts; the default time of the event. Default now. */
  signedAt?: Date | undefined;
  /** The envelope `uuid`; default a new one. Postal keeps it on every retry of one request. */
  uuid?: string | undefined;
  /** Sign as Postal before 3.2: `X-Postal-Signature` (SHA-1) only. */
  legacy?: boolean | undefined;
}

/**
 * The signed POST Postal makes for one event (Postal posts each event alone), the tracking ID as the
 * message's `tag` as `attachPostalTrackingId` sets it. `payload` signs a body given as is (a string
 * verbatim, anything else as Rails writes it). Postal has no webhook for a message merely sent, no
 * complaint and no unsubscribe event, and cannot carry a stream.
 *
 * @example
 * const keys = createPostalKeyPair(); // configure the project with { postal: { publicKey: keys.publicKey } }
 * const request = postalWebhook({
 *   privateKey: keys.privateKey,
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function postalWebhook(options: TestPayload & PostalWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) {
    const text = typeof options.payload === 'string' ? payloadText(options.payload) : railsJson(options.payload);
    return postalRequest(encoder.encode(text), [], options);
  }
  const events = reportEvents('postal', options.events, { now, seconds: false, messageId: () => `${randomUUID()}@rp.postal.example.com` });
  if (events.length !== 1) throw invalid(`Postal posts one event per request, not ${events.length}: build one request per event.`);
  const event = events[0]!;
  if (event.stream !== undefined) throw invalid("Postal's one tag holds the tracking ID: a Postal message cannot carry a stream.");
  const envelope = {
    event: eventName(event),
    // Queued as the event happened: opens and clicks have no time of their own.
    timestamp: event.occurredAt.getTime() / 1000,
    uuid: options.uuid ?? randomUUID(),
    payload: payloadOf(event),
  };
  return postalRequest(encoder.encode(railsJson(envelope)), [event], options);
}

function postalRequest(rawBody: Uint8Array, events: ReportedEvent[], options: PostalWebhookOptions): TestWebhook {
  return {
    provider: 'postal',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Postal/3.3.4',
      ...signPostalBody(options.privateKey, rawBody, { legacy: options.legacy === true }),
    },
    rawBody,
    events,
  };
}

function eventName(event: ReportedEvent): string {
  switch (event.type) {
    case 'sent':
      throw invalid('Postal has no webhook for a message merely sent: MessageSent is its delivery.');
    case 'complained':
      throw invalid('Postal has no complaint event.');
    case 'unsubscribed':
      throw invalid('Postal has no unsubscribe event.');
    case 'delivered':
      return 'MessageSent';
    case 'deferred':
      return 'MessageDelayed';
    case 'bounced':
      return 'MessageDeliveryFailed';
    case 'rejected':
      return 'MessageHeld';
    case 'opened':
      return 'MessageLoaded';
    case 'clicked':
      return 'MessageLinkClicked';
  }
}

/** Postal's `message` object (`Message#webhook_hash`). */
function messageOf(event: ReportedEvent): Record<string, unknown> {
  const tag = event.trackingId === null ? null : attachPostalTrackingId({}, event.trackingId).tag;
  return {
    id: randomInt(1, 2 ** 31),
    token: randomUUID().slice(0, 12),
    direction: 'outgoing',
    message_id: event.messageId,
    to: event.recipient,
    from: 'news@example.com',
    subject: 'Hello <friend> & co',
    timestamp: event.occurredAt.getTime() / 1000 - 1,
    spam_status: 'NotChecked',
    tag,
  };
}

function payloadOf(event: ReportedEvent): Record<string, unknown> {
  const message = messageOf(event);
  const at = event.occurredAt.getTime() / 1000;
  const status = (name: string, details: string, output: string) => ({
    message,
    status: name,
    details,
    output,
    sent_with_ssl: true,
    timestamp: at,
    time: 0.41,
  });
  switch (event.type) {
    case 'delivered':
      return status('Sent', 'Message for x accepted by mx.example.org (192.0.2.25)', '250 2.0.0 OK queued as 4b9e');
    case 'deferred':
      return status('SoftFail', 'Temporary SMTP delivery error when sending to mx.example.org', '452 4.2.2 Mailbox full');
    case 'bounced':
      return event.bounceClass === 'soft'
        ? status('HardFail', 'Maximum number of delivery attempts (18) has been reached. Last error: mailbox full', '')
        : status('HardFail', 'Permanent SMTP delivery error when sending to mx.example.org', '550 5.1.1 user unknown');
    case 'rejected':
      return status('Held', `Recipient (${event.recipient}) is on the suppression list (reason: too many hard fails)`, '');
    case 'opened':
      return { ip_address: '192.0.2.44', user_agent: 'Mozilla/5.0', message };
    case 'clicked':
      return {
        url: 'https://example.com/spring?a=1&b=<2>',
        token: randomUUID().slice(0, 8),
        ip_address: '192.0.2.44',
        user_agent: 'Mozilla/5.0',
        message,
      };
    default:
      throw invalid(`Postal has no event for ${event.type}.`);
  }
}
