import { randomBytes } from 'node:crypto';
import { sendGridBody } from '../../src/testing/sendgrid.js';

/** What SendGrid's v3 mail send API answers with a 400. */
export class SendGridRefusal extends Error {}

/** Keys SendGrid writes into every event; a custom arg of the same name loses (sendgrid-docs `event.md`). */
const reservedKeys = new Set([
  'event',
  'email',
  'timestamp',
  'smtp-id',
  'sg_event_id',
  'sg_message_id',
  'category',
  'reason',
  'status',
  'type',
  'response',
  'attempt',
  'url',
  'useragent',
  'ip',
  'tls',
  'cert_err',
  'asm_group_id',
  'send_at',
]);

/**
 * Plays SendGrid for one `POST /v3/mail/send` body: refuses what the API refuses (no personalizations, no
 * recipient, a non-object or non-string custom arg, over 10,000 bytes of custom args for a recipient),
 * else returns the Event Webhook body SendGrid would post: one `eventName` event per recipient, custom args
 * flattened in (personalization over message, reserved keys over both), events separated by CRLF, as
 * SendGrid's real bodies are.
 */
export function deliverSendGridMail(request: unknown, eventName: string, timestamp: number): Uint8Array {
  if (!isObject(request)) throw new SendGridRefusal('the body must be a JSON object');
  // The API knows only snake_case keys; camelCase ones are the SDK's and never reach it as such.
  const messageArgs = customArgs(request['custom_args'], 'custom_args');
  const personalizations = request['personalizations'];
  if (!Array.isArray(personalizations) || personalizations.length === 0 || personalizations.length > 1000) {
    throw new SendGridRefusal('personalizations must hold 1 to 1000 items');
  }
  const xMessageId = randomBytes(16).toString('base64url');
  const events: Record<string, unknown>[] = [];
  personalizations.forEach((personalization: unknown, p) => {
    if (!isObject(personalization)) throw new SendGridRefusal(`personalizations[${p}] must be an object`);
    const args = { ...messageArgs, ...customArgs(personalization['custom_args'], `personalizations[${p}].custom_args`) };
    const size = Object.entries(args).reduce((sum, [key, value]) => sum + utf8Bytes(key) + utf8Bytes(value), 0);
    if (size > 10_000) throw new SendGridRefusal(`personalizations[${p}] has ${size} bytes of custom_args`);
    const to = personalization['to'];
    if (!Array.isArray(to) || to.length === 0) throw new SendGridRefusal(`personalizations[${p}].to is empty`);
    to.forEach((recipient: unknown, r) => {
      if (!isObject(recipient) || typeof recipient['email'] !== 'string') throw new SendGridRefusal('a recipient has no email');
      const event: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(args)) {
        // defineProperty, not assignment: a custom arg may be called "__proto__".
        if (!reservedKeys.has(key)) Object.defineProperty(event, key, { value, enumerable: true, writable: true, configurable: true });
      }
      Object.assign(event, {
        email: recipient['email'],
        timestamp,
        'smtp-id': `<${xMessageId}@ismtpd-test>`,
        event: eventName,
        sg_event_id: randomBytes(16).toString('base64url'),
        sg_message_id: `${xMessageId}.filterdrecv-test-${p}-${r}.0`,
      });
      events.push(event);
    });
  });
  return sendGridBody(events);
}

function customArgs(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) throw new SendGridRefusal(`${where} must be an object`);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new SendGridRefusal(`${where}.${key} must be a string`);
  }
  return value as Record<string, string>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
