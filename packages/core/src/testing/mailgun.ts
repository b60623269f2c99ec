import { createHmac, randomBytes } from 'node:crypto';
import { attachMailgunTrackingId } from '../carriers/mailgun.js';
import {
  asciiJson,
  encoder,
  escapeNonAscii,
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
 * Mailgun's webhooks as it posts them: one event per POST, `{ signature, "event-data" }` serialized as
 * Python's json.dumps writes it, signed with HMAC-SHA256 of timestamp + token under the webhook signing
 * key; the legacy form webhook too, for core's tests.
 */

export interface MailgunDelivery {
  event: string;
  recipient: string;
  /** Unix seconds. */
  timestamp: number;
  signingKey: string;
}

/** The current JSON webhook body Mailgun posts, serialized as Python's json.dumps does (non-ASCII escaped). */
export function mailgunJsonWebhook(variables: Record<string, unknown>, delivery: MailgunDelivery): Uint8Array {
  const body = {
    signature: mailgunSignature(delivery.signingKey, String(delivery.timestamp)),
    'event-data': {
      event: delivery.event,
      id: randomBytes(16).toString('base64url'),
      timestamp: delivery.timestamp + 0.5,
      'log-level': 'info',
      recipient: delivery.recipient,
      'delivery-status': delivery.event === 'delivered' ? { code: 250, message: 'OK', description: '' } : null,
      message: { headers: { to: delivery.recipient, 'message-id': `${randomBytes(8).toString('hex')}@mg.example.com` } },
      'user-variables': variables,
    },
  };
  return encoder.encode(asciiJson(body));
}

/**
 * The legacy form webhook: Mailgun's fields, then each user variable as a field (strings as they are,
 * other values as JSON), then timestamp, token and signature, urlencoded.
 */
export function mailgunLegacyWebhook(variables: Record<string, unknown>, delivery: MailgunDelivery): Uint8Array {
  const form = new URLSearchParams();
  form.append('event', delivery.event);
  form.append('recipient', delivery.recipient);
  form.append('domain', 'mg.example.com');
  form.append('Message-Id', `<${randomBytes(8).toString('hex')}@mg.example.com>`);
  for (const [name, value] of Object.entries(variables)) form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  const { timestamp, token, signature } = mailgunSignature(delivery.signingKey, String(delivery.timestamp));
  form.append('timestamp', timestamp);
  form.append('token', token);
  form.append('signature', signature);
  return encoder.encode(form.toString());
}

/** Mailgun's signature block: a fresh token, and hex HMAC-SHA256 of timestamp + token under the signing key. */
export function mailgunSignature(
  signingKey: string,
  timestamp: string,
  token = randomBytes(25).toString('hex'),
): { timestamp: string; token: string; signature: string } {
  const signature = createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest('hex');
  return { timestamp, token, signature };
}

export interface MailgunWebhookOptions {
  /** The domain's HTTP webhook signing key, as the project is configured with it. */
  signingKey: string;
  /** The signature's timestamp; default now. The receiver accepts it within `toleranceSeconds` (9 hours). */
  signedAt?: Date | undefined;
}

/**
 * The signed POST Mailgun makes for one event (Mailgun posts each event alone), with the tracking ID in
 * `user-variables` as `attachMailgunTrackingId` puts it there. `payload` is an `event-data` object, signed
 * anew. Every request carries a fresh token: mailwarden refuses a token it has seen with another body.
 *
 * Mailgun has no soft bounce: a temporary failure (`failed`, severity `temporary`) is a `deferred` event.
 *
 * @example
 * const request = mailgunWebhook({
 *   signingKey: process.env.MAILGUN_SIGNING_KEY!,
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function mailgunWebhook(options: TestPayload & MailgunWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return signedMailgunRequest(payloadText(options.payload), [], options, now);
  const events = reportEvents('mailgun', options.events, { now, seconds: true, messageId: mailgunMessageId });
  if (events.length !== 1) throw invalid(`Mailgun posts one event per request, not ${events.length}: build one request per event.`);
  const event = events[0]!;
  if (event.type === 'bounced' && event.bounceClass === 'soft') {
    throw invalid('Mailgun reports no soft bounces: a temporary failure is a deferral (type deferred).');
  }
  return signedMailgunRequest(JSON.stringify(eventData(event)), events, options, now);
}

function signedMailgunRequest(eventDataText: string, events: ReportedEvent[], options: MailgunWebhookOptions, now: Date): TestWebhook {
  const signature = mailgunSignature(options.signingKey, String(unixSeconds(now)));
  // ASCII only, as Python's json.dumps writes it; the event-data text goes in as given (a payload may not be JSON).
  const text = `{"signature":${asciiJson(signature)},"event-data":${escapeNonAscii(eventDataText)}}`;
  return {
    provider: 'mailgun',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'mailgun/treq-16.12.0' },
    rawBody: encoder.encode(text),
    events,
  };
}

/** As Mailgun makes them: the send time as digits, a counter, a random part, the sending domain. */
function mailgunMessageId(): string {
  const time = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  return `${time}.1.${randomBytes(8).toString('hex').toUpperCase()}@mg.example.com`;
}

/** The `event-data` Mailgun reports for one event. */
function eventData(event: ReportedEvent): Record<string, unknown> {
  const fields = event.trackingId === null ? {} : attachMailgunTrackingId({ to: event.recipient }, event.trackingId);
  const userVariables = Object.fromEntries(
    Object.entries(fields)
      .filter(([name]) => name.startsWith('v:'))
      .map(([name, value]) => [name.slice(2), value]),
  );
  Object.assign(userVariables, streamMetadata(event));
  const domain = event.recipient.slice(event.recipient.lastIndexOf('@') + 1);
  const common = {
    id: randomBytes(16).toString('base64url'),
    timestamp: unixSeconds(event.occurredAt),
    // A rejected message was never sent to anyone: Mailgun names the recipient only in its To header.
    ...(event.type === 'rejected' ? {} : { recipient: event.recipient, 'recipient-domain': domain }),
    message: {
      headers: { to: event.recipient, 'message-id': event.messageId, from: 'Shop <news@mg.example.com>', subject: 'Hello' },
      attachments: [],
      size: 1311,
    },
    tags: [],
    'user-variables': userVariables,
  };
  switch (event.type) {
    case 'sent':
      return {
        event: 'accepted',
        'log-level': 'info',
        method: 'HTTP',
        flags: { 'is-authenticated': true, 'is-test-mode': false },
        ...common,
      };
    case 'delivered':
      return {
        event: 'delivered',
        'log-level': 'info',
        envelope: { transport: 'smtp', sender: 'news@mg.example.com', 'sending-ip': '192.0.2.10', targets: event.recipient },
        'delivery-status': {
          code: 250,
          message: 'OK',
          description: '',
          'attempt-no': 1,
          tls: true,
          'mx-host': `mx.${domain}`,
          'session-seconds': 0.4,
        },
        ...common,
      };
    case 'deferred':
      return {
        event: 'failed',
        severity: 'temporary',
        reason: 'generic',
        'log-level': 'warn',
        'delivery-status': { code: 452, message: '4.2.2 Mailbox full', description: '', 'attempt-no': 1, 'retry-seconds': 600 },
        ...common,
      };
    case 'bounced':
      return {
        event: 'failed',
        severity: 'permanent',
        reason: 'bounce',
        'log-level': 'error',
        'delivery-status': {
          code: 550,
          message: '5.1.1 The email account that you tried to reach does not exist',
          description: '',
          'attempt-no': 1,
          'bounce-type': 'hard',
        },
        flags: { 'is-delayed-bounce': false },
        ...common,
      };
    case 'rejected':
      return {
        event: 'rejected',
        'log-level': 'warn',
        reject: { reason: 'Sandbox subdomains are for test purposes only', description: '' },
        ...common,
      };
    case 'opened':
      return {
        event: 'opened',
        'log-level': 'info',
        ip: '192.0.2.1',
        'client-info': { 'client-type': 'browser', 'user-agent': 'Mozilla/5.0' },
        ...common,
      };
    case 'clicked':
      return { event: 'clicked', 'log-level': 'info', url: 'https://example.com/spring', ip: '192.0.2.1', ...common };
    case 'complained':
      return { event: 'complained', 'log-level': 'warn', ...common };
    case 'unsubscribed':
      return { event: 'unsubscribed', 'log-level': 'info', ip: '192.0.2.1', ...common };
  }
}
