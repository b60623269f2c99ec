import { randomUUID } from 'node:crypto';
import { postmarkRecordIdDigits, postmarkRequest } from '../../src/testing/postmark.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Postmark's API answers with an error (422 "Invalid metadata content", 403 `$.Metadata`) instead of sending. */
export class PostmarkRefusal extends Error {}

export interface PostmarkDeliveryOptions {
  /** Which webhook reports the message. Bounce records carry a numeric `ID`, often above 2^53. */
  record: 'Delivery' | 'Bounce';
  /** .NET serializers may write non-ASCII as `\uXXXX` escapes; both forms are valid JSON. */
  escapeNonAscii: boolean;
  /** The `HttpAuth` credentials configured on the webhook; sent as basic auth. */
  credentials: { username: string; password: string };
}

export interface PostmarkPost {
  request: WebhookRequest;
  messageId: string;
  /** The record's `ID` as Postmark wrote it, digits only (Bounce records). */
  id?: string;
}

/**
 * Plays Postmark: validates a message (or a batch, an array of them) the way `POST /email` and
 * `/email/batch` do for `Metadata` (at most 10 fields, keys of 1–20 characters not repeated but for case,
 * values strings of at most 80 characters), and produces one webhook POST per message.
 */
export function deliverPostmarkMessages(messages: unknown, options: PostmarkDeliveryOptions): PostmarkPost[] {
  const batch = Array.isArray(messages) ? messages : [messages];
  return batch.map((message, index) => {
    if (!isPlainObject(message)) throw new PostmarkRefusal(`message ${index} is not an object`);
    const to = message['To'];
    if (typeof to !== 'string' || !to.includes('@')) throw new PostmarkRefusal('To is required');
    const metadata = checkMetadata(message['Metadata']);
    const messageId = randomUUID();
    const id = postmarkRecordIdDigits();
    const record =
      options.record === 'Delivery'
        ? {
            RecordType: 'Delivery',
            ServerID: 23,
            MessageStream: 'outbound',
            MessageID: messageId,
            Recipient: to,
            Tag: '',
            DeliveredAt: '2026-01-01T00:00:00.1234567Z',
            Details: 'smtp;250 OK',
            Metadata: metadata,
          }
        : {
            RecordType: 'Bounce',
            ID: '__ID__',
            Type: 'HardBounce',
            TypeCode: 1,
            Name: 'Hard bounce',
            MessageID: messageId,
            Email: to,
            BouncedAt: '2026-01-01T00:00:00Z',
            Inactive: true,
            Metadata: metadata,
          };
    let text = JSON.stringify(record).replace('"__ID__"', id);
    if (options.escapeNonAscii) text = text.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const request = postmarkRequest(text, [], { basic: options.credentials });
    return { messageId, ...(options.record === 'Bounce' ? { id } : {}), request };
  });
}

function checkMetadata(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw new PostmarkRefusal('Invalid request field(s): $.Metadata');
  const entries = Object.entries(value);
  if (entries.length > 10) throw new PostmarkRefusal('Invalid metadata content: at most 10 fields');
  const seen = new Set<string>();
  for (const [key, field] of entries) {
    if (key.length === 0 || key.length > 20) throw new PostmarkRefusal('Field names are limited to 20 characters');
    if (seen.has(key.toLowerCase())) throw new PostmarkRefusal(`Duplicate metadata key ${key} (keys are case-insensitive)`);
    seen.add(key.toLowerCase());
    // .NET string length counts UTF-16 code units, never fewer than the characters.
    if (typeof field !== 'string') throw new PostmarkRefusal('Invalid request field(s): $.Metadata');
    if (field.length > 80) throw new PostmarkRefusal('Field values are limited to 80 characters');
  }
  return value as Record<string, string>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
