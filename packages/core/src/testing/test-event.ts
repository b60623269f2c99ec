import type { WebhookRequest } from '../webhooks/request.js';
import type { Provider } from '../events/delivery-event.js';
import { MailwardenError } from '../errors.js';
import { SERVICE_STREAM_KEY } from '../carriers/stream-carrier.js';
import { assertStreamName } from '../stream.js';

/** The delivery events a test can have a provider report: every `DeliveryEventType` but `unknown`. */
export const testEventTypes = [
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'rejected',
  'opened',
  'clicked',
  'unsubscribed',
] as const;
export type TestEventType = (typeof testEventTypes)[number];

/**
 * One event about one recipient of one sent message, as a test states it. What is left out is made up:
 * a message id in the provider's own format, the time of the request, no tracking ID.
 */
export interface TestEvent {
  type: TestEventType;
  recipient: string;
  /** For `bounced` only: `hard` (the default) or `soft`. */
  bounceClass?: 'hard' | 'soft' | undefined;
  /** The id the provider's send API returned for the message. Events with the same id are about one message. */
  messageId?: string | undefined;
  /** The tracking ID the message was sent with, attached with the provider's carrier; `null` or absent for none. */
  trackingId?: string | null | undefined;
  /** The stream the message was sent in, carried as `service_stream`; `null` or absent for none (`invalid_stream` if not a name). */
  stream?: string | null | undefined;
  /** When it happened; default the request's time. Providers that date events in unix seconds drop the milliseconds. */
  occurredAt?: Date | undefined;
  /**
   * SendGrid, `unsubscribed` only: the unsubscribe group (`asm_group_id`) the recipient left, posted as a
   * `group_unsubscribe`; absent for a global `unsubscribe`. A group the project maps
   * (`unsubscribeGroups`) names the unsubscribe's stream.
   */
  unsubscribeGroup?: number | undefined;
  /**
   * SES, `unsubscribed` only: the contact-list topic the recipient opted out of; absent for an opt-out of
   * the whole list. A topic that is a stream name is the unsubscribe's stream.
   */
  topic?: string | undefined;
  /**
   * Postmark: the record's `MessageStream`; default `outbound`, `null` for none. For an unsubscribe of a
   * message that carried no stream, a stream name here is the unsubscribe's stream.
   */
  messageStream?: string | null | undefined;
}

/**
 * An event exactly as a built request reports it: what mailwarden records when it ingests the request
 * (compare with `messages.list`, or with what `createWebhookIngest` stores).
 */
export interface ReportedEvent {
  provider: Provider;
  type: TestEventType;
  /** `hard` or `soft` for `bounced`, else `null`. */
  bounceClass: 'hard' | 'soft' | null;
  /** As the provider writes it (SparkPost lower-cases addresses). */
  recipient: string;
  messageId: string;
  trackingId: string | null;
  /** The stream, only when the event has one. */
  stream?: string;
  /** To the precision the provider keeps. */
  occurredAt: Date;
}

/**
 * A webhook request as the provider posts it: a `WebhookRequest` for `ingestWebhook`, and what `fetch`
 * needs (`postWebhook` sends it). `events` is what it reports (empty for a payload given as is).
 */
export interface TestWebhook extends WebhookRequest {
  provider: Provider;
  method: 'POST';
  /** Header names in lower case. */
  headers: Record<string, string>;
  rawBody: Uint8Array;
  events: ReportedEvent[];
}

/**
 * What a builder reports: `events` built into the provider's real payload, or `payload`, the provider's
 * JSON document given as is (an object is serialized, a string is sent verbatim), e.g. a captured
 * production body to be signed anew.
 */
export type TestPayload = { events: readonly TestEvent[]; payload?: never } | { payload: unknown; events?: never };

/** Basic credentials, a bearer token and/or secret headers, sent together (Postmark, SparkPost, SNS basic auth). */
export interface SharedSecretCredentials {
  basic?: { username: string; password: string } | undefined;
  bearer?: string | undefined;
  /** Secret headers by name, e.g. `{ 'X-Webhook-Secret': '…' }`. */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** The request headers that present `credentials`. */
export function sharedSecretHeaders(credentials: SharedSecretCredentials | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credentials?.basic !== undefined && credentials.bearer !== undefined) {
    throw invalid('Basic credentials and a bearer token both go in the Authorization header: give one of them.');
  }
  if (credentials?.basic !== undefined) {
    const { username, password } = credentials.basic;
    headers['authorization'] = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  }
  if (credentials?.bearer !== undefined) headers['authorization'] = `Bearer ${credentials.bearer}`;
  for (const [name, value] of Object.entries(credentials?.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

/** Events with their made-up parts filled in, checked: the common first step of every builder. */
export function reportEvents(
  provider: Provider,
  events: readonly TestEvent[],
  options: { now: Date; seconds: boolean; messageId: () => string; recipient?: (address: string) => string },
): ReportedEvent[] {
  if (!Array.isArray(events)) throw invalid('events must be an array of test events.');
  return events.map((event, index) => {
    if (!(testEventTypes as readonly string[]).includes(event?.type)) {
      throw invalid(`events[${index}].type must be one of ${testEventTypes.join(', ')}.`);
    }
    if (typeof event.recipient !== 'string' || event.recipient === '') throw invalid(`events[${index}].recipient must be an address.`);
    if (event.bounceClass !== undefined && (event.type !== 'bounced' || !['hard', 'soft'].includes(event.bounceClass))) {
      throw invalid(`events[${index}].bounceClass is hard or soft, for bounced events only.`);
    }
    const at = event.occurredAt ?? options.now;
    if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw invalid(`events[${index}].occurredAt must be a valid Date.`);
    if ((event.unsubscribeGroup !== undefined || event.topic !== undefined) && event.type !== 'unsubscribed') {
      throw invalid(`events[${index}].unsubscribeGroup and topic are for unsubscribed events only.`);
    }
    if (event.messageId !== undefined && (typeof event.messageId !== 'string' || event.messageId === '')) {
      throw invalid(`events[${index}].messageId must be a non-empty string.`);
    }
    return {
      provider,
      type: event.type,
      bounceClass: event.type === 'bounced' ? (event.bounceClass ?? 'hard') : null,
      recipient: options.recipient?.(event.recipient) ?? event.recipient,
      messageId: event.messageId ?? options.messageId(),
      trackingId: event.trackingId ?? null,
      ...(event.stream == null ? {} : { stream: assertStreamName(event.stream) }),
      occurredAt: options.seconds ? new Date(Math.floor(at.getTime() / 1000) * 1000) : new Date(at.getTime()),
    };
  });
}

/** The `service_stream` entry a carrier's metadata (custom args, user variables, tags) holds for the event, if any. */
export function streamMetadata(event: ReportedEvent): Record<string, string> {
  return event.stream === undefined ? {} : { [SERVICE_STREAM_KEY]: event.stream };
}

/** Unix seconds of a date. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** The time a request is made at: `signedAt` when given, else now. */
export function requestTime(signedAt: Date | undefined): Date {
  return signedAt ?? new Date();
}

/** Every character past ASCII as `\uXXXX`, as Python's `json.dumps` and PHP's `json_encode` write JSON. */
export function escapeNonAscii(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON in ASCII only (`escapeNonAscii`). */
export function asciiJson(value: unknown): string {
  return escapeNonAscii(JSON.stringify(value));
}

/** The text of a payload given as is: a string verbatim, anything else as JSON. */
export function payloadText(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

export function invalid(message: string): MailwardenError {
  return new MailwardenError('invalid_request', message);
}

export const encoder = new TextEncoder();
