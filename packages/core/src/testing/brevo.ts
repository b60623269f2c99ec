import { randomBytes, randomInt } from 'node:crypto';
import { attachBrevoTrackingId, BREVO_CUSTOM_HEADER } from '../carriers/brevo.js';
import {
  asciiJson,
  encoder,
  payloadText,
  reportEvents,
  requestTime,
  sharedSecretHeaders,
  streamMetadata,
  unixSeconds,
  type ReportedEvent,
  type SharedSecretCredentials,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Brevo's transactional webhooks as it posts them: one JSON event object, or an array of them when the
 * webhook is batched, with the basic credentials of the webhook URL, a bearer token or a custom header
 * (Brevo signs nothing).
 */

/** The POST of one body, authenticated with `credentials`. */
export function brevoRequest(bodyText: string, events: ReportedEvent[], credentials: SharedSecretCredentials | undefined): TestWebhook {
  return {
    provider: 'brevo',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Brevo-Webhook', ...sharedSecretHeaders(credentials) },
    rawBody: encoder.encode(bodyText),
    events,
  };
}

export interface BrevoWebhookOptions {
  /** The webhook's basic credentials, bearer token or custom header, as the project is configured with them. */
  auth?: SharedSecretCredentials | undefined;
  /** When Brevo posts; the default time of events. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The POST Brevo makes reporting `events`: one event alone as an object, several as the array of a
 * batched webhook. Each message's tracking ID (and stream) is in `X-Mailin-custom` exactly as
 * `attachBrevoTrackingId` writes it; `message-id` is in angle brackets, as live events have it.
 * `payload` posts a body given as is.
 *
 * @example
 * const request = brevoWebhook({
 *   auth: { basic: { username: 'brevo', password: process.env.BREVO_WEBHOOK_PASSWORD! } },
 *   events: [{ type: 'delivered', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function brevoWebhook(options: TestPayload & BrevoWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return brevoRequest(payloadText(options.payload), [], options.auth);
  const events = reportEvents('brevo', options.events, {
    now,
    seconds: false,
    messageId: () => `${now.getTime()}.${randomInt(1, 2 ** 40)}@smtp-relay.mailin.fr`,
  });
  const items = events.map(brevoItem);
  return brevoRequest(JSON.stringify(items.length === 1 ? items[0] : items), events, options.auth);
}

function brevoItem(event: ReportedEvent): Record<string, unknown> {
  // The header as attachBrevoTrackingId writes it; a stream without a tracking ID travels alone.
  const text =
    event.trackingId === null
      ? event.stream === undefined
        ? undefined
        : asciiJson(streamMetadata(event))
      : attachBrevoTrackingId<{ headers?: Record<string, string> }>({}, event.trackingId, { stream: event.stream }).headers?.[
          BREVO_CUSTOM_HEADER
        ];
  const custom = text === undefined ? {} : { [BREVO_CUSTOM_HEADER]: text };
  const seconds = unixSeconds(event.occurredAt);
  return {
    event: eventName(event),
    email: event.recipient,
    id: 1_234_567,
    date: event.occurredAt.toISOString().slice(0, 19).replace('T', ' '),
    ts: seconds,
    ts_event: seconds,
    ts_epoch: event.occurredAt.getTime(),
    'message-id': `<${event.messageId}>`,
    subject: 'Hello',
    tags: ['newsletter'],
    sending_ip: '198.51.100.7',
    ...custom,
    ...details(event),
  };
}

function eventName(event: ReportedEvent): string {
  switch (event.type) {
    case 'sent':
      return 'request';
    case 'delivered':
      return 'delivered';
    case 'deferred':
      return 'deferred';
    case 'bounced':
      return event.bounceClass === 'soft' ? 'soft_bounce' : 'hard_bounce';
    case 'complained':
      return 'spam';
    case 'rejected':
      return 'blocked';
    case 'opened':
      return 'opened';
    case 'clicked':
      return 'click';
    case 'unsubscribed':
      return 'unsubscribed';
  }
}

function details(event: ReportedEvent): Record<string, unknown> {
  switch (event.type) {
    case 'deferred':
      return { reason: '452 4.2.2 Mailbox full' };
    case 'bounced':
      return { reason: event.bounceClass === 'soft' ? '452 4.2.2 Mailbox full' : '550 5.1.1 User unknown' };
    case 'rejected':
      return { reason: 'blocked : due to blacklist user' };
    case 'clicked':
      return { link: 'https://example.com/spring', user_agent: 'Mozilla/5.0' };
    case 'opened':
      return { user_agent: 'Mozilla/5.0', mirror_link: `https://app-smtp.brevo.com/log/preview/${randomBytes(8).toString('hex')}` };
    default:
      return {};
  }
}
