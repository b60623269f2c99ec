import { readSesHeaderStream, readSesHeaderTrackingId } from '../carriers/ses-header.js';
import { readSesTagsStream, readSesTagsTrackingId } from '../carriers/ses-tags.js';
import { streamField } from './stream-field.js';
import { isStreamName } from '../stream.js';
import {
  eventDetails,
  smtpStatusIn,
  type BounceClass,
  type DeliveryEvent,
  type DeliveryEventType,
  type EventDetails,
  type ProviderSuppression,
} from '../events/delivery-event.js';
import { MailwardenError } from '../errors.js';
import { checkSharedSecret, unauthorized, type BasicAuthCredentials } from './auth.js';
import { isRecord, stringField } from '../json/record.js';
import { bodyJson, bodyText } from './body.js';
import { hashedEventKey } from './event-key.js';
import type { ProviderWebhook, ProviderWebhookDefinition, WebhookEnvironment } from './provider.js';
import { noticeReceipt, receiptOf, type ItemOutcome, type WebhookReceipt } from './receipt.js';
import { headerValue, type WebhookRequest } from './request.js';
import { createSnsVerifier, parseSnsMessage, snsUrl, type SnsMessage } from './sns.js';

/**
 * How SES webhooks (SNS HTTP/S subscriptions) are authenticated for a project.
 *
 * - `topicArns` (required): the SNS topics that may post. Anyone can point their own topic at the
 *   endpoint and get validly signed messages, so the topic is checked first, before any fetch.
 * - `signatureRequired` (default `true`): every request must carry a valid SNS signature, and raw
 *   message delivery (which has none) is refused. Set `false` only together with `basic`: then
 *   notifications and raw deliveries are accepted on basic auth alone (for hosts that cannot fetch
 *   SNS certificates). A subscription confirmation always needs a valid signature.
 * - `basic` (optional): HTTP basic auth on top, e.g. `https://user:pass@host/...` as the subscription
 *   endpoint. Any listed pair matches, for rotation.
 */
export interface SesWebhookAuth {
  topicArns: readonly string[];
  basic?: readonly BasicAuthCredentials[];
  signatureRequired?: boolean;
}

export interface ParseSesWebhookOptions {
  /**
   * The SNS `MessageId` of the envelope (kept the same on SNS retries), which keys the events.
   * `null` for raw message delivery: events are then keyed by a hash of their identifying fields.
   */
  snsMessageId?: string | null;
}

/**
 * Normalizes one SES notification (the JSON inside the SNS `Message`, or a raw-delivery body) of
 * either family: identity feedback notifications (`notificationType`) and configuration-set event
 * publishing (`eventType`). One event per recipient; open, click, send, reject, rendering failure and
 * subscription events apply to every address of `mail.destination`. Malformed parts become warnings.
 * Throws `invalid_payload` only when the notification is not a JSON object.
 *
 * @example
 * const receipt = parseSesWebhook(JSON.parse(snsMessage.Message), { snsMessageId: snsMessage.MessageId });
 */
export function parseSesWebhook(notification: unknown, options: ParseSesWebhookOptions = {}): WebhookReceipt {
  if (!isRecord(notification)) throw new MailwardenError('invalid_payload', 'The SES notification is not a JSON object.');
  return receiptOf([notificationOutcomes(notification, options)]);
}

