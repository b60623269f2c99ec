import { randomUUID } from 'node:crypto';
import { attachResendTrackingId, type ResendTag } from '../carriers/resend.js';
import { resendSignature, resendSigningKey } from '../webhooks/resend.js';
import {
  encoder,
  invalid,
  payloadText,
  reportEvents,
  requestTime,
  unixSeconds,
  type ReportedEvent,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Resend's webhooks as it posts them: one event per POST, signed as Svix signs (`svix-id`,
 * `svix-timestamp`, `svix-signature` of `v1,<base64 HMAC-SHA256>` over `id.timestamp.body`).
 */

export interface ResendWebhookOptions {
  /** The endpoint's signing secret (`whsec_…`), as the project is configured with it (the first of a list). */
  signingSecret: string | readonly string[];
  /** When Resend posts; the default time of the event. Default now. */
  signedAt?: Date | undefined;
  /** The `svix-id`; default a new `msg_…`. A retry of one webhook message keeps it. */
  svixId?: string | undefined;
}

/** The POST of a body text, signed with `secret` as Resend (Svix) signs. */
export function resendRequest(bodyText: string, events: ReportedEvent[], secret: string, signedAt: Date, svixId?: string): TestWebhook {
  const id = svixId ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const key = resendSigningKey(secret);
  if (key === undefined) throw invalid('The Resend signing secret is not whsec_ followed by base64.');
  const timestamp = String(unixSeconds(signedAt));
  const rawBody = encoder.encode(bodyText);
  const signature = `v1,${resendSignature(key, id, timestamp, rawBody).toString('base64')}`;
  return {
    provider: 'resend',
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Svix-Webhooks/1.0',
      'svix-id': id,
      'svix-timestamp': timestamp,
      'svix-signature': signature,
    },
    rawBody,
    events,
  };
}

/**
 * The POST Resend makes for one event (Resend posts each event alone), the tracking ID carried as
 * `attachResendTrackingId` carries it (tags, or the `X-Service-Id` header echoed in `data.headers`).
 * `payload` posts a body given as is, signed anew. Resend has no unsubscribe event.
 *
 * @example
 * const request = resendWebhook({
 *   signingSecret: process.env.RESEND_WEBHOOK_SECRET!,
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function resendWebhook(options: TestPayload & ResendWebhookOptions): TestWebhook {
  const secret = typeof options.signingSecret === 'string' ? options.signingSecret : options.signingSecret[0];
  if (secret === undefined) throw invalid('The Resend configuration names no signing secret.');
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return resendRequest(payloadText(options.payload), [], secret, now, options.svixId);
  const events = reportEvents('resend', options.events, { now, seconds: false, messageId: randomUUID });
  if (events.length !== 1) throw invalid(`Resend posts one event per request, not ${events.length}: build one request per event.`);
  const event = events[0]!;
  if (event.type === 'unsubscribed') throw invalid("Resend reports no unsubscribe: record it through mailwarden's one-click link.");
  return resendRequest(JSON.stringify(bodyOf(event)), [event], secret, now, options.svixId);
}

const eventTypes: Record<Exclude<ReportedEvent['type'], 'unsubscribed'>, string> = {
  sent: 'email.sent',
  delivered: 'email.delivered',
  deferred: 'email.delivery_delayed',
  bounced: 'email.bounced',
  complained: 'email.complained',
  rejected: 'email.suppressed',
  opened: 'email.opened',
  clicked: 'email.clicked',
};

function bodyOf(event: ReportedEvent): Record<string, unknown> {
  const carried =
    event.trackingId === null
      ? { tags: [] as ResendTag[], headers: {} as Record<string, string> }
      : attachResendTrackingId({ tags: [] as ResendTag[], headers: {} as Record<string, string> }, event.trackingId, {
          stream: event.stream ?? null,
        });
  const tags: Record<string, string> = Object.fromEntries(carried.tags.map((tag) => [tag.name, tag.value]));
  if (event.trackingId === null && event.stream !== undefined) tags['service_stream'] = event.stream;
  const data: Record<string, unknown> = {
    email_id: event.messageId,
    created_at: event.occurredAt.toISOString().replace('Z', '+00:00'),
    from: 'News <news@example.com>',
    to: [event.recipient],
    subject: 'Hello',
    tags,
    headers: Object.entries(carried.headers).map(([name, value]) => ({ name, value })),
  };
  switch (event.type) {
    case 'bounced':
      data['bounce'] =
        event.bounceClass === 'soft'
          ? { type: 'Transient', subType: 'MailboxFull', message: 'The mailbox is full.', diagnosticCode: ['smtp; 452 4.2.2 Mailbox full'] }
          : {
              type: 'Permanent',
              subType: 'General',
              message: "The recipient's email provider sent a hard bounce message.",
              diagnosticCode: ['smtp; 550 5.1.1 user unknown'],
            };
      break;
    case 'rejected':
      data['suppressed'] = { type: 'OnAccountSuppressionList', message: 'The address is on the suppression list.' };
      break;
    case 'opened':
      data['open'] = { ipAddress: '192.0.2.1', timestamp: event.occurredAt.toISOString(), userAgent: 'Mozilla/5.0' };
      break;
    case 'clicked':
      data['click'] = {
        ipAddress: '192.0.2.1',
        link: 'https://example.com/spring',
        timestamp: event.occurredAt.toISOString(),
        userAgent: 'Mozilla/5.0',
      };
      break;
    default:
      break;
  }
  return { type: eventTypes[event.type as keyof typeof eventTypes], created_at: event.occurredAt.toISOString(), data };
}
