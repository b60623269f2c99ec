import { randomInt, randomUUID, type KeyObject } from 'node:crypto';
import { railsJson, signPostalBody } from '../../src/testing/postal.js';
import { escapeNonAscii } from '../../src/testing/test-event.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Postal's send API answers with an error (`ParameterError`, a MySQL refusal) instead of sending. */
export class PostalRefusal extends Error {}

export interface PostalDeliveryOptions {
  /** Which webhook reports each recipient's message. */
  event: 'MessageSent' | 'MessageDeliveryFailed' | 'MessageBounced' | 'MessageLinkClicked' | 'MessageLoaded';
  /** The Postal server's signing key. */
  privateKey: KeyObject | string;
  /** Postal before 3.2 sends the SHA-1 signature alone. */
  legacy: boolean;
  /** Rails writes non-ASCII as UTF-8; an `\u` escape of every character past ASCII is valid JSON too. */
  escapeNonAscii: boolean;
}

export interface PostalPost {
  request: WebhookRequest;
  messageId: string;
  uuid: string;
}

/**
 * Plays Postal: validates a `POST /api/v1/send/message` body as Postal does for what concerns the carrier
 * (`to` a list of up to 50 addresses; `tag`, when a string, at most 255 characters as MySQL counts utf8mb4,
 * in code points; `headers` a hash of strings), stores the tag as a utf8mb4 column keeps it, and produces one
 * signed webhook POST per recipient, with Postal's envelope (`event`, `timestamp`, `uuid`, `payload`)
 * written by Rails' `to_json`. Postal never echoes `headers`.
 */
export function deliverPostalMessage(message: unknown, options: PostalDeliveryOptions): PostalPost[] {
  if (!isPlainObject(message)) throw new PostalRefusal('ParameterError: the body is not an object');
  const to = message['to'];
  const recipients = typeof to === 'string' ? [to] : Array.isArray(to) ? to : [];
  if (recipients.length === 0 || recipients.length > 50 || !recipients.every((r) => typeof r === 'string' && r.includes('@'))) {
    throw new PostalRefusal('ParameterError: to must be a list of at most 50 addresses');
  }
  const headers = message['headers'];
  if (headers !== undefined && (!isPlainObject(headers) || !Object.values(headers).every((value) => typeof value === 'string'))) {
    throw new PostalRefusal('ParameterError: headers must be a hash of strings');
  }
  const rawTag = message['tag'];
  if (rawTag !== undefined && rawTag !== null && typeof rawTag !== 'string') throw new PostalRefusal('ParameterError: tag');
  // A varchar(255) utf8mb4 column holds 255 characters (code points) whatever their byte length.
  if (typeof rawTag === 'string' && [...rawTag].length > 255) throw new PostalRefusal('Data too long for column tag');
  const headerTag = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'x-postal-tag')?.[1];
  const tag = typeof rawTag === 'string' && rawTag !== '' ? rawTag : typeof headerTag === 'string' ? headerTag : null;
  const messageId = `${randomUUID()}@rp.postal.example.com`;
  return (recipients as string[]).map((recipient) => {
    const stored = {
      id: randomInt(1, 2 ** 31),
      token: randomUUID().slice(0, 6),
      direction: 'outgoing',
      message_id: messageId,
      to: recipient,
      from: 'news@example.com',
      subject: 'Hello',
      timestamp: 1762164000.1,
      spam_status: 'NotChecked',
      tag,
    };
    const uuid = randomUUID();
    const envelope = { event: options.event, timestamp: 1762164252.4187, uuid, payload: payloadOf(options.event, stored) };
    let text = railsJson(envelope);
    if (options.escapeNonAscii) text = escapeNonAscii(text);
    const rawBody = new TextEncoder().encode(text);
    const request: WebhookRequest = {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signPostalBody(options.privateKey, rawBody, { legacy: options.legacy }) },
      rawBody,
    };
    return { request, messageId, uuid };
  });
}

function payloadOf(event: PostalDeliveryOptions['event'], message: Record<string, unknown>): Record<string, unknown> {
  const status = (name: string, details: string, output: string) => ({
    status: name,
    details,
    output,
    sent_with_ssl: true,
    timestamp: 1762164252.3,
    time: 0.41,
    message,
  });
  switch (event) {
    case 'MessageSent':
      return status('Sent', 'Message accepted by mx.example.org', '250 2.0.0 OK');
    case 'MessageDeliveryFailed':
      return status('HardFail', 'Permanent SMTP delivery error when sending to mx.example.org', '550 5.1.1 user unknown');
    case 'MessageBounced':
      return { original_message: message, bounce: { ...message, id: 99, direction: 'incoming', tag: null } };
    case 'MessageLinkClicked':
      return { url: 'https://example.com/?a=1&b=<2>', token: 'VJzsFA', ip_address: '192.0.2.1', user_agent: 'Mozilla/5.0', message };
    case 'MessageLoaded':
      return { ip_address: '192.0.2.1', user_agent: 'Mozilla/5.0', message };
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
