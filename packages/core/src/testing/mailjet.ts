import { randomInt, randomUUID } from 'node:crypto';
import { attachMailjetTrackingId } from '../carriers/mailjet.js';
import { SERVICE_STREAM_KEY } from '../carriers/stream-carrier.js';
import {
  encoder,
  invalid,
  payloadText,
  reportEvents,
  requestTime,
  sharedSecretHeaders,
  unixSeconds,
  type ReportedEvent,
  type SharedSecretCredentials,
  type TestPayload,
  type TestWebhook,
} from './test-event.js';

/**
 * Mailjet's event webhooks as it posts them: a JSON array of the events of the last second ("group
 * events", version 2) or one bare event per POST (version 1), with the basic credentials of the webhook
 * URL (Mailjet signs nothing). `MessageID` is written as the bare integer Mailjet sends, above 2^53.
 */

/** The POST of one body, authenticated with `credentials`. */
export function mailjetRequest(bodyText: string, events: ReportedEvent[], credentials: SharedSecretCredentials | undefined): TestWebhook {
  return {
    provider: 'mailjet',
    method: 'POST',
    headers: { 'content-type': 'application/json', ...sharedSecretHeaders(credentials) },
    rawBody: encoder.encode(bodyText),
    events,
  };
}

/** A Mailjet `MessageID`: 17 digits, so above 2^53 as Mailjet's are, as the exact decimal string. */
export function mailjetMessageIdDigits(): string {
  return `1${randomInt(0, 2 ** 47)
    .toString()
    .padStart(16, '0')}`;
}

export interface MailjetWebhookOptions {
  /** The basic credentials of the webhook URL, as the project is configured with them. */
  auth?: SharedSecretCredentials | undefined;
  /** When Mailjet posts; the default time of events. Default now. */
  signedAt?: Date | undefined;
  /** `false` posts one bare event per request (version 1), so exactly one event; default `true`, an array. */
  grouped?: boolean | undefined;
}

/**
 * The POST Mailjet makes for `events` (any number, of any messages, as one grouped array), each message's
 * tracking ID in `Payload` as `attachMailjetTrackingId` writes it into `EventPayload`. `payload` posts a
 * body given as is. Mailjet has no webhook for a message merely sent: its `sent` is the receiving
 * server's acceptance, reported as `delivered`.
 *
 * @example
 * const request = mailjetWebhook({
 *   auth: { basic: { username: 'mailjet', password: process.env.MAILJET_WEBHOOK_PASSWORD! } },
 *   events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
 * });
 */
export function mailjetWebhook(options: TestPayload & MailjetWebhookOptions): TestWebhook {
  const now = requestTime(options.signedAt);
  if (options.events === undefined) return mailjetRequest(payloadText(options.payload), [], options.auth);
  const events = reportEvents('mailjet', options.events, { now, seconds: true, messageId: mailjetMessageIdDigits });
  for (const event of events) {
    if (event.type === 'sent') throw invalid('Mailjet has no webhook for a message merely sent; its sent event is delivered.');
  }
  if (options.grouped === false && events.length !== 1) {
    throw invalid('Ungrouped Mailjet webhooks (version 1) post exactly one event each.');
  }
  const items = events.map((event) => mailjetItemText(event));
  return mailjetRequest(options.grouped === false ? items[0]! : `[${items.join(',')}]`, events, options.auth);
}

/** One event's JSON text, `MessageID` as a bare integer literal (JSON.stringify cannot write one past 2^53). */
function mailjetItemText(event: ReportedEvent): string {
  const item: Record<string, unknown> = {
    event: eventName(event),
    time: unixSeconds(event.occurredAt),
    MessageID: MESSAGE_ID_MARK,
    Message_GUID: randomUUID(),
    email: event.recipient,
    mj_campaign_id: 0,
    mj_contact_id: randomInt(1, 2 ** 31),
    customcampaign: '',
    CustomID: '',
    Payload: payloadOf(event),
    ...detailsOf(event),
  };
  // Mailjet's MessageID is an integer; a test's own non-numeric messageId is written as a string.
  const messageId = /^(0|[1-9]\d{0,1023})$/.test(event.messageId) ? event.messageId : JSON.stringify(event.messageId);
  return JSON.stringify(item).replace(`"${MESSAGE_ID_MARK}"`, messageId);
}

const MESSAGE_ID_MARK = 'mailwarden-mailjet-message-id';

function payloadOf(event: ReportedEvent): string {
  if (event.trackingId === null) return event.stream === undefined ? '' : JSON.stringify({ [SERVICE_STREAM_KEY]: event.stream });
  const message = attachMailjetTrackingId<{ EventPayload?: string }>({}, event.trackingId, { stream: event.stream ?? null });
  return message.EventPayload ?? '';
}

function eventName(event: ReportedEvent): string {
  switch (event.type) {
    case 'sent':
    case 'delivered':
      return 'sent';
    case 'deferred':
    case 'bounced':
      return 'bounce';
    case 'complained':
      return 'spam';
    case 'rejected':
      return 'blocked';
    case 'opened':
      return 'open';
    case 'clicked':
      return 'click';
    case 'unsubscribed':
      return 'unsub';
  }
}

function detailsOf(event: ReportedEvent): Record<string, unknown> {
  const reader = { ip: '192.0.2.1', geo: 'US', agent: 'Mozilla/5.0' };
  switch (event.type) {
    case 'sent':
    case 'delivered':
      return { mj_message_id: event.messageId, smtp_reply: '250 2.0.0 OK queued as 4ZxY' };
    case 'deferred':
      return {
        blocked: false,
        hard_bounce: false,
        error_related_to: 'domain',
        error: 'greylisted',
        comment: '451 4.7.1 Greylisted, try again later',
      };
    case 'bounced':
      return event.bounceClass === 'soft'
        ? { blocked: false, hard_bounce: false, error_related_to: 'recipient', error: 'quota exceeded', comment: '452 4.2.2 Mailbox full' }
        : {
            blocked: true,
            hard_bounce: true,
            error_related_to: 'recipient',
            error: 'user unknown',
            comment: `550 5.1.1 <${event.recipient}>: Recipient address rejected: User unknown`,
          };
    case 'complained':
      return { source: 'JMRPP' };
    case 'rejected':
      return { error_related_to: 'recipient', error: 'blacklisted' };
    case 'opened':
      return reader;
    case 'clicked':
      return { ...reader, url: 'https://example.com/spring' };
    case 'unsubscribed':
      return { ...reader, mj_list_id: randomInt(1, 100_000) };
  }
}
