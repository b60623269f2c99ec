import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attachBrevoTrackingId, readBrevoStream, readBrevoTrackingId } from '../../src/carriers/brevo.js';
import { MailwardenError } from '../../src/errors.js';
import { createHttpHandler } from '../../src/http/handler.js';
import { createMailwarden } from '../../src/mailwarden.js';
import { createMemoryStore } from '../../src/memory-store/memory-store.js';
import { brevoWebhook } from '../../src/testing/brevo.js';
import { createBrevoWebhook, parseBrevoWebhook, type BrevoWebhookAuth } from '../../src/webhooks/brevo.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/brevo/${name}`, import.meta.url), 'utf8'));

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

function post(body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, rawBody: new TextEncoder().encode(text) };
}

const basic = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
});

describe('attachBrevoTrackingId', () => {
  const email = {
    sender: { email: 'news@example.com' },
    to: [{ email: 'jane@example.net', name: 'Jane' }],
    subject: 'Hello',
    textContent: 'Hi',
    tags: ['welcome'],
    headers: { 'X-Campaign': 'spring' },
  };

  it('writes X-Mailin-custom as a JSON object beside the caller’s headers and tags, leaving the input alone', () => {
    const before = structuredClone(email);
    const sent = attachBrevoTrackingId(email, 'welcome-2026', { stream: 'onboarding' });
    expect(email).toStrictEqual(before);
    expect(sent).toStrictEqual({
      ...email,
      headers: { 'X-Campaign': 'spring', 'X-Mailin-custom': '{"service_id":"welcome-2026","service_stream":"onboarding"}' },
    });
  });

  it('writes the header in ASCII: non-ASCII as \\u escapes, line separators too', () => {
    const id = 'Frühling 🌷\u2028"x"';
    const sent = attachBrevoTrackingId({ to: [{ email: 'a@example.net' }], headers: {} as Record<string, string> }, id);
    const header = sent.headers['X-Mailin-custom'];
    expect(header).toBe(String.raw`{"service_id":"Fr\u00fchling \ud83c\udf37\u2028\"x\""}`);
    expect(header).toMatch(/^[\x20-\x7e]*$/);
    expect(readBrevoTrackingId({ 'X-Mailin-custom': header })).toBe(id);
  });

  it('merges into the caller’s JSON X-Mailin-custom (any case), replacing its service_id, keeping its members as written', () => {
    const sent = attachBrevoTrackingId(
      {
        to: [{ email: 'a@example.net' }],
        headers: { 'x-mailin-custom': '{\r\n  "order": 12345678901234567890,\n  "service_id": "old"\n}' },
      },
      'new',
    );
    expect(sent.headers).toStrictEqual({ 'X-Mailin-custom': '{"order": 12345678901234567890,"service_id":"new"}' });
  });

  // Found by brevo.property.test.ts: without a stream of ours, the caller's own service_stream stays.
  it('leaves the caller’s own service_stream when no stream is given', () => {
    const sent = attachBrevoTrackingId({ headers: { 'X-Mailin-custom': '{"service_stream":" "}' } }, 'a');
    expect(sent.headers['X-Mailin-custom']).toBe('{"service_stream":" ","service_id":"a"}');
    expect(readBrevoStream({ 'X-Mailin-custom': sent.headers['X-Mailin-custom'] })).toBe(' ');
  });

  it('refuses a caller’s X-Mailin-custom that is no JSON object: Brevo echoes one header only', async () => {
    for (const custom of ['campaign-7', '[1]', '"text"', '{broken']) {
      await expectMailwardenError(
        () => attachBrevoTrackingId({ headers: { 'X-Mailin-custom': custom } }, 'a'),
        'tracking_id_not_carriable',
      );
    }
    expect(attachBrevoTrackingId({ headers: { 'X-Mailin-custom': '  ' } }, 'a').headers).toStrictEqual({
      'X-Mailin-custom': '{"service_id":"a"}',
    });
  });

  it('refuses headers that are not an object, and invalid IDs and streams', async () => {
    await expectMailwardenError(() => attachBrevoTrackingId({ headers: ['X-A: b'] }, 'a'), 'invalid_request');
    await expectMailwardenError(() => attachBrevoTrackingId({}, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachBrevoTrackingId({}, 'a', { stream: 'Not A Stream' }), 'invalid_stream');
  });

  it('adds the one-click unsubscribe headers of the one recipient, and refuses a request to several', async () => {
    const link = { headers: { 'List-Unsubscribe': '<https://u.example/t>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } };
    const sent = attachBrevoTrackingId({ ...email, headers: { 'list-unsubscribe': '<mailto:old@example.com>' } }, 'a', {
      unsubscribe: (recipient) => (recipient === 'jane@example.net' ? link : undefined),
    });
    expect(sent.headers).toStrictEqual({ 'X-Mailin-custom': '{"service_id":"a"}', ...link.headers });
    const versions = { messageVersions: [{ to: [{ email: 'a@example.net' }] }, { to: [{ email: 'b@example.net' }] }] };
    await expectMailwardenError(() => attachBrevoTrackingId(versions, 'a', { unsubscribe: () => link }), 'unsubscribe_not_carriable');
  });
});

describe('readBrevoTrackingId', () => {
  it('reads service_id from the JSON text (or object) of X-Mailin-custom, else null', () => {
    expect(readBrevoTrackingId({ 'X-Mailin-custom': '{"service_id":"a"}' })).toBe('a');
    expect(readBrevoTrackingId({ 'X-Mailin-Custom': '{"service_id":42}' })).toBe('42');
    expect(readBrevoTrackingId({ 'X-Mailin-custom': { service_id: 'b' } })).toBe('b');
    expect(readBrevoTrackingId({ 'X-Mailin-custom': 'campaign-7' })).toBeNull();
    expect(readBrevoTrackingId({ 'X-Mailin-custom': '{"other":1}' })).toBeNull();
    expect(readBrevoTrackingId({})).toBeNull();
  });
});

describe('parseBrevoWebhook', () => {
  it('reads a documented hard bounce: recipient, message id without brackets, ts_epoch in ms, SMTP details', () => {
    const receipt = parseBrevoWebhook(fixture('hard-bounce.json'));
    expect(receipt.warnings).toEqual([]);
    expect(receipt.events).toMatchObject([
      {
        provider: 'brevo',
        type: 'bounced',
        bounceClass: 'hard',
        messageId: '202611031004.12345678901@smtp-relay.mailin.fr',
        recipient: 'x@example.org',
        trackingId: 'abc123',
        occurredAt: new Date(1762164252512),
        details: { smtpStatus: '5.1.1', diagnostic: 'RecipientError: 550 5.1.1 user unknown', bounceClassification: 'hard_bounce' },
      },
    ]);
  });

  it('reads a batch, ts_epoch in seconds or milliseconds, with streams, links and user agents', () => {
    const receipt = parseBrevoWebhook(fixture('batch.json'));
    expect(receipt.warnings).toEqual([]);
    const messageId = '202611031004.555@smtp-relay.mailin.fr';
    expect(
      receipt.events.map(({ type, messageId, trackingId, stream, occurredAt, details }) => ({
        type,
        messageId,
        trackingId,
        stream,
        occurredAt,
        details,
      })),
    ).toStrictEqual([
      {
        type: 'sent',
        messageId,
        trackingId: 'welcome-2026',
        stream: 'onboarding',
        occurredAt: new Date(1762164250000),
        details: undefined,
      },
      {
        type: 'opened',
        messageId,
        trackingId: 'welcome-2026',
        stream: 'onboarding',
        occurredAt: new Date(1762164360000),
        details: { userAgent: 'Mozilla/5.0' },
      },
      {
        type: 'clicked',
        messageId,
        trackingId: 'welcome-2026',
        stream: 'onboarding',
        occurredAt: new Date(1762164420000),
        details: { url: 'https://example.com/start' },
      },
      {
        type: 'unsubscribed',
        messageId,
        trackingId: 'welcome-2026',
        stream: 'onboarding',
        occurredAt: new Date(1762164480000),
        details: undefined,
      },
    ]);
  });

  it.each([
    ['request', { type: 'sent' }],
    ['sent', { type: 'sent' }],
    ['delivered', { type: 'delivered' }],
    ['deferred', { type: 'deferred' }],
    ['hard_bounce', { type: 'bounced', bounceClass: 'hard' }],
    ['soft_bounce', { type: 'bounced', bounceClass: 'soft' }],
    ['blocked', { type: 'rejected', providerSuppression: null }],
    ['invalid_email', { type: 'rejected', providerSuppression: null }],
    ['error', { type: 'rejected', providerSuppression: null }],
    ['spam', { type: 'complained' }],
    ['complaint', { type: 'complained' }],
    ['opened', { type: 'opened' }],
    ['unique_opened', { type: 'opened' }],
    ['proxy_open', { type: 'opened' }],
    ['unique_proxy_open', { type: 'opened' }],
    ['click', { type: 'clicked' }],
    ['unsubscribe', { type: 'unsubscribed' }],
    ['unsubscribed', { type: 'unsubscribed' }],
    ['list_addition', { type: 'unknown' }],
  ])('maps %s', (event, expected) => {
    const [parsed] = parseBrevoWebhook({ event, email: 'a@example.net', ts_epoch: 1762164250000 }).events;
    expect(parsed).toMatchObject(expected);
    expect(parsed!.bounceClass ?? null).toBe((expected as { bounceClass?: string }).bounceClass ?? null);
  });

  it('keeps a rejection’s reason as the reject reason, not a diagnostic', () => {
    const [event] = parseBrevoWebhook({
      event: 'blocked',
      email: 'a@example.net',
      ts_event: 1762164250,
      reason: 'blocked : due to blacklist user',
    }).events;
    expect(event!.details).toStrictEqual({ rejectReason: 'blocked : due to blacklist user' });
  });

  it('skips unusable items with a warning, keeps the rest; an empty batch is a ping', () => {
    const receipt = parseBrevoWebhook([
      { event: 'delivered', ts_epoch: 1 },
      'x',
      { email: 'a@example.net' },
      { event: 'delivered', email: 'a@example.net', ts: 'soon' },
      { event: 'delivered', email: 'a@example.net', ts: 1762164250 },
    ]);
    expect(receipt.events).toHaveLength(1);
    expect(receipt.warnings.map((warning) => warning.index)).toStrictEqual([0, 1, 2, 3]);
    expect(parseBrevoWebhook([]).notice).toBe('ping');
  });

  it('refuses a body that is neither an object nor an array', async () => {
    await expectMailwardenError(() => parseBrevoWebhook('delivered'), 'invalid_payload');
  });

  it('gives a retried event the same key, and events of another time, recipient or link other keys', () => {
    const item = { event: 'click', email: 'a@example.net', ts_epoch: 1762164250000, 'message-id': '<m@x>', link: 'https://a.example' };
    const key = (value: object) => parseBrevoWebhook(value).events[0]!.eventKey;
    expect(key(item)).toBe(key({ ...item, id: 999, date: 'other' }));
    expect(
      new Set([
        key(item),
        key({ ...item, ts_epoch: 1762164250001 }),
        key({ ...item, email: 'b@example.net' }),
        key({ ...item, link: 'https://b.example' }),
      ]).size,
    ).toBe(4);
  });
});

describe('createBrevoWebhook', () => {
  const webhook = createBrevoWebhook(env);
  const body = { event: 'delivered', email: 'a@example.net', ts_epoch: 1762164250000 };

  it.each<[string, BrevoWebhookAuth, Record<string, string>]>([
    ['basic credentials of the URL', { basic: [{ username: 'brevo', password: 's3cret' }] }, basic('brevo', 's3cret')],
    ['a bearer token', { bearer: ['old', 'tok'] }, { authorization: 'Bearer tok' }],
    ['a custom header', { headers: [{ name: 'X-Brevo-Secret', value: 'h' }] }, { 'x-brevo-secret': 'h' }],
  ])('admits %s', async (_, auth, headers) => {
    expect((await webhook.receive(post(body, headers), auth)).events).toHaveLength(1);
  });

  it('refuses wrong, missing or unconfigured credentials', async () => {
    const auth = { basic: [{ username: 'brevo', password: 's3cret' }] };
    await expectMailwardenError(() => webhook.receive(post(body, basic('brevo', 'nope')), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post(body), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post(body, basic('brevo', 's3cret')), {}), 'webhook_unauthorized');
  });

  it('accepts what the testing kit builds, one event as an object and several as a batch', async () => {
    const auth = { bearer: ['kit'] };
    const one = brevoWebhook({ auth: { bearer: 'kit' }, events: [{ type: 'delivered', recipient: 'a@example.net', trackingId: 'x' }] });
    expect(JSON.parse(Buffer.from(one.rawBody).toString('utf8'))).not.toBeInstanceOf(Array);
    expect((await webhook.receive(one, auth)).events).toMatchObject([
      { type: 'delivered', trackingId: 'x', messageId: one.events[0]!.messageId },
    ]);
    const two = brevoWebhook({
      auth: { bearer: 'kit' },
      events: [
        { type: 'bounced', bounceClass: 'soft', recipient: 'a@example.net' },
        { type: 'complained', recipient: 'b@example.net', stream: 'news' },
      ],
    });
    expect((await webhook.receive(two, auth)).events).toMatchObject([
      { type: 'bounced', bounceClass: 'soft', trackingId: null },
      { type: 'complained', recipient: 'b@example.net' },
    ]);
  });
});

describe('the Brevo route when the store is unavailable', () => {
  it('answers 429 with Retry-After, since Brevo discards an event answered with a 5xx; other routes keep 503', async () => {
    const failure = new MailwardenError('store_unavailable', 'The store is away.');
    const store = { ...createMemoryStore(), applyEvents: async () => Promise.reject(failure) };
    const auth = { brevo: { bearer: ['tok'] }, sparkpost: { bearer: ['tok'] } };
    const handler = createHttpHandler(createMailwarden({ store, webhooks: { auth: { acme: auth } } }), {
      apiKeys: {},
      logger: { error: () => {} },
    });
    const answer = (provider: string, body: unknown) =>
      handler.handle({
        method: 'POST',
        path: `/projects/acme/webhooks/${provider}`,
        query: '',
        headers: { 'content-type': 'application/json', authorization: 'Bearer tok' },
        body: new TextEncoder().encode(JSON.stringify(body)),
      });
    const brevo = await answer('brevo', { event: 'delivered', email: 'a@example.net', ts_epoch: 1762164250000 });
    expect([brevo.status, brevo.headers['retry-after'], JSON.parse(String(brevo.body))]).toStrictEqual([
      429,
      '5',
      { error: { code: 'store_unavailable', message: 'The store is away.' } },
    ]);
    const sparkpost = await answer('sparkpost', [
      { msys: { message_event: { type: 'delivery', rcpt_to: 'a@example.net', timestamp: '1762164250' } } },
    ]);
    expect([sparkpost.status, sparkpost.headers['retry-after']]).toStrictEqual([503, '5']);
  });
});
