import { randomBytes } from 'node:crypto';
import { mandrillRequest, phpJson } from '../../src/testing/mandrill.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Mandrill's `messages/send` answers with an error instead of sending. */
export class MandrillRefusal extends Error {}

/** "each message's metadata is limited to 200 bytes of JSON-encoded data" (the older, smaller figure). */
const METADATA_MAX_BYTES = 200;
const KEY = /^[A-Za-z0-9][A-Za-z0-9_]*$/;

export interface MandrillPostOptions {
  /** The webhook's key and URL as configured at Mandrill: the request is signed with them. */
  webhookKey: string;
  url: string;
  /** The message event every recipient gets. */
  event: string;
  /** PHP's `json_encode` escapes non-ASCII as `\uXXXX` and `/` as `\/`; both forms are valid JSON. */
  escapeNonAscii: boolean;
}

/**
 * Plays Mandrill: validates a send request the way `messages/send` treats metadata (keys alphanumeric or
 * underscore, not starting with one; scalar values; at most 200 bytes of JSON, recipient values merged
 * over the message's), and produces the signed webhook POST reporting one event per recipient.
 */
export function deliverMandrillMessage(
  sendRequest: unknown,
  options: MandrillPostOptions,
): { request: WebhookRequest; messageIds: string[] } {
  if (!isPlainObject(sendRequest) || !isPlainObject(sendRequest['message'])) throw new MandrillRefusal('message is required');
  const message = sendRequest['message'];
  const to = message['to'];
  if (!Array.isArray(to) || to.length === 0) throw new MandrillRefusal('message.to is required');
  const metadata = checkMetadata(message['metadata']);
  const perRecipient = new Map<string, Record<string, unknown>>();
  const recipientMetadata = message['recipient_metadata'];
  if (recipientMetadata !== undefined) {
    if (!Array.isArray(recipientMetadata)) throw new MandrillRefusal('recipient_metadata must be an array');
    for (const entry of recipientMetadata) {
      if (!isPlainObject(entry) || typeof entry['rcpt'] !== 'string') throw new MandrillRefusal('recipient_metadata entries need rcpt');
      perRecipient.set(entry['rcpt'], checkMetadata(entry['values']));
    }
  }
  const ts = 1_760_000_000;
  const events = to.map((recipient: unknown) => {
    if (!isPlainObject(recipient) || typeof recipient['email'] !== 'string') throw new MandrillRefusal('to[].email is required');
    const email = recipient['email'];
    const merged = { ...metadata, ...perRecipient.get(email) };
    checkSize(merged);
    const id = randomBytes(16).toString('hex');
    return {
      event: options.event,
      _id: id,
      ts,
      msg: {
        ts: ts - 5,
        _id: id,
        state: 'sent',
        email,
        sender: 'news@example.com',
        subject: 'Hello',
        tags: [],
        metadata: merged,
        opens: [],
        clicks: [],
      },
    };
  });
  const json = options.escapeNonAscii ? phpJson(events) : JSON.stringify(events);
  return { messageIds: events.map((event) => event._id), request: mandrillRequest(json, [], options) };
}

function checkMetadata(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw new MandrillRefusal('metadata must be an object');
  for (const [key, field] of Object.entries(value)) {
    if (!KEY.test(key)) throw new MandrillRefusal(`metadata key ${key} must be alphanumeric or underscore, not starting with one`);
    if (!['string', 'number', 'boolean'].includes(typeof field)) throw new MandrillRefusal('metadata values must be scalars');
  }
  checkSize(value);
  return value;
}

function checkSize(metadata: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > METADATA_MAX_BYTES) throw new MandrillRefusal(`metadata is ${bytes} bytes of JSON, over ${METADATA_MAX_BYTES}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