/** The events of one notification, one per recipient, and a reason for each part that cannot be used. */
function notificationOutcomes(notification: Record<string, unknown>, options: ParseSesWebhookOptions): ItemOutcome[] {
  const eventType = stringField(notification, 'eventType') ?? stringField(notification, 'notificationType');
  if (eventType === undefined) return ['The notification has neither eventType nor notificationType: it is not from SES.'];
  const detailKey = detailKeys.get(eventType);
  if (detailKey === undefined) return [`SES event type "${eventType}" is not a delivery event mailwarden understands.`];
  const mail = isRecord(notification.mail) ? notification.mail : {};
  const detail = notification[detailKey] ?? (detailRequired.has(eventType) ? undefined : {});
  if (!isRecord(detail)) return [`The ${eventType} notification has no "${detailKey}" object.`];
  const timestamp = validTimestamp(detail.timestamp) ?? validTimestamp(mail.timestamp);
  if (timestamp === undefined) return [`The ${eventType} notification has no valid timestamp.`];

  const messageId = stringField(mail, 'messageId') ?? null;
  // The header can carry every ID and also reaches feedback notifications; tags are the fallback.
  const trackingId = readSesHeaderTrackingId(mail.headers) ?? readSesTagsTrackingId(mail.tags);
  const stream = readSesHeaderStream(mail.headers) ?? readSesTagsStream(mail.tags);
  // An empty id would make every notification share keys; treat it as absent.
  const snsMessageId = options.snsMessageId || null;
  const problems: string[] = [];
  const events = outcomesOf(eventType, detail, mail, (problem) => problems.push(problem)).map((outcome) => {
    const event: DeliveryEvent = {
      provider: 'ses',
      type: outcome.type,
      bounceClass: outcome.bounceClass ?? null,
      providerSuppression: outcome.providerSuppression ?? null,
      messageId,
      recipient: outcome.recipient,
      trackingId,
      ...streamField(outcome.topic ?? stream),
      occurredAt: new Date(timestamp),
      // SNS keeps MessageId on retries; raw delivery has none, so hash (messageId, type, timestamp, recipient).
      // The topic, only when one notification opts out of several, tells its events apart.
      eventKey:
        snsMessageId !== null
          ? `${snsMessageId}:${outcome.recipient}${outcome.topicKey ?? ''}`
          : hashedEventKey([
              messageId,
              eventType,
              timestamp,
              outcome.recipient,
              ...(outcome.topicKey === undefined ? [] : [outcome.topic!]),
            ]),
    };
    if (outcome.details !== undefined) event.details = outcome.details;
    return event;
  });
  return [...events, ...problems];
}

/**
 * The SES webhook receiver. Order of checks: configuration, basic auth (when configured), raw
 * delivery or SNS envelope, SNS headers against the body, TopicArn allowlist, then the signature
 * (which may fetch the certificate; cached per receiver). A subscription confirmation is confirmed
 * through `env.confirmSubscription` only for an allowlisted topic, a valid signature and an SNS-host
 * `SubscribeURL`; an unsubscribe confirmation is acknowledged and ignored.
 *
 * @example
 * const ses = createSesWebhook(env);
 * const receipt = await ses.receive(request, { topicArns: ['arn:aws:sns:us-east-1:123456789012:ses-events'] });
 */
export function createSesWebhook(env: WebhookEnvironment): ProviderWebhook<SesWebhookAuth> {
  const sns = createSnsVerifier(env.fetchCertificate);
  return {
    provider: 'ses',
    async receive(request, auth) {
      // A string here would make includes() a substring test, so only a real list counts.
      const topicArns: readonly string[] = Array.isArray(auth.topicArns) ? auth.topicArns : [];
      const basic = auth.basic ?? [];
      const signatureRequired = auth.signatureRequired ?? true;
      if (topicArns.length === 0) throw unauthorized('No SNS topic is allowlisted for SES webhooks (topicArns).');
      if (!signatureRequired && basic.length === 0) {
        throw unauthorized('SES webhooks with signatureRequired: false need basic auth credentials.');
      }
      if (basic.length > 0) checkSharedSecret(request, { basic });
      const topicHeader = headerValue(request, 'x-amz-sns-topic-arn');

      if (headerValue(request, 'x-amz-sns-rawdelivery')?.trim().toLowerCase() === 'true') {
        if (signatureRequired) {
          throw unauthorized('SNS raw message delivery carries no signature: accept it with signatureRequired: false and basic auth.');
        }
        if (topicHeader === undefined || !topicArns.includes(topicHeader)) throw unauthorized('The SNS topic is not allowlisted.');
        return receiptForMessage(bodyText(request.rawBody), null);
      }

      const message = parseSnsMessage(bodyJson(request.rawBody));
      checkSnsHeaders(request, message);
      if (!topicArns.includes(message.TopicArn)) throw unauthorized(`The SNS topic ${message.TopicArn} is not allowlisted.`);
      if (signatureRequired || message.Type === 'SubscriptionConfirmation') await sns.verify(message);

      switch (message.Type) {
        case 'SubscriptionConfirmation': {
          const subscribeUrl = snsUrl(message.SubscribeURL);
          if (subscribeUrl === null) throw unauthorized('The SNS SubscribeURL is not an https URL on an SNS host.');
          try {
            await env.confirmSubscription(subscribeUrl.href);
          } catch (error) {
            throw new MailwardenError('verification_unavailable', 'Could not confirm the SNS subscription; SNS will retry.', {
              cause: error,
            });
          }
          return noticeReceipt('subscription_confirmed');
        }
        case 'UnsubscribeConfirmation':
          return noticeReceipt('unsubscribe_confirmation');
        case 'Notification':
          return receiptForMessage(message.Message, message.MessageId);
      }
    },
  };
}

