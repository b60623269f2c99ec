import { randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { WebhookRequest } from '../webhooks/request.js';

/**
 * A stand-in for Amazon SES and SNS: it accepts send requests the way the SES APIs do (refusing what
 * they refuse), turns the sent message into the notification SES publishes, and wraps that in an SNS
 * HTTP POST signed like SNS signs, with the test key below.
 */

const fixtures = new URL('../../test/providers/fixtures/ses/', import.meta.url);
/** The test key that plays SNS's signing key, and its certificate (see the notes in the files). */
export const snsSigningKey = readFileSync(new URL('sns-signing-key.pem', fixtures), 'utf8');
export const snsSigningCertificate = readFileSync(new URL('sns-signing-cert.pem', fixtures), 'utf8');
/** The certificate of another key: signatures by `snsSigningKey` must not verify against it. */
export const otherCertificate = readFileSync(new URL('other-cert.pem', fixtures), 'utf8');

export const topicArn = 'arn:aws:sns:us-east-1:123456789012:ses-events';
export const certificateUrl = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';

/** What SES refuses (the real API answers 400 `InvalidParameterValue` / `ValidationException`). */
export class SesRejection extends Error {
  override readonly name = 'SesRejection';
}

/** A message SES accepted: what its notifications will say about it. */
export interface SentMessage {
  messageId: string;
  destination: string[];
  headers: { name: string; value: string }[];
  /** Message tags, as notifications publish them: `{ name: [value] }`. */
  tags: Record<string, string[]>;
}

/** `MessageTag` Name and Value: ASCII letters, digits, `_`, `-`; 1–256 characters (API_MessageTag). */
const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;
/** `MessageHeader` Name: printable ASCII but `:`, 1–126; Value: printable ASCII, 1–870 (API_MessageHeader). */
const HEADER_NAME = /^[!-9;-@A-~]{1,126}$/;
const HEADER_VALUE = /^[ -~]{1,870}$/;
/** `Message.Headers` / `Template.Headers` hold at most 15 entries. */
const MAX_HEADERS = 15;
/** RFC 5322 §2.1.1: a line is at most 998 characters, CRLF excluded. */
const MAX_LINE = 998;

const baseHeaders = (to: string[]): { name: string; value: string }[] => [
  { name: 'From', value: 'Shop <shop@example.com>' },
  { name: 'To', value: to.join(', ') },
  { name: 'Subject', value: 'Hello' },
  { name: 'MIME-Version', value: '1.0' },
];

/** SES v2 `SendEmail` (`@aws-sdk/client-sesv2`): `EmailTags`, `Content.Simple|Template.Headers`. */
export function sesV2SendEmail(request: Record<string, unknown>): SentMessage {
  const destination = destinationOf(request.Destination);
  // The SDK drops fields it does not know (`Tags` is v1's name): they never reach SES.
  const tags = messageTags(request.EmailTags);
  const content = request.Content as Record<string, unknown> | undefined;
  const part = (content?.Simple ?? content?.Template) as Record<string, unknown> | undefined;
  if (part === undefined) throw new SesRejection('Content.Simple or Content.Template is required');
  const extra = part.Headers ?? [];
  if (!Array.isArray(extra) || extra.length > MAX_HEADERS) throw new SesRejection('Headers: at most 15');
  const headers = baseHeaders(destination);
  for (const header of extra as unknown[]) {
    const { Name, Value } = header as Record<string, unknown>;
    if (typeof Name !== 'string' || !HEADER_NAME.test(Name)) throw new SesRejection(`header name ${String(Name)}`);
    if (typeof Value !== 'string' || !HEADER_VALUE.test(Value)) throw new SesRejection(`header value ${JSON.stringify(Value)}`);
    headers.push({ name: Name, value: Value });
  }
  return { messageId: sesMessageId(), destination, headers, tags };
}

/** SES v1 `SendEmail` (`@aws-sdk/client-ses`): tags in `Tags`; no custom headers. */
export function sesV1SendEmail(request: Record<string, unknown>): SentMessage {
  const destination = destinationOf(request.Destination);
  return { messageId: sesMessageId(), destination, headers: baseHeaders(destination), tags: messageTags(request.Tags) };
}

/** SES v1 `SendRawEmail`: the MIME text in `RawMessage.Data`, tags in `Tags`; headers as written. */
export function sesV1SendRawEmail(request: Record<string, unknown>): SentMessage {
  const raw = (request.RawMessage as Record<string, unknown> | undefined)?.Data;
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) throw new SesRejection('RawMessage.Data is required');
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw);
  const headers = mimeHeaders(bytes);
  const to = headers.find((header) => header.name.toLowerCase() === 'to')?.value;
  const destination = Array.isArray(request.Destinations) ? (request.Destinations as string[]) : (to ?? '').split(/,\s*/);
  return { messageId: sesMessageId(), destination, headers, tags: messageTags(request.Tags) };
}

/** A raw MIME message as a mail client would build it, ready for `attachSesHeaderTrackingId`. */
export function mimeMessage(to: string[], newline = '\r\n'): string {
  return [...baseHeaders(to).map(({ name, value }) => `${name}: ${value}`), 'Content-Type: text/plain; charset=UTF-8', '', 'Hello,', '', 'a body line', ''].join(
    newline,
  );
}

export type SesFamily = 'event-publishing' | 'feedback';

/**
 * The notification SES publishes about a sent message. Event publishing carries headers and tags;
 * identity feedback notifications carry headers only when "include original headers" is on, and never tags.
 */
