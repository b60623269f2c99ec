import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAILERSEND_MAX_TAGS,
  attachMailerSendTrackingId,
  mailerSendTrackingTags,
  readMailerSendStream,
  readMailerSendTrackingId,
} from '../../src/carriers/mailersend.js';
import { MAILERSEND_TEST_SECRET, createMailerSendWebhook, parseMailerSendWebhook } from '../../src/webhooks/mailersend.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/mailersend/${name}`, import.meta.url), 'utf8');

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T12:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const secret = 'Ry9ZaPKqbD3hXn0gDPvT';
const auth = { signingSecret: secret };

/** A POST of `text` as MailerSend sends it: the bytes signed as they are. */
function post(text: string, key = secret): WebhookRequest {
  const signature = createHmac('sha256', key).update(text).digest('hex');
  return { method: 'POST', headers: { 'content-type': 'application/json', signature }, rawBody: new TextEncoder().encode(text) };
}

describe('mailerSendTrackingTags', () => {
  it('writes printable ASCII as it is, anything else as base64url of its UTF-8', () => {
    expect(mailerSendTrackingTags('spring-sale')).toEqual(['service_id:spring-sale']);
    expect(mailerSendTrackingTags(' a "b", c:d ')).toEqual(['service_id_b64u:IGEgImIiLCBjOmQg']);
    expect(mailerSendTrackingTags(' a "b", c:d')).toEqual(['service_id: a "b", c:d']);
    expect(mailerSendTrackingTags('Frühling 🌷')).toEqual(['service_id_b64u:RnLDvGhsaW5nIPCfjLc']);
    expect(mailerSendTrackingTags('tab\there')).toEqual([`service_id_b64u:${Buffer.from('tab\there').toString('base64url')}`]);
    expect(mailerSendTrackingTags('x', { stream: 'weekly-digest' })).toEqual(['service_id:x', 'service_stream:weekly-digest']);
  });

  it('refuses an invalid ID or stream', async () => {
    await expectMailwardenError(() => mailerSendTrackingTags(''), 'invalid_tracking_id');
    await expectMailwardenError(() => mailerSendTrackingTags('x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => mailerSendTrackingTags('x', { stream: 'Not A Stream' }), 'invalid_stream');
  });
});

describe('attachMailerSendTrackingId', () => {
  it("keeps the caller's tags in order, replaces ours, and leaves the input alone", () => {
    const email = {
      to: [{ email: 'jane@example.com' }],
      tags: ['welcome', 'service_id:old', 'service_id_b64u:b2xk', 'service_stream:old'],
    };
    const before = structuredClone(email);
    expect(attachMailerSendTrackingId(email, 'new')).toEqual({ ...email, tags: ['welcome', 'service_stream:old', 'service_id:new'] });
    expect(attachMailerSendTrackingId(email, 'new', { stream: 'news' }).tags).toEqual(['welcome', 'service_id:new', 'service_stream:news']);
    expect(email).toEqual(before);
  });

  it('keeps the class of a params object, so its setters still work', () => {
    class Params {
      tags?: string[];
      text?: string;
      setText(text: string): this {
        this.text = text;
        return this;
      }
    }
    const params = Object.assign(new Params(), { tags: ['welcome'] });
    const attached = attachMailerSendTrackingId(params, 'welcome-2026');
    expect(attached).toBeInstanceOf(Params);
    expect(attached.tags).toEqual(['welcome', 'service_id:welcome-2026']);
    expect(params.tags).toEqual(['welcome']);
    expect(attached.setText('Hi').text).toBe('Hi');
  });

  it('handles a bulk send (an array of emails)', () => {
    const emails = [{ to: [{ email: 'a@example.com' }] }, { to: [{ email: 'b@example.com' }], tags: ['x'] }];
    expect(attachMailerSendTrackingId(emails, 'bulk').map((email) => email.tags)).toEqual([['service_id:bulk'], ['x', 'service_id:bulk']]);
  });

  it(`refuses when the caller's tags plus ours exceed ${MAILERSEND_MAX_TAGS}`, async () => {
    const four = { tags: ['a', 'b', 'c', 'd'] };
    expect(attachMailerSendTrackingId(four, 'x').tags).toHaveLength(5);
    await expectMailwardenError(() => attachMailerSendTrackingId(four, 'x', { stream: 'news' }), 'tracking_id_not_carriable');
    // Our own stale tags do not count: they are replaced.
    expect(
      attachMailerSendTrackingId({ tags: ['a', 'b', 'c', 'service_id:old', 'service_stream:old'] }, 'x', { stream: 'n' }).tags,
    ).toEqual(['a', 'b', 'c', 'service_id:x', 'service_stream:n']);
  });

  it('refuses tags that are not an array of strings', async () => {
    await expectMailwardenError(() => attachMailerSendTrackingId({ tags: 'a' }, 'x'), 'invalid_request');
    await expectMailwardenError(() => attachMailerSendTrackingId({ tags: [1] }, 'x'), 'invalid_request');
  });

  it('carries the one recipient’s unsubscribe link in list_unsubscribe, and refuses several recipients', async () => {
    const link = {
      headers: { 'List-Unsubscribe': '<https://u.example.com/t/abc>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    };
    const unsubscribe = (email: string) => (email === 'jane@example.com' ? link : undefined);
    expect(attachMailerSendTrackingId({ to: [{ email: 'jane@example.com' }] }, 'x', { unsubscribe })).toEqual({
      to: [{ email: 'jane@example.com' }],
      tags: ['service_id:x'],
      list_unsubscribe: '<https://u.example.com/t/abc>',
    });
    expect(attachMailerSendTrackingId({ to: [{ email: 'bo@example.com' }] }, 'x', { unsubscribe })).not.toHaveProperty('list_unsubscribe');
    await expectMailwardenError(
      () => attachMailerSendTrackingId({ to: [{ email: 'jane@example.com' }, { email: 'bo@example.com' }] }, 'x', { unsubscribe }),
      'unsubscribe_not_carriable',
    );
  });
});

describe('readMailerSendTrackingId and readMailerSendStream', () => {
  it('read the first tag of each kind, decoding base64url', () => {
    expect(readMailerSendTrackingId(['a', 'service_id:x:y', 'service_id:z'])).toBe('x:y');
    expect(readMailerSendTrackingId(['service_id_b64u:RnLDvGhsaW5nIPCfjLc'])).toBe('Frühling 🌷');
    expect(readMailerSendTrackingId(['service_id_b64u:***'])).toBeNull();
    expect(readMailerSendTrackingId(['service_id:'])).toBeNull();
    expect(readMailerSendTrackingId(null)).toBeNull();
    expect(readMailerSendTrackingId('service_id:x')).toBeNull();
    expect(readMailerSendStream(['service_stream:news', 'service_stream:other'])).toBe('news');
    expect(readMailerSendStream([1, 'service_stream:'])).toBeNull();
  });
});

describe('parseMailerSendWebhook', () => {
  const parse = (name: string) => parseMailerSendWebhook(JSON.parse(fixture(name)));

  it('reads a version 1 activity (anymail’s live capture), whose slashes come escaped', () => {
    expect(fixture('v1-sent.json')).toContain('spring\\/sale');
    expect(parse('v1-sent.json')).toEqual({
      events: [
        {
          provider: 'mailersend',
          type: 'sent',
          messageId: '63fd1c1d5f010335ed07066b',
          recipient: 'recipient@example.com',
          trackingId: 'spring/sale 2026',
          stream: 'weekly-digest',
          occurredAt: new Date('2023-02-27T21:09:49.506Z'),
          eventKey: '63fd1c1d31b9c750540fe85c',
        },
      ],
      sources: [0],
      warnings: [],
      skipped: 0,
    });
  });

  it('reads a version 1 hard bounce and unsubscribe, with morph’s reason', () => {
    expect(parse('v1-hard-bounced.json').events).toEqual([
      expect.objectContaining({
        type: 'bounced',
        bounceClass: 'hard',
        recipient: 'invalid@example.com',
        trackingId: null,
        details: { diagnostic: 'Host or domain name not found' },
      }),
    ]);
    expect(parse('v1-unsubscribed.json').events).toEqual([
      expect.objectContaining({ type: 'unsubscribed', trackingId: 'Frühling 🌷', stream: 'marketing' }),
    ]);
  });

  it('reads version 2 activities (anymail’s captures)', () => {
    expect(parse('v2-sent.json').events).toEqual([
      {
        provider: 'mailersend',
        type: 'sent',
        messageId: '6aa59d2fbf35297925087058',
        recipient: 'recipient@example.com',
        trackingId: 'welcome-2026',
        occurredAt: new Date('2026-09-12T18:42:56Z'),
        eventKey: '6aa59d304ab3f14ef03ccf50',
      },
    ]);
    expect(parse('v2-hard-bounced.json').events[0]).toMatchObject({
      type: 'bounced',
      bounceClass: 'hard',
      details: { smtpStatus: '550', diagnostic: 'Host or domain name not found', bounceClassification: 'hard' },
    });
    expect(parse('v2-soft-bounced.json').events[0]).toMatchObject({
      type: 'bounced',
      bounceClass: 'soft',
      details: { smtpStatus: '452', diagnostic: 'Mailbox full', bounceClassification: 'soft' },
    });
    expect(parse('v2-spam-complaints.json').events[0]).toMatchObject({ type: 'complained', recipient: 'recipient@example.com' });
    expect(parse('v2-unsubscribed.json').events[0]).toMatchObject({ type: 'unsubscribed', trackingId: null, stream: 'marketing' });
    expect(parse('v2-clicked.json').events[0]).toMatchObject({
      type: 'clicked',
      details: { url: 'https://example.com/test', userAgent: 'Mozilla/5.0 (Macintosh) AppleWebKit/537.36' },
    });
    expect(parse('v2-deferred.json').events[0]).toMatchObject({ type: 'deferred' });
    expect(parse('v2-deferred.json').events[0]).not.toHaveProperty('details');
    expect(parse('v2-suppressed.json').events[0]).toMatchObject({
      type: 'rejected',
      providerSuppression: null,
      details: { rejectReason: 'on_hold' },
    });
  });

  it('maps the unique and survey activities', () => {
    const activity = (type: string) =>
      parseMailerSendWebhook({
        type: `activity.${type}`,
        created_at: '2026-09-12T18:45:01.000000Z',
        data: { id: 'a1', type, recipient: 'r@example.com', message_id: 'm1', meta: [] },
      }).events[0]?.type;
    expect(['opened', 'opened_unique', 'clicked_unique', 'survey_opened', 'spam_complaint'].map(activity)).toEqual([
      'opened',
      'opened',
      'clicked',
      'unknown',
      'complained',
    ]);
  });

  it('takes the webhook.test ping and account events as a ping', () => {
    expect(parse('webhook-test.json')).toMatchObject({ events: [], notice: 'ping' });
    expect(parse('sender-identity-verified.json')).toMatchObject({ events: [], notice: 'ping' });
  });

  it('skips an activity without a recipient or a valid time with a warning; keys an activity without id by its fields', () => {
    const base = { type: 'activity.delivered', created_at: '2026-09-12T18:45:01.000000Z' };
    expect(parseMailerSendWebhook({ ...base, data: { id: 'a', type: 'delivered' } })).toMatchObject({ skipped: 1, events: [] });
    expect(
      parseMailerSendWebhook({ type: 'activity.delivered', data: { id: 'a', type: 'delivered', recipient: 'r@example.com' } }),
    ).toMatchObject({ skipped: 1 });
    const keyed = (at: string) =>
      parseMailerSendWebhook({ ...base, created_at: at, data: { type: 'delivered', recipient: 'r@example.com', message_id: 'm' } })
        .events[0]!.eventKey;
    expect(keyed('2026-09-12T18:45:01.000000Z')).toBe(keyed('2026-09-12T18:45:01.000000Z'));
    expect(keyed('2026-09-12T18:45:01.000000Z')).not.toBe(keyed('2026-09-12T18:45:02.000000Z'));
    expect(keyed('2026-09-12 18:45:01')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('throws invalid_payload for a body that is not a JSON object', async () => {
    await expectMailwardenError(() => parseMailerSendWebhook([]), 'invalid_payload');
    await expectMailwardenError(() => parseMailerSendWebhook('x'), 'invalid_payload');
  });
});

describe('createMailerSendWebhook', () => {
  const webhook = createMailerSendWebhook(env);

  it('admits the bytes signed as they came (slashes escaped), never a re-serialization', async () => {
    const text = fixture('v1-sent.json');
    expect((await webhook.receive(post(text), auth)).events).toHaveLength(1);
    const reserialized = JSON.stringify(JSON.parse(text));
    const request = post(text);
    await expectMailwardenError(
      () => webhook.receive({ ...request, rawBody: new TextEncoder().encode(reserialized) }, auth),
      'webhook_unauthorized',
    );
  });

  it('refuses a missing, wrong or other secret’s signature', async () => {
    const text = fixture('v2-sent.json');
    const { signature: _, ...headers } = post(text).headers;
    await expectMailwardenError(() => webhook.receive({ ...post(text), headers }, auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post(text, 'another'), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post(text), { signingSecret: [] }), 'webhook_unauthorized');
  });

  it('accepts any secret of a list (rotation)', async () => {
    expect((await webhook.receive(post(fixture('v2-sent.json')), { signingSecret: ['old', secret] })).events).toHaveLength(1);
  });

  it('answers the webhook.test ping signed with MailerSend’s public test secret, and nothing else so signed', async () => {
    expect(await webhook.receive(post(fixture('webhook-test.json'), MAILERSEND_TEST_SECRET), auth)).toMatchObject({
      events: [],
      notice: 'ping',
    });
    expect(await webhook.receive(post(fixture('webhook-test.json')), auth)).toMatchObject({ events: [], notice: 'ping' });
    await expectMailwardenError(() => webhook.receive(post(fixture('v2-sent.json'), MAILERSEND_TEST_SECRET), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post('not json', MAILERSEND_TEST_SECRET), auth), 'webhook_unauthorized');
  });

  it('refuses bodies that are not UTF-8 JSON objects once signed', async () => {
    await expectMailwardenError(() => webhook.receive(post('[1]'), auth), 'invalid_payload');
    const bytes = new Uint8Array([0xff, 0xfe]);
    const signature = createHmac('sha256', secret).update(bytes).digest('hex');
    await expectMailwardenError(() => webhook.receive({ method: 'POST', headers: { signature }, rawBody: bytes }, auth), 'invalid_payload');
  });
});