/** SNS sends the basic credentials of an `https://user:pass@…` endpoint only after a 401 challenges it. */
export const sesWebhookDefinition: ProviderWebhookDefinition<SesWebhookAuth> = { basicChallenge: true, createReceiver: createSesWebhook };

/** The object SES puts next to `mail`: the event type in lower camel case, except Rendering Failure. */
const detailKeys = new Map([
  ['Bounce', 'bounce'],
  ['Complaint', 'complaint'],
  ['Delivery', 'delivery'],
  ['DeliveryDelay', 'deliveryDelay'],
  ['Send', 'send'],
  ['Reject', 'reject'],
  ['Open', 'open'],
  ['Click', 'click'],
  ['Rendering Failure', 'failure'],
  ['Subscription', 'subscription'],
]);

/** Event types whose object names the recipients; the others fall back to `mail.destination`. */
const detailRequired = new Set(['Bounce', 'Complaint', 'Delivery', 'DeliveryDelay']);

/**
 * SES's one-off notice after an event destination is set up: "Successfully validated SNS topic for
 * Amazon SES event publishing." Its `Message` is this text, not JSON.
 */
const VALIDATION_NOTICE = 'Successfully validated SNS topic';

interface Outcome {
  recipient: string;
  type: DeliveryEventType;
  bounceClass?: BounceClass;
  providerSuppression?: ProviderSuppression;
  details?: EventDetails | undefined;
  /** A subscription event's topic, when it is a stream name: the unsubscribe's stream, beside the carrier's. */
  topic?: string;
  /** `:<topic>`, when one notification opts out of several topics: what keeps their events apart. */
  topicKey?: string;
}

function receiptForMessage(text: string, snsMessageId: string | null): WebhookReceipt {
  if (text.trimStart().startsWith(VALIDATION_NOTICE)) return noticeReceipt('ping');
  let notification: unknown;
  try {
    notification = JSON.parse(text);
  } catch {
    throw new MailwardenError('invalid_payload', 'The SNS Message is not JSON.');
  }
  return parseSesWebhook(notification, { snsMessageId });
}

/** SNS repeats the type, id and topic in headers; a request where they differ from the body was tampered with. */
function checkSnsHeaders(request: WebhookRequest, message: SnsMessage): void {
  const pairs = [
    ['x-amz-sns-message-type', message.Type],
    ['x-amz-sns-message-id', message.MessageId],
    ['x-amz-sns-topic-arn', message.TopicArn],
  ] as const;
  for (const [name, value] of pairs) {
    const header = headerValue(request, name);
    if (header !== undefined && header !== value) throw unauthorized(`The ${name} header does not match the SNS message.`);
  }
}