export function sesNotification(
  sent: SentMessage,
  eventType: 'Delivery' | 'Bounce' | 'Open',
  options: { family?: SesFamily; includeHeaders?: boolean } = {},
): Record<string, unknown> {
  const family = options.family ?? 'event-publishing';
  const includeHeaders = options.includeHeaders ?? family === 'event-publishing';
  const mail: Record<string, unknown> = {
    timestamp: '2026-04-01T09:00:00.000Z',
    source: 'shop@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/example.com',
    sendingAccountId: '123456789012',
    messageId: sent.messageId,
    destination: sent.destination,
  };
  if (includeHeaders) Object.assign(mail, { headersTruncated: false, headers: sent.headers, commonHeaders: { to: sent.destination } });
  if (family === 'event-publishing') {
    mail.tags = { 'ses:operation': ['SendEmail'], 'ses:configuration-set': ['tracking'], ...sent.tags };
  }
  const typeKey = family === 'event-publishing' ? 'eventType' : 'notificationType';
  const at = '2026-04-01T09:00:02.000Z';
  switch (eventType) {
    case 'Delivery':
      return { [typeKey]: 'Delivery', mail, delivery: { timestamp: at, processingTimeMillis: 2000, recipients: sent.destination, smtpResponse: '250 ok' } };
    case 'Bounce':
      return {
        [typeKey]: 'Bounce',
        mail,
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: sent.destination.map((emailAddress) => ({ emailAddress, action: 'failed', status: '5.1.1' })),
          timestamp: at,
          feedbackId: randomUUID(),
        },
      };
    case 'Open':
      return { [typeKey]: 'Open', mail, open: { timestamp: at, ipAddress: '192.0.2.1', userAgent: 'test' } };
  }
}

export interface SnsEnvelopeOptions {
  type?: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  topicArn?: string;
  signatureVersion?: '1' | '2';
  signingCertUrl?: string;
  subscribeUrl?: string;
  subject?: string;
  messageId?: string;
  /** The key that signs; SNS's (the test key) unless told otherwise. */
  key?: string;
}

/** An SNS HTTP/S message around `message`, signed the way SNS signs (reference §1.6). */
export function snsEnvelope(message: string, options: SnsEnvelopeOptions = {}): Record<string, string> {
  const type = options.type ?? 'Notification';
  const envelope: Record<string, string> = {
    Type: type,
    MessageId: options.messageId ?? randomUUID(),
    TopicArn: options.topicArn ?? topicArn,
    Message: message,
    Timestamp: '2026-04-01T09:00:03.123Z',
    SignatureVersion: options.signatureVersion ?? '1',
    SigningCertURL: options.signingCertUrl ?? certificateUrl,
  };
  if (type === 'Notification') {
    if (options.subject !== undefined) envelope.Subject = options.subject;
    envelope.UnsubscribeURL = `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${envelope.TopicArn}:${randomUUID()}`;
  } else {
    envelope.Token = '2336412f37fb687f5d51e6e2425dacbba5b0d4d5a8c0e4f7a3f1f7e5d3c2b1a0';
    envelope.SubscribeURL =
      options.subscribeUrl ?? `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${envelope.TopicArn}&Token=${envelope.Token}`;
  }
  envelope.Signature = signEnvelope(envelope, options.key ?? snsSigningKey);
  return envelope;
}

/** Signs with SHA1withRSA (version 1) or SHA256withRSA (version 2) over the fields SNS signs. */
export function signEnvelope(envelope: Record<string, string>, key: string): string {
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
export function snsRequest(envelope: Record<string, string>, headers: Record<string, string> = {}): WebhookRequest {
  return {
    method: 'POST',
    headers: {
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': envelope.Type!,
      'x-amz-sns-message-id': envelope.MessageId!,
      'x-amz-sns-topic-arn': envelope.TopicArn!,
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

function sesMessageId(): string {
  return `0100018e${randomUUID().replaceAll('-', '').slice(0, 8)}-${randomUUID()}-000000`;
}

function destinationOf(destination: unknown): string[] {
  const to = (destination as Record<string, unknown> | undefined)?.ToAddresses;
  return Array.isArray(to) && to.length > 0 ? (to as string[]) : ['ana@example.org'];
}

function messageTags(tags: unknown): Record<string, string[]> {
  if (tags === undefined) return {};
  if (!Array.isArray(tags)) throw new SesRejection('tags must be a list');
  const result: Record<string, string[]> = {};
  for (const tag of tags as unknown[]) {
    const { Name, Value } = tag as Record<string, unknown>;
    if (typeof Name !== 'string' || !TAG_TEXT.test(Name)) throw new SesRejection(`tag name ${JSON.stringify(Name)}`);
    if (typeof Value !== 'string' || !TAG_TEXT.test(Value)) throw new SesRejection(`tag value ${JSON.stringify(Value)}`);
    if (result[Name] !== undefined) throw new SesRejection(`duplicate tag ${Name}`);
    result[Name] = [Value];
  }
  return result;
}

/**
 * The header fields of a raw message as SES reports them: header block in ASCII with lines of at
 * most 998 characters (else refused), folding undone, the value after the colon without leading blanks.
 */
function mimeHeaders(bytes: Buffer): { name: string; value: string }[] {
  const text = bytes.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = end === -1 ? text : text.slice(0, end);
  if (/[^\x00-\x7f]/.test(block)) throw new SesRejection('header block is not ASCII');
  const lines = block.split(/\r?\n/);
  if (lines.some((line) => line.length > MAX_LINE)) throw new SesRejection('header line over 998 characters');
  const headers: { name: string; value: string }[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && headers.length > 0) headers[headers.length - 1]!.value += line;
    else {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new SesRejection(`malformed header line ${JSON.stringify(line)}`);
      headers.push({ name: line.slice(0, colon), value: line.slice(colon + 1).replace(/^[ \t]+/, '') });
    }
  }
  return headers;
}
