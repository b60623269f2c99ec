import { createHmac, randomBytes } from 'node:crypto';
import { attachMandrillTrackingId } from '../carriers/mandrill.js';
import {
  encoder,
  escapeNonAscii,
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
 * Mandrill's (Mailchimp Transactional) webhooks as it posts them: a form with one field,
 * `mandrill_events`, holding a JSON array as PHP's json_encode writes it, and `X-Mandrill-Signature`:
 * base64 HMAC-SHA1 under the webhook key of the webhook URL followed by each field's name and value.
 */

/** `X-Mandrill-Signature` for a form posted to `url`: fields sorted by name, each as name + value. */
export function mandrillSignature(webhookKey: string, url: string, fields: Readonly<Record<string, string>>): string {
  const text =
    url +
    Object.keys(fields)
      .sort()
      .map((name) => name + fields[name])
      .join('');
  return createHmac('sha1', webhookKey).update(text, 'utf8').digest('base64');
}

/** The signed POST of a `mandrill_events` value. */
export function mandrillRequest(eventsText: string, events: ReportedEvent[], options: MandrillWebhookOptions): TestWebhook {
  const fields = { mandrill_events: eventsText };
  return {
    provider: 'mandrill',
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'Mandrill-Webhook/1.0',
      'x-mandrill-signature': mandrillSignature(options.webhookKey, options.url, fields),
    },
    rawBody: encoder.encode(new URLSearchParams(fields).toString()),
    events,
  };
}

/** PHP's json_encode: `/` as `\/`, everything past ASCII as `\uXXXX`. Both are valid JSON, and the signature covers the text. */
export function phpJson(value: unknown): string {
  return escapeNonAscii(JSON.stringify(value).replace(/\//g, '\\/'));
}

export interface MandrillWebhookOptions {
  /** The webhook's key, as the project is configured with it. */
  webhookKey: string;
  /** The webhook URL exactly as entered at Mandrill (the project's `mandrill.url`): Mandrill signs it. */
  url: string;
  /** When Mandrill posts; the default time of events. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The signed POST Mandrill makes for a batch reporting `events` (any number, of any messages), each
 * message's tracking ID in `msg.metadata` as `attachMandrillTrackingId` attaches it. `payload` is a
 * `mandrill_events` array (or its text), signed anew.
 *
 * @example
 * const request = mandrillWebhook({
 *   webhookKey: process.env.MANDRILL_WEBHOOK_KEY!,
 *   url: 'https://mail.example.com/projects/acme/webhooks/mandrill',
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function mandrillWebhook(options: TestPayload & MandrillWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return mandrillRequest(payloadText(options.payload), [], options);
  const events = reportEvents('mandrill', options.events, { now, seconds: true, messageId: () => randomBytes(16).toString('hex') });
  return mandrillRequest(phpJson(events.map(mandrillEvent)), events, options);
}

const eventNames = {
  sent: 'send',
  delivered: 'delivered',
  deferred: 'deferral',
  bounced: 'hard_bounce',
  complained: 'spam',
  rejected: 'reject',
  opened: 'open',
  clicked: 'click',
  unsubscribed: 'unsub',
} as const;

function mandrillEvent(event: ReportedEvent): Record<string, unknown> {
  // Through the carrier when there is an ID, so a stream that makes the metadata too big is refused as Mandrill would.
  const metadata =
    event.trackingId === null
      ? streamMetadata(event)
      : attachMandrillTrackingId({ message: { to: [{ email: event.recipient }] } }, event.trackingId, { stream: event.stream }).message
          .metadata;
  const ts = unixSeconds(event.occurredAt);
  const soft = event.type === 'bounced' && event.bounceClass === 'soft';
  const msg: Record<string, unknown> = {
    ts: ts - 5,
    _id: event.messageId,
    state: { bounced: soft ? 'soft-bounced' : 'bounced', deferred: 'deferred', rejected: 'rejected' }[event.type as string] ?? 'sent',
    email: event.recipient,
    sender: 'news@example.com',
    subject: 'Hello',
    tags: [],
    metadata,
    opens: [],
    clicks: [],
    // A deferral's reply is in its SMTP attempts, not in `diag`.
    smtp_events:
      event.type === 'deferred'
        ? [
            {
              ts: ts - 1,
              type: 'deferred',
              diag: '451 4.7.1 Greylisted, please retry later',
              source_ip: '198.51.100.7',
              destination_ip: '203.0.113.25',
              size: 0,
            },
          ]
        : [],
    subaccount: null,
  };
  if (event.type === 'bounced') {
    Object.assign(
      msg,
      soft
        ? { bounce_description: 'mailbox_full', bgtools_code: 22, diag: 'smtp;452 4.2.2 Mailbox full' }
        : {
            bounce_description: 'bad_mailbox',
            bgtools_code: 10,
            diag: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
          },
    );
  }
  const tracking =
    event.type === 'opened' || event.type === 'clicked' ? { ip: '192.0.2.1', user_agent: 'Mozilla/5.0', location: null } : {};
  return {
    event: soft ? 'soft_bounce' : eventNames[event.type],
    _id: event.messageId,
    ts,
    ...tracking,
    ...(event.type === 'clicked' ? { url: 'https://example.com/spring' } : {}),
    msg,
  };
}
