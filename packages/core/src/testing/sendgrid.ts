import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { attachSendGridTrackingId, type SendGridMailRequest } from '../carriers/sendgrid.js';
import {
  encoder,
  invalid,
  payloadText,
  reportEvents,
  streamMetadata,
  requestTime,
  unixSeconds,
  type ReportedEvent,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * SendGrid's Event Webhook as it posts: a JSON array of flat events (custom args flattened in) with
 * `\r\n` between events, signed with ECDSA P-256 over the timestamp header followed by the raw body.
 */

/** The `X-Twilio-Email-Event-Webhook-Signature` SendGrid computes: base64 DER ECDSA over timestamp + body. */
export function signSendGridBody(privateKey: string | KeyObject, timestamp: string, rawBody: Uint8Array): string {
  return sign('sha256', Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]), privateKey).toString('base64');
}

/** A batch as SendGrid writes it: one event per line, separated by CRLF (so re-serialized JSON never verifies). */
export function sendGridBody(events: readonly object[]): Uint8Array {
  return encoder.encode(`[${events.map((event) => JSON.stringify(event)).join(',\r\n')}]\r\n`);
}

export interface SendGridWebhookOptions {
  /** The private half of the key pair whose public key the project is configured with (`createSendGridKeyPair`). */
  privateKey: string | KeyObject;
  /** The signed timestamp; default now. The receiver refuses one more than `toleranceSeconds` (600) away. */
  signedAt?: Date | undefined;
  /** SendGrid's OAuth option: sent as `Authorization: Bearer <token>`. */
  oauthToken?: string | undefined;
  /** The project's `unsubscribeGroups`: what an unsubscribe of a mapped group reports as its stream. */
  unsubscribeGroups?: Readonly<Record<string, string>> | undefined;
}

/**
 * The signed Event Webhook POST reporting `events` (any number, of any messages), with each message's
 * tracking ID attached as `attachSendGridTrackingId` attaches it. `payload` signs a batch given as is.
 *
 * @example
 * const keys = createSendGridKeyPair(); // configure the project with { sendgrid: { publicKey: keys.publicKey } }
 * const request = sendGridWebhook({
 *   privateKey: keys.privateKey,
 *   events: [{ type: 'complained', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function sendGridWebhook(options: TestPayload & SendGridWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return signedSendGridRequest(encoder.encode(payloadText(options.payload)), [], options, now);
  const events = reportEvents('sendgrid', options.events, { now, seconds: true, messageId: () => randomBytes(16).toString('base64url') });
  for (const event of events) {
    // SendGrid's sg_message_id is the send API's X-Message-Id followed by `.filter…`: the id has no dot.
    if (event.messageId.includes('.')) throw invalid(`A SendGrid message id (X-Message-Id) has no dot: ${event.messageId}.`);
  }
  const groups = options.events.map((event) => event.unsubscribeGroup);
  const items = events.map((event, index) => sendGridEvent(event, groups[index]));
  // An unsubscribe of a mapped group is recorded in the group's stream, whatever the message carried.
  const reported = events.map((event, index) => {
    const group = groups[index];
    const stream =
      group === undefined || options.unsubscribeGroups === undefined ? undefined : mappedStream(options.unsubscribeGroups, group);
    return stream === undefined ? event : { ...event, stream };
  });
  return signedSendGridRequest(sendGridBody(items), reported, options, now);
}

/**
 * A new ECDSA P-256 key pair, as SendGrid makes for a Signed Event Webhook: `publicKey` as SendGrid shows it
 * (base64 DER, for `sendgrid.publicKey`), `privateKey` as PEM (which only SendGrid holds in real life).
 *
 * @example
 * const { publicKey, privateKey } = createSendGridKeyPair();
 */
export function createSendGridKeyPair(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

function signedSendGridRequest(rawBody: Uint8Array, events: ReportedEvent[], options: SendGridWebhookOptions, now: Date): TestWebhook {
  const timestamp = String(unixSeconds(now));
  return {
    provider: 'sendgrid',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'SendGrid Event API',
      'x-twilio-email-event-webhook-signature': signSendGridBody(options.privateKey, timestamp, rawBody),
      'x-twilio-email-event-webhook-timestamp': timestamp,
      ...(options.oauthToken === undefined ? {} : { authorization: `Bearer ${options.oauthToken}` }),
    },
    rawBody,
    events,
  };
}

function mappedStream(unsubscribeGroups: Readonly<Record<string, string>>, group: number): string | undefined {
  return Object.hasOwn(unsubscribeGroups, String(group)) ? unsubscribeGroups[String(group)] : undefined;
}

/** One event object: the message's custom args, then SendGrid's own fields (which win a clash). */
function sendGridEvent(event: ReportedEvent, unsubscribeGroup: number | undefined): Record<string, unknown> {
  const customArgs =
    event.trackingId === null ? {} : (attachSendGridTrackingId<SendGridMailRequest>({}, event.trackingId).custom_args ?? {});
  const item: Record<string, unknown> = { ...customArgs, ...streamMetadata(event) };
  Object.assign(item, {
    email: event.recipient,
    timestamp: unixSeconds(event.occurredAt),
    'smtp-id': `<${event.messageId}@geopod-ismtpd-1>`,
    event: unsubscribeGroup === undefined ? sendGridEventName(event) : 'group_unsubscribe',
    category: [],
    sg_event_id: randomBytes(16).toString('base64url'),
    sg_message_id: `${event.messageId}.recvd-7f8c6b5d4-x2w9q-1-${randomBytes(4).toString('hex').toUpperCase()}-1.0`,
    ...detailsOf(event),
    ...(unsubscribeGroup === undefined ? {} : { asm_group_id: unsubscribeGroup }),
  });
  return item;
}

function sendGridEventName(event: ReportedEvent): string {
  const names = {
    sent: 'processed',
    delivered: 'delivered',
    deferred: 'deferred',
    bounced: 'bounce',
    complained: 'spamreport',
    rejected: 'dropped',
    opened: 'open',
    clicked: 'click',
    unsubscribed: 'unsubscribe',
  } as const;
  return names[event.type];
}

function detailsOf(event: ReportedEvent): Record<string, unknown> {
  switch (event.type) {
    case 'delivered':
      return { response: '250 2.0.0 OK', ip: '192.0.2.10', tls: 1 };
    case 'deferred':
      return { response: '452 4.2.2 Mailbox full', attempt: '1', ip: '192.0.2.10', tls: 1 };
    case 'bounced':
      return event.bounceClass === 'soft'
        ? { type: 'blocked', reason: '421 4.7.0 Try again later', status: '4.7.0', bounce_classification: 'Reputation' }
        : {
            type: 'bounce',
            reason: '550 5.1.1 The email account that you tried to reach does not exist.',
            status: '5.1.1',
            bounce_classification: 'Invalid Address',
          };
    case 'rejected':
      return { reason: 'Invalid', status: '5.0.0' };
    case 'opened':
      return { useragent: 'Mozilla/5.0', ip: '192.0.2.1', sg_machine_open: false };
    case 'clicked':
      return { useragent: 'Mozilla/5.0', ip: '192.0.2.1', url: 'https://example.com/spring', url_offset: { index: 0, type: 'html' } };
    default:
      return {};
  }
}
