import { randomUUID } from 'node:crypto';
import { sesTestNotification, type SesWebhookOptions } from './ses.js';
import {
  encoder,
  payloadText,
  requestTime,
  sharedSecretHeaders,
  type ReportedEvent,
  type SharedSecretCredentials,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Amazon SES event publishing through EventBridge as an API destination posts it: the whole EventBridge
 * event (`source: aws.ses`), its `detail` the SES event-publishing record, with the connection's Basic
 * credentials, API-key header or OAuth bearer token (EventBridge signs nothing).
 */

/** The `detail-type` EventBridge gives each SES event type. */
const detailTypes: Readonly<Record<string, string>> = {
  Send: 'Email Sent',
  Delivery: 'Email Delivered',
  DeliveryDelay: 'Email Delivery Delayed',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  Open: 'Email Opened',
  Click: 'Email Clicked',
  'Rendering Failure': 'Email Rendering Failed',
  Subscription: 'Email Subscribed',
};

/** The POST of one EventBridge event, authenticated with `credentials`. */
export function sesEventBridgeRequest(
  eventText: string,
  events: ReportedEvent[],
  credentials: SharedSecretCredentials | undefined,
): TestWebhook {
  return {
    provider: 'ses',
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...sharedSecretHeaders(credentials) },
    rawBody: encoder.encode(eventText),
    events,
  };
}

/** The EventBridge event of one SES event-publishing record, as the default bus carries it. */
export function sesEventBridgeEvent(detail: Record<string, unknown>, time: Date): Record<string, unknown> {
  const eventType = typeof detail.eventType === 'string' ? detail.eventType : '';
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': detailTypes[eventType] ?? `Email ${eventType}`,
    source: 'aws.ses',
    account: '123456789012',
    time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: 'us-east-1',
    resources: [],
    detail,
  };
}

export interface SesEventBridgeWebhookOptions {
  /** The connection's credentials (Basic, an API-key header or an OAuth bearer token), as the project is configured with them. */
  auth?: SharedSecretCredentials | undefined;
  /** Where the message carried its tracking ID: the `X-Service-Id` header (default) or the `service_id` tag. */
  carrier?: SesWebhookOptions['carrier'];
  /** When EventBridge posts; the default time of events. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The POST an EventBridge API destination makes for one SES event: one message and one event type, so
 * `events` share their type, message id, tracking ID and time (as for `sesWebhook`, which builds the same
 * SES record for SNS). `payload` posts an event given as is.
 *
 * @example
 * const request = sesEventBridgeWebhook({
 *   auth: { headers: { 'x-api-key': process.env.EVENTBRIDGE_API_KEY! } },
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 * await mailwarden.ingestWebhook('ses-eventbridge', 'acme', request);
 */
export function sesEventBridgeWebhook(options: TestPayload & SesEventBridgeWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return sesEventBridgeRequest(payloadText(options.payload), [], options.auth);
  const { notification, reported } = sesTestNotification(options.events, { family: 'event-publishing', carrier: options.carrier }, now);
  return sesEventBridgeRequest(JSON.stringify(sesEventBridgeEvent(notification, now)), reported, options.auth);
}
