import { randomInt } from 'node:crypto';
import { brevoRequest } from '../../src/testing/brevo.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Brevo's `POST /v3/smtp/email` answers with an error instead of sending. */
export class BrevoRefusal extends Error {}

export interface BrevoDelivery {
  /** The webhook request Brevo would POST for the email's `delivered` events. */
  request: WebhookRequest;
  messageId: string;
}

/**
 * Plays Brevo: takes the JSON text of a transactional email as the API receives it, refuses what it
 * cannot send right (headers that are not an object of strings; a header with non-ASCII, which Brevo
 * mangles: docs/providers/brevo.md#attaching-the-tracking-id), and produces the webhook reporting one `event` (default `delivered`) per
 * recipient (`to`, or every message version's), echoing `X-Mailin-custom` verbatim and `tags`. One
 * recipient is posted as an object, several as the array of a batched webhook; `ts_epoch` is in
 * milliseconds or, as one documented example has it, seconds.
 */
export function deliverBrevoEmail(
  bodyText: string,
  credentials: { username: string; password: string },
  epochSeconds = false,
  event: 'delivered' | 'hard_bounce' = 'delivered',
): BrevoDelivery {
  const email: unknown = JSON.parse(bodyText);
  if (!isPlainObject(email)) throw new BrevoRefusal('the email is not a JSON object');
  const headers = email['headers'] ?? {};
  if (!isPlainObject(headers)) throw new BrevoRefusal('headers must be an object');
  let custom: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new BrevoRefusal(`header ${name} is not a string`);
    if (/[^\x20-\x7e]/.test(value)) throw new BrevoRefusal(`header ${name} is not printable ASCII`);
    if (name.toLowerCase() === 'x-mailin-custom') custom = value;
  }
  const versions = email['messageVersions'];
  const recipients = Array.isArray(versions) ? versions.flatMap((version) => (isPlainObject(version) ? toOf(version) : [])) : toOf(email);
  if (recipients.length === 0) throw new BrevoRefusal('no recipient');
  const messageId = `${Date.now()}.${randomInt(1, 2 ** 40)}@smtp-relay.mailin.fr`;
  const at = 1_764_000_000_000 + randomInt(0, 1000);
  const items = recipients.map((address) => ({
    event,
    ...(event === 'hard_bounce' ? { reason: 'RecipientError: 550 5.1.1 user unknown' } : {}),
    email: address,
    id: 98_765,
    date: '2026-11-24 17:00:00',
    ts: Math.floor(at / 1000),
    ts_event: Math.floor(at / 1000),
    ts_epoch: epochSeconds ? Math.floor(at / 1000) : at,
    'message-id': `<${messageId}>`,
    subject: email['subject'] ?? '',
    ...(custom === undefined ? {} : { 'X-Mailin-custom': custom }),
    ...(Array.isArray(email['tags']) ? { tags: email['tags'] } : {}),
  }));
  return { messageId, request: brevoRequest(JSON.stringify(items.length === 1 ? items[0] : items), [], { basic: credentials }) };
}

function toOf(email: Record<string, unknown>): string[] {
  const to = email['to'];
  if (!Array.isArray(to)) return [];
  return to.flatMap((recipient) => (isPlainObject(recipient) && typeof recipient['email'] === 'string' ? [recipient['email']] : []));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
