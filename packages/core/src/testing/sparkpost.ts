import { randomBytes, randomInt } from 'node:crypto';
import { attachSparkPostTrackingId } from '../carriers/sparkpost.js';
import {
  encoder,
  payloadText,
  reportEvents,
  streamMetadata,
  requestTime,
  sharedSecretHeaders,
  unixSeconds,
  type ReportedEvent,
  type SharedSecretCredentials,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * SparkPost's webhooks as it posts them: a JSON array of `{ msys: { <event class>: {…} } }` batches, with
 * basic auth or an OAuth bearer token (SparkPost signs nothing).
 */

/** The POST of one batch, authenticated with `credentials`. */
export function sparkPostRequest(
  batchText: string,
  events: ReportedEvent[],
  credentials: SharedSecretCredentials | undefined,
): TestWebhook {
  return {
    provider: 'sparkpost',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'SparkPost',
      'x-messagesystems-batch-id': randomBytes(8).toString('hex'),
      ...sharedSecretHeaders(credentials),
    },
    rawBody: encoder.encode(batchText),
    events,
  };
}

export interface SparkPostWebhookOptions {
  /** The webhook's `auth_credentials` (basic) or OAuth token (bearer), as the project is configured with them. */
  auth?: SharedSecretCredentials | undefined;
  /** When SparkPost posts the batch; the default time of events. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The POST SparkPost makes for a batch reporting `events` (any number, of any messages), each message's
 * tracking ID in `rcpt_meta` as `attachSparkPostTrackingId` attaches it; recipients are reported lower-cased
 * in `rcpt_to`, as SparkPost does. `payload` posts a batch given as is.
 *
 * @example
 * const request = sparkPostWebhook({
 *   auth: { basic: { username: 'sparkpost', password: process.env.SPARKPOST_WEBHOOK_PASSWORD! } },
 *   events: [{ type: 'delivered', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function sparkPostWebhook(options: TestPayload & SparkPostWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return sparkPostRequest(payloadText(options.payload), [], options.auth);
  const events = reportEvents('sparkpost', options.events, {
    now,
    seconds: true,
    messageId: () => String(randomInt(1, 2 ** 47)),
    recipient: (address) => address.toLowerCase(),
  });
  const batch = events.map((event, index) => sparkPostItem(event, options.events[index]!.recipient));
  return sparkPostRequest(JSON.stringify(batch), events, options.auth);
}

function sparkPostItem(event: ReportedEvent, rawRecipient: string): Record<string, unknown> {
  const metadata = {
    ...(event.trackingId === null ? {} : (attachSparkPostTrackingId<{ metadata?: object }>({}, event.trackingId).metadata ?? {})),
    ...streamMetadata(event),
  };
  const [eventClass, type, details] = classOf(event);
  return {
    msys: {
      [eventClass]: {
        type,
        event_id: String(randomInt(1, 2 ** 47)) + String(randomInt(0, 100_000)).padStart(5, '0'),
        transmission_id: event.messageId,
        message_id: randomBytes(10).toString('hex'),
        campaign_id: '',
        customer_id: '1',
        friendly_from: 'news@example.com',
        subject: 'Hello',
        rcpt_to: event.recipient,
        raw_rcpt_to: rawRecipient,
        rcpt_meta: metadata,
        rcpt_tags: [],
        rcpt_type: 'to',
        routing_domain: event.recipient.slice(event.recipient.lastIndexOf('@') + 1),
        ip_pool: 'default',
        timestamp: String(unixSeconds(event.occurredAt)),
        ...details,
      },
    },
    cust: { id: '1' },
  };
}

function classOf(event: ReportedEvent): [string, string, Record<string, unknown>] {
  switch (event.type) {
    case 'sent':
      return ['message_event', 'injection', { msg_from: 'msprvs1=news@example.com', injection_time: event.occurredAt.toISOString() }];
    case 'delivered':
      return ['message_event', 'delivery', { ip_address: '192.0.2.10', queue_time: '1200', num_retries: '0', outbound_tls: '1' }];
    case 'deferred':
      return [
        'message_event',
        'delay',
        {
          error_code: '452',
          reason: '452 4.2.2 Mailbox full',
          raw_reason: '452 4.2.2 Mailbox full',
          num_retries: '1',
          queue_time: '60000',
        },
      ];
    case 'bounced':
      return event.bounceClass === 'soft'
        ? [
            'message_event',
            'bounce',
            { bounce_class: '20', error_code: '452', reason: '452 4.2.2 Mailbox full', raw_reason: '452 4.2.2 Mailbox full' },
          ]
        : [
            'message_event',
            'bounce',
            {
              bounce_class: '10',
              error_code: '550',
              reason: '550 5.1.1 ...@... User unknown',
              raw_reason: `550 5.1.1 <${event.recipient}>: User unknown`,
            },
          ];
    case 'complained':
      return ['message_event', 'spam_complaint', { fbtype: 'abuse', report_by: 'server.example.com', report_to: 'abuse.example.com' }];
    case 'rejected':
      return [
        'message_event',
        'policy_rejection',
        {
          error_code: '554',
          reason: '554 5.7.1 recipient address suppressed due to customer policy',
          raw_reason: '554 5.7.1 recipient address suppressed due to customer policy',
        },
      ];
    case 'opened':
      return ['track_event', 'open', { ip_address: '192.0.2.1', user_agent: 'Mozilla/5.0', geo_ip: { country: 'US' } }];
    case 'clicked':
      return [
        'track_event',
        'click',
        { ip_address: '192.0.2.1', user_agent: 'Mozilla/5.0', target_link_url: 'https://example.com/spring' },
      ];
    case 'unsubscribed':
      return ['unsubscribe_event', 'list_unsubscribe', { mailfrom: 'msprvs1=news@example.com' }];
  }
}
