import { randomUUID } from 'node:crypto';
import { resendRequest } from '../../src/testing/resend.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';

/** What Resend's API answers with a 422 validation error instead of sending. */
export class ResendRefusal extends Error {}

export interface ResendDeliveryOptions {
  /** The event Resend reports for the email. */
  type: 'email.delivered' | 'email.bounced';
  /** Resend's documentation and SDKs write `data.tags` as an object; older docs and its ingester as a list. */
  tagsAs: 'object' | 'list';
  /** The endpoint's signing secret. */
  signingSecret: string;
  signedAt: Date;
}

export interface ResendPost {
  request: WebhookRequest;
  emailId: string;
}

const TAG = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * Plays Resend: validates an email (or a batch, an array of them) as `POST /emails` and `/emails/batch`
 * do for tags (at most 75, names and values `[A-Za-z0-9_-]{1,256}`) and headers (an object of strings),
 * and produces one signed webhook POST per email, echoing its tags and headers.
 */
export function deliverResendEmails(emails: unknown, options: ResendDeliveryOptions): ResendPost[] {
  const batch = Array.isArray(emails) ? emails : [emails];
  return batch.map((email, index) => {
    if (!isPlainObject(email)) throw new ResendRefusal(`email ${index} is not an object`);
    const to = typeof email['to'] === 'string' ? [email['to']] : email['to'];
    if (!Array.isArray(to) || to.length === 0) throw new ResendRefusal('The `to` field is required.');
    const tags = email['tags'] ?? [];
    if (!Array.isArray(tags)) throw new ResendRefusal('tags must be an array');
    if (tags.length > 75) throw new ResendRefusal('An email can have at most 75 tags.');
    for (const tag of tags) {
      if (!isPlainObject(tag) || typeof tag['name'] !== 'string' || typeof tag['value'] !== 'string') {
        throw new ResendRefusal('A tag is { name, value }.');
      }
      if (!TAG.test(tag['name']) || !TAG.test(tag['value'])) {
        throw new ResendRefusal('Tags should only contain ASCII letters, numbers, underscores, or dashes, and be at most 256 characters.');
      }
    }
    const headers = email['headers'] ?? {};
    if (!isPlainObject(headers) || Object.values(headers).some((value) => typeof value !== 'string')) {
      throw new ResendRefusal('headers must be an object of strings');
    }
    const emailId = randomUUID();
    const data: Record<string, unknown> = {
      email_id: emailId,
      created_at: '2026-01-01T00:00:00.000000+00:00',
      from: 'News <news@example.com>',
      to: [to[0]],
      subject: 'Hello',
      tags:
        options.tagsAs === 'object'
          ? Object.fromEntries((tags as { name: string; value: string }[]).map((tag) => [tag.name, tag.value]))
          : tags,
      headers: Object.entries(headers).map(([name, value]) => ({ name, value })),
    };
    if (options.type === 'email.bounced') {
      data['bounce'] = { type: 'Permanent', subType: 'General', message: 'Hard bounce', diagnosticCode: ['smtp; 550 5.1.1 user unknown'] };
    }
    const body = JSON.stringify({ type: options.type, created_at: '2026-01-01T00:00:01.000Z', data });
    return { emailId, request: resendRequest(body, [], options.signingSecret, options.signedAt) };
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
