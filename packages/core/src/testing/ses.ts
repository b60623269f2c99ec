import { randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { encodeServiceIdHeader, SERVICE_ID_HEADER } from '../carriers/ses-header.js';
import { SERVICE_STREAM_HEADER } from '../carriers/stream-carrier.js';
import { isStreamName } from '../stream.js';
import { sesTrackingTags } from '../carriers/ses-tags.js';
import type { WebhookRequest } from '../webhooks/request.js';
import { testSnsSigner } from './sns-test-signer.js';
import {
  invalid,
  payloadText,
  reportEvents,
  streamMetadata,
  requestTime,
  sharedSecretHeaders,
  type ReportedEvent,
  type TestEvent,
  type TestEventType,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Amazon SES as it reports a sent message: the notification SES publishes (event publishing through a
 * configuration set, or identity feedback notifications), wrapped in the HTTP POST of an SNS HTTP/S
 * subscription and signed the way SNS signs, with the testing kit's key unless told otherwise.
 */

/** The topic of core's own tests, and the test key's certificate under the URL its messages name. */
export const topicArn = 'arn:aws:sns:us-east-1:123456789012:ses-events';
export const certificateUrl = testSnsSigner.certificateUrl;
export const snsSigningKey = testSnsSigner.privateKey;
export const snsSigningCertificate = testSnsSigner.certificate;

/** A message SES accepted: what its notifications will say about it. */
export interface SentMessage {
  messageId: string;
  destination: string[];
  headers: { name: string; value: string }[];
  /** Message tags, as notifications publish them: `{ name: [value] }`. */
  tags: Record<string, string[]>;
}

export type SesFamily = 'event-publishing' | 'feedback';

/** The SES event types of delivery events; identity feedback notifications know only Bounce, Complaint and Delivery. */
export type SesEventType = 'Send' | 'Delivery' | 'DeliveryDelay' | 'Bounce' | 'Complaint' | 'Reject' | 'Open' | 'Click' | 'Subscription';

export interface SesNotificationOptions {
  family?: SesFamily;
  /** Whether `mail` carries the original headers: always for event publishing, when "include original headers" is on for feedback. */
  includeHeaders?: boolean;
  /** The event's time (the event object's `timestamp`; `mail.timestamp` for Send and Reject, which have none). */
  occurredAt?: Date;
  /** Who the event object names (bounced, complained, delivered, delayed recipients); default every destination. */
  recipients?: readonly string[];
  /** Bounce only: default `Permanent`. */
  bounceType?: 'Permanent' | 'Transient';
  /** Subscription only: the topic opted out of; default none, an opt-out of the whole contact list. */
  topic?: string | undefined;
}

/**
 * The notification SES publishes about a sent message. Event publishing carries headers and tags;
 * identity feedback notifications carry headers only when "include original headers" is on, and never tags.
 */
export function sesNotification(sent: SentMessage, eventType: SesEventType, options: SesNotificationOptions = {}): Record<string, unknown> {
  const family = options.family ?? 'event-publishing';
  const includeHeaders = options.includeHeaders ?? family === 'event-publishing';
  const at = options.occurredAt ?? new Date('2026-04-01T09:00:02.000Z');
  const sentAt = eventType === 'Send' || eventType === 'Reject' ? at : new Date(at.getTime() - 2000);
  const mail: Record<string, unknown> = {
    timestamp: options.occurredAt === undefined ? '2026-04-01T09:00:00.000Z' : sentAt.toISOString(),
    source: 'shop@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/example.com',
    sendingAccountId: '123456789012',
    messageId: sent.messageId,
    destination: sent.destination,
  };
  if (includeHeaders)
    Object.assign(mail, {
      headersTruncated: false,
      headers: sent.headers,
      commonHeaders: { from: ['shop@example.com'], to: sent.destination, subject: 'Hello' },
    });
  if (family === 'event-publishing') {
    mail.tags = { 'ses:operation': ['SendEmail'], 'ses:configuration-set': ['tracking'], 'ses:from-domain': ['example.com'], ...sent.tags };
  }
  const typeKey = family === 'event-publishing' ? 'eventType' : 'notificationType';
  const timestamp = at.toISOString();
  const recipients = [...(options.recipients ?? sent.destination)];
  const notification: Record<string, unknown> = { [typeKey]: eventType, mail };
  switch (eventType) {
    case 'Send':
      notification.send = {};
      break;
    case 'Delivery':
      notification.delivery = {
        timestamp,
        processingTimeMillis: 2000,
        recipients,
        smtpResponse: '250 2.0.0 OK',
        reportingMTA: 'a8-70.smtp-out.amazonses.com',
      };
      break;
    case 'DeliveryDelay':
      notification.deliveryDelay = {
        timestamp,
        delayType: 'TransientCommunicationFailure',
        expirationTime: new Date(at.getTime() + 24 * 60 * 60 * 1000).toISOString(),
        delayedRecipients: recipients.map((emailAddress) => ({
          emailAddress,
          status: '4.4.1',
          diagnosticCode: 'smtp; 421 4.4.1 Connection timed out',
        })),
      };
      break;
    case 'Bounce': {
      const permanent = (options.bounceType ?? 'Permanent') === 'Permanent';
      notification.bounce = {
        bounceType: permanent ? 'Permanent' : 'Transient',
        bounceSubType: permanent ? 'General' : 'MailboxFull',
        bouncedRecipients: recipients.map((emailAddress) =>
          permanent
            ? { emailAddress, action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }
            : { emailAddress, action: 'failed', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 Mailbox full' },
        ),
        timestamp,
        feedbackId: `${randomBytes(8).toString('hex')}-${randomUUID()}-000000`,
        reportingMTA: 'dns; a8-70.smtp-out.amazonses.com',
      };
      break;
    }
    case 'Complaint':
      notification.complaint = {
        complainedRecipients: recipients.map((emailAddress) => ({ emailAddress })),
        timestamp,
        feedbackId: `${randomBytes(8).toString('hex')}-${randomUUID()}-000000`,
        complaintSubType: null,
        userAgent: 'Mozilla/5.0 (feedback loop)',
        complaintFeedbackType: 'abuse',
        arrivalDate: timestamp,
      };
      break;
    case 'Reject':
      notification.reject = { reason: 'Bad content' };
      break;
    case 'Open':
      notification.open = { timestamp, ipAddress: '192.0.2.1', userAgent: 'Mozilla/5.0' };
      break;
    case 'Click':
      notification.click = {
        timestamp,
        ipAddress: '192.0.2.1',
        userAgent: 'Mozilla/5.0',
        link: 'https://example.com/spring',
        linkTags: {},
      };
      break;
    case 'Subscription':
      notification.subscription = {
        contactList: 'newsletter',
        timestamp,
        source: 'UnsubscribeHeader',
        ...(options.topic === undefined
          ? {
              newTopicPreferences: { unsubscribeAll: true, topicSubscriptionStatus: [] },
              oldTopicPreferences: { unsubscribeAll: false, topicSubscriptionStatus: [] },
            }
          : {
              newTopicPreferences: {
                unsubscribeAll: false,
                topicSubscriptionStatus: [{ topicName: options.topic, subscriptionStatus: 'OptOut' }],
              },
              oldTopicPreferences: {
                unsubscribeAll: false,
                topicSubscriptionStatus: [{ topicName: options.topic, subscriptionStatus: 'OptIn' }],
              },
            }),
      };
      break;
  }
  return notification;
}

export interface SnsEnvelopeOptions {
  type?: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  topicArn?: string;
  signatureVersion?: '1' | '2';
  signingCertUrl?: string;
  subscribeUrl?: string;
  subject?: string;
  messageId?: string;
  /** When SNS published it; default a fixed time of core's tests. */
  timestamp?: Date;
  /** The key that signs; the testing kit's unless told otherwise. */
  key?: string | KeyObject;
}

/** An SNS HTTP/S message around `message`, signed the way SNS signs (reference §1.6). */
export function snsEnvelope(message: string, options: SnsEnvelopeOptions = {}): Record<string, string> {
  const type = options.type ?? 'Notification';
  const envelope: Record<string, string> = {
    Type: type,
    MessageId: options.messageId ?? randomUUID(),
    TopicArn: options.topicArn ?? topicArn,
    Message: message,
    Timestamp: options.timestamp?.toISOString() ?? '2026-04-01T09:00:03.123Z',
    SignatureVersion: options.signatureVersion ?? '1',
    SigningCertURL: options.signingCertUrl ?? certificateUrl,
  };
  if (type === 'Notification') {
    if (options.subject !== undefined) envelope.Subject = options.subject;
    envelope.UnsubscribeURL = `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${envelope.TopicArn}:${randomUUID()}`;
  } else {
    envelope.Token = randomBytes(64).toString('hex');
    envelope.SubscribeURL =
      options.subscribeUrl ??
      `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${envelope.TopicArn}&Token=${envelope.Token}`;
  }
  envelope.Signature = signEnvelope(envelope, options.key ?? snsSigningKey);
  return envelope;
}

/** Signs with SHA1withRSA (version 1) or SHA256withRSA (version 2) over the fields SNS signs. */
export function signEnvelope(envelope: Record<string, string>, key: string | KeyObject): string {
  const names =
    envelope.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  const text = names
    .filter((name) => envelope[name] !== undefined)
    .map((name) => `${name}\n${envelope[name]}\n`)
    .join('');
  return sign(envelope.SignatureVersion === '2' ? 'sha256' : 'sha1', Buffer.from(text, 'utf8'), key).toString('base64');
}

/** The HTTP POST SNS makes: JSON as `text/plain`, with the x-amz-sns-* headers. */
export function snsRequest(
  envelope: Record<string, string>,
  headers: Record<string, string> = {},
): WebhookRequest & { headers: Record<string, string> } {
  return {
    method: 'POST',
    headers: {
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': envelope.Type!,
      'x-amz-sns-message-id': envelope.MessageId!,
      'x-amz-sns-topic-arn': envelope.TopicArn!,
      ...(envelope.Type === 'Notification' ? { 'x-amz-sns-subscription-arn': `${envelope.TopicArn}:${randomUUID()}` } : {}),
      'user-agent': 'Amazon Simple Notification Service Agent',
      ...headers,
    },
    rawBody: Buffer.from(JSON.stringify(envelope, null, 2), 'utf8'),
  };
}

/** SNS raw message delivery: the bare message as the body, no envelope, no signature. */
export function snsRawRequest(message: string, headers: Record<string, string> = {}): WebhookRequest {
  return {
    method: 'POST',
    headers: {
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': 'Notification',
      'x-amz-sns-message-id': randomUUID(),
      'x-amz-sns-topic-arn': topicArn,
      'x-amz-sns-rawdelivery': 'true',
      ...headers,
    },
    rawBody: Buffer.from(message, 'utf8'),
  };
}

/** An id as SES's send APIs return them. */
export function sesMessageId(): string {
  return `0100018e${randomBytes(4).toString('hex')}-${randomUUID()}-000000`;
}

// --- The kit's builders. ---------------------------------------------------------------------------

/** How SNS signs and posts, as the receiving project is configured for it. */
export interface SnsSigningOptions {
  /** The topic the message comes from: one of the project's `topicArns`. */
  topicArn: string;
  /** `1` (SHA1withRSA, SNS's default) or `2` (SHA256withRSA). Default `1`. */
  signatureVersion?: '1' | '2' | undefined;
  /** The key that signs; default `testSnsSigner.privateKey`, whose certificate the receiver must trust. */
  signingKey?: string | KeyObject | undefined;
  /** The `SigningCertURL`; default `testSnsSigner.certificateUrl`. */
  signingCertUrl?: string | undefined;
  /** Basic credentials of the subscription URL (`https://user:password@host/…`), for a project that requires them. */
  basic?: { username: string; password: string } | undefined;
  /** When SNS posts; default now. */
  signedAt?: Date | undefined;
}

export interface SesWebhookOptions extends SnsSigningOptions {
  /** `event-publishing` (a configuration set's SNS destination; the default) or `feedback` (identity notifications, with original headers). */
  family?: SesFamily | undefined;
  /** Where the message carried its tracking ID: the `X-Service-Id` header (default) or the `service_id` tag (event publishing only). */
  carrier?: 'header' | 'tags' | undefined;
}

const sesEventTypes: Record<TestEventType, SesEventType> = {
  sent: 'Send',
  delivered: 'Delivery',
  deferred: 'DeliveryDelay',
  bounced: 'Bounce',
  complained: 'Complaint',
  rejected: 'Reject',
  opened: 'Open',
  clicked: 'Click',
  unsubscribed: 'Subscription',
};

/**
 * The POST SNS makes for one SES notification, signed as SNS signs. One notification is about one
 * message and one event type, so `events` share their type, message id, tracking ID and time, and name
 * the message's recipients (several make one notification naming them all). Open, click, send, reject
 * and subscription events name no recipient: SES applies them to every destination, as here.
 *
 * @example
 * const request = sesWebhook({
 *   topicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 * await mailwarden.ingestWebhook('ses', 'acme', request); // with fetchCertificate: fetchTestSnsCertificate
 */
export function sesWebhook(options: TestPayload & SesWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return snsTestWebhook(payloadText(options.payload), [], options, now);
  const { notification, reported } = sesTestNotification(options.events, options, now);
  return snsTestWebhook(JSON.stringify(notification), reported, options, now);
}

/** How SES reported a message: the notification family and where the message carried its tracking ID. */
export type SesReportOptions = Pick<SesWebhookOptions, 'family' | 'carrier'>;

/**
 * The SES notification reporting `input` (one message, one event type: see `sesWebhook`), and the events
 * a receiver must make of it: what SNS carries in its `Message` and EventBridge in its `detail`.
 */
export function sesTestNotification(
  input: readonly TestEvent[],
  options: SesReportOptions,
  now: Date,
): { notification: Record<string, unknown>; reported: ReportedEvent[] } {
  let generated: string | undefined;
  const events = reportEvents('ses', input, { now, seconds: false, messageId: () => (generated ??= sesMessageId()) });
  const [first] = events;
  if (first === undefined) throw invalid('An SES notification reports at least one event.');
  const topic = input[0]!.topic;
  for (const [index, event] of events.entries()) {
    const same = event.type === first.type && event.bounceClass === first.bounceClass && event.messageId === first.messageId;
    if (
      !same ||
      event.trackingId !== first.trackingId ||
      event.stream !== first.stream ||
      input[index]!.topic !== topic ||
      event.occurredAt.getTime() !== first.occurredAt.getTime()
    ) {
      throw invalid(
        'One SES notification is about one message and one event: give its events the same type, messageId, trackingId, stream, topic and occurredAt.',
      );
    }
  }
  const family = options.family ?? 'event-publishing';
  if (family === 'feedback' && !['bounced', 'complained', 'delivered'].includes(first.type)) {
    throw invalid(`SES identity feedback notifications report bounces, complaints and deliveries only, not ${first.type} events.`);
  }
  const carrier = options.carrier ?? 'header';
  const recipients = [...new Set(events.map((event) => event.recipient))];
  const sent: SentMessage = {
    messageId: first.messageId,
    destination: recipients,
    headers: [
      { name: 'From', value: 'Shop <shop@example.com>' },
      { name: 'To', value: recipients.join(', ') },
      { name: 'Subject', value: 'Hello' },
      { name: 'MIME-Version', value: '1.0' },
      ...(first.trackingId !== null && carrier === 'header'
        ? [{ name: SERVICE_ID_HEADER, value: encodeServiceIdHeader(first.trackingId).join(' ') }]
        : []),
      ...(first.stream !== undefined && carrier === 'header' ? [{ name: SERVICE_STREAM_HEADER, value: first.stream }] : []),
    ],
    tags:
      first.trackingId !== null && carrier === 'tags'
        ? Object.fromEntries(sesTrackingTags(first.trackingId).map(({ Name, Value }) => [Name, [Value]]))
        : {},
  };
  if (carrier === 'tags') for (const [name, value] of Object.entries(streamMetadata(first))) sent.tags[name] = [value];
  const notification = sesNotification(sent, sesEventTypes[first.type], {
    family,
    includeHeaders: true,
    occurredAt: first.occurredAt,
    recipients,
    bounceType: first.bounceClass === 'soft' ? 'Transient' : 'Permanent',
    topic,
  });
  // Identity feedback notifications never carry tags: a tracking ID sent only as a tag is lost there.
  const carried =
    family === 'feedback' && carrier === 'tags' ? events.map(({ stream: _lost, ...event }) => ({ ...event, trackingId: null })) : events;
  // An unsubscribe from a topic that is a stream name is recorded in that stream.
  const reported = isStreamName(topic) ? carried.map((event) => ({ ...event, stream: topic })) : carried;
  return { notification, reported };
}

/**
 * The `SubscriptionConfirmation` SNS posts when the endpoint is subscribed to a topic, signed as SNS
 * signs. mailwarden confirms it through `confirmSubscription` of its webhook environment (with the real
 * default, a GET of the `SubscribeURL` on an SNS host: use it against services whose environment you control).
 *
 * @example
 * const request = snsSubscriptionConfirmation({ topicArn: 'arn:aws:sns:us-east-1:123456789012:ses-events' });
 */
export function snsSubscriptionConfirmation(options: SnsSigningOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  const envelope = snsEnvelope(
    `You have chosen to subscribe to the topic ${options.topicArn}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
    {
      ...envelopeOptions(options, now),
      type: 'SubscriptionConfirmation',
    },
  );
  const request = snsRequest(envelope, sharedSecretHeaders({ basic: options.basic }));
  return { provider: 'ses', method: 'POST', headers: request.headers, rawBody: request.rawBody, events: [] };
}

function snsTestWebhook(message: string, events: ReportedEvent[], options: SnsSigningOptions, now: Date): TestWebhook {
  const request = snsRequest(snsEnvelope(message, envelopeOptions(options, now)), sharedSecretHeaders({ basic: options.basic }));
  return { provider: 'ses', method: 'POST', headers: request.headers, rawBody: request.rawBody, events };
}

function envelopeOptions(options: SnsSigningOptions, now: Date): SnsEnvelopeOptions {
  if (typeof options.topicArn !== 'string' || !options.topicArn.startsWith('arn:')) throw invalid('topicArn must be an SNS topic ARN.');
  return {
    topicArn: options.topicArn,
    signatureVersion: options.signatureVersion ?? '1',
    signingCertUrl: options.signingCertUrl ?? testSnsSigner.certificateUrl,
    timestamp: now,
    key: options.signingKey ?? testSnsSigner.privateKey,
  };
}