function outcomesOf(
  eventType: string,
  detail: Record<string, unknown>,
  mail: Record<string, unknown>,
  skip: (message: string) => void,
): Outcome[] {
  const destination = (): string[] => addresses(mail.destination, 'mail.destination', skip);
  switch (eventType) {
    case 'Bounce': {
      const bounceType = stringField(detail, 'bounceType') ?? 'Undetermined';
      const subType = stringField(detail, 'bounceSubType') ?? 'Undetermined';
      const kind = bounceKind(bounceType, subType);
      return recipientEntries(detail.bouncedRecipients, 'bounce.bouncedRecipients', skip).map(({ recipient, entry }) => ({
        recipient,
        ...kind,
        details: eventDetails({
          smtpStatus: stringField(entry, 'status') ?? smtpStatusIn(entry.diagnosticCode),
          diagnostic: entry.diagnosticCode,
          bounceClassification: `${bounceType}/${subType}`,
          ...(kind.type === 'rejected' ? { rejectReason: subType } : {}),
        }),
      }));
    }
    case 'Complaint': {
      const feedbackType = stringField(detail, 'complaintFeedbackType');
      const subType = stringField(detail, 'complaintSubType');
      const kind: Pick<Outcome, 'type' | 'providerSuppression'> =
        // SES did not send: the address is on the account-level suppression list for a complaint.
        subType === 'OnAccountSuppressionList'
          ? { type: 'rejected', providerSuppression: 'complaint' }
          : feedbackType === 'not-spam'
            ? { type: 'unknown' }
            : { type: 'complained' };
      const details = eventDetails({ feedbackType, ...(kind.type === 'rejected' ? { rejectReason: subType } : {}) });
      return recipientEntries(detail.complainedRecipients, 'complaint.complainedRecipients', skip).map(({ recipient }) => ({
        recipient,
        ...kind,
        details,
      }));
    }
    case 'Delivery':
      return withDetails(addresses(detail.recipients, 'delivery.recipients', skip), 'delivered', {
        smtpStatus: smtpStatusIn(detail.smtpResponse),
        diagnostic: detail.smtpResponse,
      });
    case 'DeliveryDelay': {
      const delayType = stringField(detail, 'delayType');
      return recipientEntries(detail.delayedRecipients, 'deliveryDelay.delayedRecipients', skip).map(({ recipient, entry }) => {
        const details = eventDetails({
          smtpStatus: stringField(entry, 'status') ?? smtpStatusIn(entry.diagnosticCode),
          diagnostic: entry.diagnosticCode,
          bounceClassification: delayType,
        });
        return { recipient, type: 'deferred', details };
      });
    }
    case 'Send':
      return withDetails(destination(), 'sent', {});
    case 'Reject':
      return withDetails(destination(), 'rejected', { rejectReason: detail.reason });
    case 'Open':
      return withDetails(destination(), 'opened', { userAgent: detail.userAgent });
    case 'Click':
      return withDetails(destination(), 'clicked', { url: detail.link, userAgent: detail.userAgent });
    case 'Rendering Failure':
      // The template did not render, so SES sent nothing: the message was refused, not lost.
      return withDetails(destination(), 'rejected', { rejectReason: stringField(detail, 'errorMessage') ?? detail.templateName });
    default: {
      // Subscription (SES list management): one unsubscribe per topic newly opted out of that is a stream
      // name (docs/providers/ses.md#unsubscribes); else one in the message's stream.
      if (!unsubscribes(detail)) return withDetails(destination(), 'unknown', {});
      const recipients = destination();
      const topics = streamTopics(detail);
      if (topics.length === 0) return withDetails(recipients, 'unsubscribed', {});
      return recipients.flatMap((recipient) =>
        topics.map(
          (topic): Outcome => ({ recipient, type: 'unsubscribed', topic, ...(topics.length > 1 ? { topicKey: `:${topic}` } : {}) }),
        ),
      );
    }
  }
}

