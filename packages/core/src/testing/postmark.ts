import { randomInt, randomUUID } from 'node:crypto';
import { attachPostmarkTrackingId } from '../carriers/postmark.js';
import { isStreamName } from '../stream.js';
import {
  encoder,
  invalid,
  payloadText,
  reportEvents,
  streamMetadata,
  requestTime,
  sharedSecretHeaders,
  type ReportedEvent,
  type SharedSecretCredentials,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Postmark's webhooks as it posts them: one record per POST (Delivery, Bounce, SpamComplaint, Open,
 * Click, SubscriptionChange), with the `HttpAuth` basic credentials and/or `HttpHeaders` configured on
 * the webhook (Postmark signs nothing).
 */

/** The POST of one record's JSON text, authenticated with `credentials`. */
export function postmarkRequest(
  recordText: string,
  events: ReportedEvent[],
  credentials: SharedSecretCredentials | undefined,
): TestWebhook {
  return {
    provider: 'postmark',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Postmark', ...sharedSecretHeaders(credentials) },
    rawBody: encoder.encode(recordText),
    events,
  };
}

/** A Bounce or SpamComplaint record `ID`: Postmark's are often above 2^53, so they are written as digits, never as a rounded number. */
export function postmarkRecordIdDigits(): string {
  return `${randomInt(1, 2 ** 47)}${randomInt(0, 100_000).toString().padStart(5, '0')}`;
}

export interface PostmarkWebhookOptions {
  /** The webhook's `HttpAuth` (basic) and/or `HttpHeaders` (headers), as the project is configured with them. */
  auth?: SharedSecretCredentials | undefined;
  /** When Postmark posts; the default time of the event. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The POST Postmark makes for one event (Postmark posts each record alone), the tracking ID in
 * `Metadata` as `attachPostmarkTrackingId` splits it there. `payload` posts a record given as is.
 * Postmark has no webhook for a message merely sent.
 *
 * @example
 * const request = postmarkWebhook({
 *   auth: { basic: { username: 'postmark', password: process.env.POSTMARK_WEBHOOK_PASSWORD! } },
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function postmarkWebhook(options: TestPayload & PostmarkWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return postmarkRequest(payloadText(options.payload), [], options.auth);
  const events = reportEvents('postmark', options.events, { now, seconds: false, messageId: randomUUID });
  if (events.length !== 1) throw invalid(`Postmark posts one record per request, not ${events.length}: build one request per event.`);
  const event = events[0]!;
  if (event.type === 'sent') throw invalid('Postmark has no webhook for a message merely sent.');
  const given = options.events[0]!.messageStream;
  const messageStream = given === undefined ? 'outbound' : given;
  // An unsubscribe of a message without a stream is recorded in Postmark's message stream, when a stream name.
  const reported =
    event.type === 'unsubscribed' && event.stream === undefined && isStreamName(messageStream)
      ? { ...event, stream: messageStream }
      : event;
  return postmarkRequest(recordText(event, messageStream), [reported], options.auth);
}

/** Postmark's times: ISO 8601 with seven fraction digits. */
function postmarkTime(date: Date): string {
  return date.toISOString().replace('Z', '0000Z');
}

function recordText(event: ReportedEvent, messageStream: string | null): string {
  const metadata = {
    ...(event.trackingId === null ? {} : attachPostmarkTrackingId({}, event.trackingId).Metadata),
    ...streamMetadata(event),
  };
  const at = postmarkTime(event.occurredAt);
  const common = {
    MessageID: event.messageId,
    ServerID: 23,
    ...(messageStream === null ? {} : { MessageStream: messageStream }),
    Tag: '',
    Metadata: metadata,
  };
  const bounce = (type: string, typeCode: number, name: string, description: string, details: string) => ({
    RecordType: 'Bounce',
    ID: '__ID__',
    Type: type,
    TypeCode: typeCode,
    Name: name,
    ...common,
    Description: description,
    Details: details,
    Email: event.recipient,
    From: 'news@example.com',
    BouncedAt: at,
    DumpAvailable: false,
    Inactive: typeCode === 1,
    CanActivate: true,
    Subject: 'Hello',
  });
  const client = {
    UserAgent: 'Mozilla/5.0',
    Client: { Name: 'Chrome', Company: 'Google', Family: 'Chrome' },
    OS: { Name: 'macOS', Company: 'Apple', Family: 'macOS' },
  };
  let record: Record<string, unknown>;
  switch (event.type) {
    case 'sent':
      throw invalid('Postmark has no webhook for a message merely sent.');
    case 'delivered':
      record = { RecordType: 'Delivery', ...common, Recipient: event.recipient, DeliveredAt: at, Details: 'smtp;250 2.0.0 OK' };
      break;
    case 'deferred':
      record = bounce(
        'Transient',
        2,
        'Message delayed',
        'The server could not temporarily deliver your message.',
        'smtp;452 4.2.2 Mailbox full',
      );
      break;
    case 'bounced':
      record =
        event.bounceClass === 'soft'
          ? bounce('SoftBounce', 4096, 'Soft bounce', 'Unable to temporarily deliver this email.', 'smtp;452 4.2.2 Mailbox full')
          : bounce(
              'HardBounce',
              1,
              'Hard bounce',
              'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
              'smtp;550 5.1.1 user unknown',
            );
      break;
    case 'rejected':
      record = bounce(
        'BadEmailAddress',
        100000,
        'Invalid email address',
        'The address is not a valid email address.',
        'Invalid email address',
      );
      break;
    case 'complained':
      record = {
        ...bounce('SpamComplaint', 100001, 'Spam complaint', 'The subscriber explicitly marked this message as spam.', ''),
        RecordType: 'SpamComplaint',
        Inactive: true,
      };
      break;
    case 'opened':
      record = {
        RecordType: 'Open',
        ...common,
        FirstOpen: true,
        Recipient: event.recipient,
        ReceivedAt: at,
        Platform: 'Desktop',
        ReadSeconds: 5,
        ...client,
      };
      break;
    case 'clicked':
      record = {
        RecordType: 'Click',
        ...common,
        Recipient: event.recipient,
        ReceivedAt: at,
        ClickLocation: 'HTML',
        OriginalLink: 'https://example.com/spring',
        Platform: 'Desktop',
        ...client,
      };
      break;
    case 'unsubscribed':
      record = {
        RecordType: 'SubscriptionChange',
        ...common,
        Recipient: event.recipient,
        ChangedAt: at,
        Origin: 'Recipient',
        SuppressSending: true,
        SuppressionReason: 'ManualSuppression',
      };
      break;
  }
  return JSON.stringify(record).replace('"__ID__"', postmarkRecordIdDigits());
}
