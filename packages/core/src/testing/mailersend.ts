import { randomBytes } from 'node:crypto';
import { MAILERSEND_STREAM_TAG_PREFIX, mailerSendTrackingTags } from '../carriers/mailersend.js';
import { MAILERSEND_TEST_SECRET, mailerSendSignature } from '../webhooks/mailersend.js';
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
 * MailerSend's activity webhooks as it posts them: one activity per POST, its JSON with every `/`
 * escaped as `\/`, signed in the `Signature` header with the hex HMAC-SHA256 of those bytes under the
 * webhook's signing secret. Version 2 (the current flat `data`) by default, or version 1.
 */

/** MailerSend's ids: 24 hex digits (MongoDB object ids). */
function objectId(): string {
  return randomBytes(12).toString('hex');
}

/** The POST of one body's JSON text as MailerSend writes it (`/` as `\/`), signed with `secret`. */
export function mailerSendRequest(bodyText: string, events: ReportedEvent[], secret: string): TestWebhook {
  const rawBody = encoder.encode(bodyText.replaceAll('/', '\\/'));
  return {
    provider: 'mailersend',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'MailerSend-Webhooks',
      signature: mailerSendSignature(rawBody, secret),
    },
    rawBody,
    events,
  };
}

export interface MailerSendWebhookOptions {
  /** The webhook's signing secret, as the project is configured with it (the first of a list). */
  signingSecret: string;
  /** The webhook's payload version: 2 (default, flat `data`) or 1 (`data.email`, `data.morph`). */
  version?: 1 | 2 | undefined;
  /** When MailerSend posts; the default time of the event. Default now. */
  signedAt?: Date | undefined;
}

/**
 * The POST MailerSend makes for one event (it posts each activity alone), the tracking ID and stream in
 * the tags `attachMailerSendTrackingId` writes. `payload` posts a body given as is (a string verbatim,
 * before `/` is escaped). A `rejected` event is MailerSend's `suppressed` activity.
 *
 * @example
 * const request = mailerSendWebhook({
 *   signingSecret: process.env.MAILERSEND_WEBHOOK_SECRET!,
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function mailerSendWebhook(options: TestPayload & MailerSendWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return mailerSendRequest(payloadText(options.payload), [], options.signingSecret);
  const version = options.version ?? 2;
  // Version 2 dates activities to the second; version 1 to the microsecond (milliseconds here).
  const events = reportEvents('mailersend', options.events, { now, seconds: version === 2, messageId: objectId });
  if (events.length !== 1) throw invalid(`MailerSend posts one activity per request, not ${events.length}: build one request per event.`);
  const event = events[0]!;
  return mailerSendRequest(JSON.stringify(version === 2 ? activityV2(event) : activityV1(event)), [event], options.signingSecret);
}

/**
 * The `webhook.test` ping MailerSend posts when a webhook is created or updated, signed with its public
 * test secret: answered 2xx, recorded as nothing.
 */
export function mailerSendPing(options: { signedAt?: Date | undefined } = {}): TestWebhook {
  const body = { type: 'webhook.test', message: 'This is a ping test message', created_at: microseconds(requestTime(options.signedAt)) };
  return mailerSendRequest(JSON.stringify(body), [], MAILERSEND_TEST_SECRET);
}

/** `2026-09-12T18:42:56.123000Z`: MailerSend's six fraction digits. */
function microseconds(date: Date): string {
  return date.toISOString().replace('Z', '000Z');
}

/** MailerSend's activity name (`data.type`) for each event, by payload version. */
function activityType(event: ReportedEvent, version: 1 | 2): string {
  switch (event.type) {
    case 'bounced':
      return event.bounceClass === 'soft' ? 'soft_bounced' : 'hard_bounced';
    case 'complained':
      return version === 2 ? 'spam_complaints' : 'spam_complaint';
    case 'rejected':
      return 'suppressed';
    default:
      return event.type;
  }
}

const HARD_REASON = '550 5.1.1 The email account that you tried to reach does not exist';
const SOFT_REASON = '452 4.2.2 Mailbox full';

function tagsOf(event: ReportedEvent): string[] {
  if (event.trackingId !== null) return mailerSendTrackingTags(event.trackingId, { stream: event.stream });
  return event.stream === undefined ? [] : [`${MAILERSEND_STREAM_TAG_PREFIX}${event.stream}`];
}

function activityV2(event: ReportedEvent): Record<string, unknown> {
  const type = activityType(event, 2);
  const meta: Record<string, unknown> | [] =
    event.type === 'bounced'
      ? event.bounceClass === 'soft'
        ? { bounce_reason: SOFT_REASON, bounce_code: 452, bounce_type: 'soft' }
        : { bounce_reason: HARD_REASON, bounce_code: 550, bounce_type: 'hard' }
      : event.type === 'rejected'
        ? { suppression_reason: 'on_hold' }
        : event.type === 'unsubscribed'
          ? { unsubscribe_reason: 'NO_LONGER_WANT' }
          : event.type === 'opened' || event.type === 'clicked'
            ? {
                ip: '192.0.2.1',
                country: 'US',
                user_agent: 'Mozilla/5.0',
                device_type: 'desktop',
                browser: 'Chrome',
                ...(event.type === 'clicked' ? { url: 'https://example.com/spring' } : {}),
              }
            : [];
  // Tags only when some: the other activities without tags leave the field out (a capture of anymail's).
  const tags = tagsOf(event);
  return {
    type: `activity.${type}`,
    created_at: microseconds(event.occurredAt),
    data: {
      id: objectId(),
      domain_id: 'yv69oxl5kl785kw2',
      message_id: event.messageId,
      email_id: objectId(),
      type,
      subject: 'Hello',
      recipient: event.recipient,
      ...(tags.length === 0 ? {} : { tags }),
      meta,
    },
    webhook_id: 'x2p0347z7y8lzdrn',
  };
}

function activityV1(event: ReportedEvent): Record<string, unknown> {
  const type = activityType(event, 1);
  const at = microseconds(event.occurredAt);
  const morph =
    event.type === 'bounced' || event.type === 'deferred'
      ? { object: 'recipient_bounce', reason: event.bounceClass === 'hard' ? HARD_REASON : SOFT_REASON }
      : event.type === 'complained'
        ? { object: 'spam_complaint', reason: null }
        : event.type === 'unsubscribed'
          ? { object: 'recipient_unsubscribe', reason: 'option_3', readable_reason: 'I get too many emails' }
          : event.type === 'opened'
            ? { object: 'open', ip: '192.0.2.1' }
            : event.type === 'clicked'
              ? { object: 'click', ip: '192.0.2.1', url: 'https://example.com/spring' }
              : null;
  const tags = tagsOf(event);
  return {
    type: `activity.${type}`,
    domain_id: 'yv69oxl5kl785kw2',
    created_at: at,
    webhook_id: 'x2p0347z7y8lzdrn',
    url: 'https://mailwarden.example.com/projects/demo/webhooks/mailersend',
    data: {
      object: 'activity',
      id: objectId(),
      type,
      created_at: at,
      email: {
        object: 'email',
        id: objectId(),
        created_at: at,
        from: 'news@example.com',
        subject: 'Hello',
        status: event.type === 'bounced' ? 'rejected' : 'delivered',
        tags: tags.length === 0 ? null : tags,
        headers: null,
        message: { object: 'message', id: event.messageId, created_at: at },
        recipient: { object: 'recipient', id: objectId(), email: event.recipient, created_at: at },
      },
      morph,
      template_id: '',
    },
  };
}
