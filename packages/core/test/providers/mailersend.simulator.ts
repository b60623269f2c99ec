import { randomBytes } from 'node:crypto';
import { mailerSendRequest } from '../../src/testing/mailersend.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What MailerSend's email API answers with a 422 instead of sending. */
export class MailerSendRefusal extends Error {}

/** The tag limit the carrier assumes (docs/providers/mailersend.md, UNVERIFIED): the simulator holds MailerSend to it. */
const MAX_TAGS = 5;

export interface MailerSendDelivery {
  /** The webhook requests MailerSend would POST: one activity of the given type per `to` recipient. */
  requests: WebhookRequest[];
  messageId: string;
}

/**
 * Plays MailerSend: accepts an email the way `POST /v1/email` validates it (a Laravel application: every
 * request string trimmed by its default middleware, `tags` an array of at most 5 strings), and produces
 * the version 2 webhook of each recipient's activity (a delivery by default) with the tags as stored,
 * slashes escaped, signed with `secret`.
 */
export function deliverMailerSendEmail(
  email: unknown,
  secret: string,
  type: 'delivered' | 'hard_bounced' = 'delivered',
): MailerSendDelivery {
  if (!isPlainObject(email)) throw new MailerSendRefusal('the email is not a JSON object');
  // What the API receives is JSON: a class instance arrives as its own fields.
  const sent = JSON.parse(JSON.stringify(email)) as Record<string, unknown>;
  const to = sent['to'];
  if (!Array.isArray(to) || to.length === 0) throw new MailerSendRefusal('to must be a non-empty array');
  const tags = sent['tags'] ?? [];
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string'))
    throw new MailerSendRefusal('tags must be an array of strings');
  if (tags.length > MAX_TAGS) throw new MailerSendRefusal(`tags may not have more than ${MAX_TAGS} items`);
  const stored = tags.map((tag: string) => tag.trim());
  const messageId = randomBytes(12).toString('hex');
  const requests = to.map((recipient: unknown, index) => {
    const address = isPlainObject(recipient) ? recipient['email'] : undefined;
    if (typeof address !== 'string' || !address.includes('@')) throw new MailerSendRefusal(`to.${index}.email is invalid`);
    const body = {
      type: `activity.${type}`,
      created_at: '2026-09-12T18:43:00.000000Z',
      data: {
        id: randomBytes(12).toString('hex'),
        message_id: messageId,
        email_id: randomBytes(12).toString('hex'),
        type,
        recipient: address.trim(),
        tags: stored,
        meta: type === 'hard_bounced' ? { bounce_reason: '550 5.1.1 User unknown', bounce_code: 550, bounce_type: 'hard' } : [],
      },
    };
    return mailerSendRequest(JSON.stringify(body), [], secret);
  });
  return { requests, messageId };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