function bounceKind(bounceType: string, subType: string): Pick<Outcome, 'type' | 'bounceClass' | 'providerSuppression'> {
  if (bounceType === 'Permanent' && (subType === 'OnAccountSuppressionList' || subType === 'Suppressed')) {
    // SES did not send: the address is on its account-level or global bounce list (docs/decisions.md#automatic-suppression).
    return { type: 'rejected', providerSuppression: 'bounce' };
  }
  if (bounceType === 'Permanent') return { type: 'bounced', bounceClass: 'hard' };
  if (bounceType === 'Transient') return { type: 'bounced', bounceClass: 'soft' };
  return { type: 'bounced', bounceClass: 'undetermined' };
}

/** A subscription event unsubscribes when it opts out of everything, or newly opts out of a topic. */
function unsubscribes(subscription: Record<string, unknown>): boolean {
  const next = isRecord(subscription.newTopicPreferences) ? subscription.newTopicPreferences : {};
  return next.unsubscribeAll === true || newlyOptedOut(subscription).length > 0;
}

/** The topics a subscription event newly opts out of, in the order of its new preferences. */
function newlyOptedOut(subscription: Record<string, unknown>): unknown[] {
  const next = isRecord(subscription.newTopicPreferences) ? subscription.newTopicPreferences : {};
  const previous = isRecord(subscription.oldTopicPreferences) ? subscription.oldTopicPreferences : {};
  const optedOut = (preferences: Record<string, unknown>): unknown[] =>
    (Array.isArray(preferences.topicSubscriptionStatus) ? preferences.topicSubscriptionStatus : [])
      .filter((topic) => isRecord(topic) && topic.subscriptionStatus === 'OptOut')
      .map((topic) => (topic as Record<string, unknown>).topicName);
  const before = new Set(optedOut(previous));
  return [...new Set(optedOut(next))].filter((topic) => !before.has(topic));
}

/**
 * The streams an unsubscribe names: the topics it newly opts out of that are stream names. None for an
 * opt-out of the whole contact list (`unsubscribeAll`) or of topics named otherwise: the message's stream
 * holds it then.
 */
function streamTopics(subscription: Record<string, unknown>): string[] {
  const next = isRecord(subscription.newTopicPreferences) ? subscription.newTopicPreferences : {};
  if (next.unsubscribeAll === true) return [];
  return newlyOptedOut(subscription).filter(isStreamName);
}

function withDetails(recipients: string[], type: DeliveryEventType, raw: Parameters<typeof eventDetails>[0]): Outcome[] {
  const details = eventDetails(raw);
  return recipients.map((recipient) => (details === undefined ? { recipient, type } : { recipient, type, details }));
}

/** A list of address strings (`delivery.recipients`, `mail.destination`); bad entries are skipped with a warning. */
function addresses(list: unknown, path: string, skip: (message: string) => void): string[] {
  if (!Array.isArray(list) || list.length === 0) {
    skip(`${path} is missing or empty.`);
    return [];
  }
  const result: string[] = [];
  list.forEach((entry, i) => {
    if (typeof entry === 'string' && entry !== '') result.push(entry);
    else skip(`${path}[${i}] is not an address.`);
  });
  return result;
}

/** A list of `{ emailAddress, ... }` (bounced, complained, delayed recipients). */
function recipientEntries(
  list: unknown,
  path: string,
  skip: (message: string) => void,
): { recipient: string; entry: Record<string, unknown> }[] {
  if (!Array.isArray(list) || list.length === 0) {
    skip(`${path} is missing or empty.`);
    return [];
  }
  const result: { recipient: string; entry: Record<string, unknown> }[] = [];
  list.forEach((entry, i) => {
    const recipient = isRecord(entry) ? stringField(entry, 'emailAddress') : undefined;
    if (isRecord(entry) && recipient !== undefined) result.push({ recipient, entry });
    else skip(`${path}[${i}] has no emailAddress.`);
  });
  return result;
}

function validTimestamp(value: unknown): string | undefined {
  return typeof value === 'string' && !Number.isNaN(new Date(value).getTime()) ? value : undefined;
}
