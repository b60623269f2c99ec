import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attachMailjetTrackingId, readMailjetStream, readMailjetTrackingId } from '../../src/carriers/mailjet.js';
import { parseJsonWithExactIntegers } from '../../src/json/exact-integers.js';
import { mailjetWebhook } from '../../src/testing/mailjet.js';
import { createMailjetWebhook, parseMailjetWebhook } from '../../src/webhooks/mailjet.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/mailjet/${name}`, import.meta.url), 'utf8');

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T12:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

function post(text: string, headers: Record<string, string> = {}): WebhookRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, rawBody: new TextEncoder().encode(text) };
}

const basic = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
});

const link = (email: string) => ({
  headers: {
    'List-Unsubscribe': `<https://mw.example.com/u/${encodeURIComponent(email)}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  },
});

describe('attachMailjetTrackingId', () => {
  const message = {
    From: { Email: 'news@example.com' },
    To: [{ Email: 'jane@example.com', Name: 'Jane' }],
    Subject: 'Hello',
    TextPart: 'Hi',
    CustomID: 'order-42',
  };

  it('writes EventPayload as a JSON object into every message of a v3.1 body, leaving the input and CustomID alone', () => {
    const body = { Messages: [message, { ...message, To: [{ Email: 'bob@example.com' }] }], SandboxMode: true };
    const before = structuredClone(body);
    const sent = attachMailjetTrackingId(body, 'welcome-2026');
    expect(body).toEqual(before);
    expect(sent.SandboxMode).toBe(true);
    for (const one of sent.Messages) {
      expect(one).toMatchObject({ CustomID: 'order-42', EventPayload: '{"service_id":"welcome-2026"}' });
    }
  });

  it('takes one message or an array of messages too, and carries the stream beside the ID', () => {
    expect(attachMailjetTrackingId(message, 'a', { stream: 'weekly-digest' })).toMatchObject({
      EventPayload: '{"service_id":"a","service_stream":"weekly-digest"}',
    });
    expect(attachMailjetTrackingId([message], 'a')[0]).toMatchObject({ EventPayload: '{"service_id":"a"}' });
  });

  it('merges into the caller’s JSON-object EventPayload, replacing only our keys', () => {
    const sent = attachMailjetTrackingId({ ...message, EventPayload: '{"user":42,"service_id":"old","service_stream":"s"}' }, 'new');
    expect(JSON.parse(sent.EventPayload as string)).toEqual({ user: 42, service_id: 'new', service_stream: 's' });
    const streamed = attachMailjetTrackingId({ ...message, EventPayload: '{"service_stream":"s"}' }, 'new', { stream: 't' });
    expect(JSON.parse(streamed.EventPayload as string)).toEqual({ service_id: 'new', service_stream: 't' });
  });

  it('writes the JSON in ASCII, which parses back to the exact ID', () => {
    const id = 'ünï "😀" \\ \u2028';
    const sent = attachMailjetTrackingId({ ...message, EventPayload: '' }, id);
    expect(sent.EventPayload).toMatch(/^[\x20-\x7e]*$/);
    expect(readMailjetTrackingId({ Payload: sent.EventPayload })).toBe(id);
  });

  it('refuses an EventPayload that is no JSON object (it cannot hold a second value) and one that is not a string', () => {
    for (const EventPayload of ['order=42', '[1,2]', '"text"', '42', '<xml/>']) {
      expectMailwardenError(() => attachMailjetTrackingId({ ...message, EventPayload }, 'a'), 'tracking_id_not_carriable');
    }
    expectMailwardenError(() => attachMailjetTrackingId({ ...message, EventPayload: { a: 1 } }, 'a'), 'invalid_request');
    expectMailwardenError(() => attachMailjetTrackingId({ Messages: 'x' }, 'a'), 'invalid_request');
    expectMailwardenError(() => attachMailjetTrackingId({ Messages: [null] }, 'a'), 'invalid_request');
    // An empty EventPayload holds nothing to keep.
    expect(attachMailjetTrackingId({ ...message, EventPayload: '' }, 'a').EventPayload).toBe('{"service_id":"a"}');
  });

  it('validates the ID and the stream', () => {
    expectMailwardenError(() => attachMailjetTrackingId(message, ''), 'invalid_tracking_id');
    expectMailwardenError(() => attachMailjetTrackingId(message, 'a', { stream: 'Not A Stream' }), 'invalid_stream');
  });

  it('adds each message’s one-click unsubscribe headers for its one To recipient, keeping the caller’s others', () => {
    const sent = attachMailjetTrackingId(
      { Messages: [{ ...message, Headers: { 'X-Campaign': 'spring', 'list-unsubscribe': '<mailto:old@example.com>' } }] },
      'a',
      { unsubscribe: link },
    );
    expect(sent.Messages[0]!.Headers).toEqual({ 'X-Campaign': 'spring', ...link('jane@example.com').headers });
    expectMailwardenError(
      () =>
        attachMailjetTrackingId({ ...message, To: [{ Email: 'a@example.com' }, { Email: 'b@example.com' }] }, 'a', { unsubscribe: link }),
      'unsubscribe_not_carriable',
    );
    expectMailwardenError(() => attachMailjetTrackingId({ ...message, Headers: ['x'] }, 'a', { unsubscribe: link }), 'invalid_request');
  });
});

describe('readMailjetTrackingId and readMailjetStream', () => {
  it('read service_id and service_stream of the JSON object in Payload, else null', () => {
    const event = { Payload: '{"service_id":"a","service_stream":"news"}' };
    expect(readMailjetTrackingId(event)).toBe('a');
    expect(readMailjetStream(event)).toBe('news');
    expect(readMailjetTrackingId({ Payload: '{"service_id":42}' })).toBe('42');
    expect(readMailjetTrackingId({ Payload: { service_id: 'parsed' } })).toBe('parsed');
    for (const Payload of ['', 'csv,text', '{broken', '[1]', 42, null]) {
      expect(readMailjetTrackingId({ Payload })).toBeNull();
      expect(readMailjetStream({ Payload })).toBeNull();
    }
    expect(readMailjetTrackingId(null)).toBeNull();
  });
});

describe('parseJsonWithExactIntegers', () => {
  it('keeps the digits of integers beyond 2^53 and parses everything else as JSON.parse does', () => {
    expect(parseJsonWithExactIntegers('{"MessageID":19421777835146490}')).toEqual({ MessageID: '19421777835146490' });
    expect(JSON.parse('{"MessageID":19421777835146490}').MessageID).toBe(19421777835146488);
    expect(parseJsonWithExactIntegers('[-9007199254740993, 9007199254740991, 1.12345678901234567, 12345678901234567e2]')).toEqual([
      '-9007199254740993',
      9007199254740991,
      1.12345678901234567,
      12345678901234567e2,
    ]);
    expect(parseJsonWithExactIntegers('{"a":"19421777835146490 \\" 19421777835146490"}')).toEqual({
      a: '19421777835146490 " 19421777835146490',
    });
    expect(() => parseJsonWithExactIntegers('{"a":19421777835146490')).toThrow(SyntaxError);
    expect(() => parseJsonWithExactIntegers('019421777835146490')).toThrow(SyntaxError);
  });
});

describe('parseMailjetWebhook', () => {
  it('maps a grouped batch, keeping MessageID above 2^53 exact', () => {
    const receipt = parseMailjetWebhook(fixture('grouped.json'));
    expect(receipt.warnings).toEqual([]);
    expect(receipt.events.map((event) => [event.type, event.messageId, event.trackingId, event.stream])).toEqual([
      ['delivered', '19421777835146490', 'spring-sale', 'newsletter'],
      ['bounced', '19421777835146491', 'abc123', undefined],
      ['rejected', '19421777835146492', null, undefined],
      ['clicked', '19421777835146490', 'spring-sale', 'newsletter'],
    ]);
    const [sent, bounce, blocked, click] = receipt.events;
    expect(sent).toMatchObject({ provider: 'mailjet', recipient: 'api@mailjet.com', occurredAt: new Date(1762164250_000) });
    expect(sent!.details).toEqual({ smtpStatus: '2.0.0', diagnostic: 'sent (250 2.0.0 OK 1433333948 fa5si855896wjc.199 - gsmtp)' });
    expect(bounce).toMatchObject({ bounceClass: 'hard' });
    expect(bounce!.details).toMatchObject({ smtpStatus: '5.1.1', bounceClassification: 'recipient: user unknown' });
    expect(blocked).toMatchObject({ providerSuppression: 'bounce', details: { rejectReason: 'recipient: preblocked' } });
    expect(click!.details).toMatchObject({ url: 'https://mailjet.com' });
    expect(new Set(receipt.events.map((event) => event.eventKey)).size).toBe(4);
  });

  it('takes one bare event (version 1)', () => {
    const unsub = parseMailjetWebhook(fixture('unsub-single.json')).events;
    expect(unsub).toMatchObject([
      { type: 'unsubscribed', messageId: '20547674933128000', trackingId: 'spring-sale', stream: 'newsletter' },
    ]);
    const spam = parseMailjetWebhook(fixture('spam-single.json')).events;
    // A Payload that is not our JSON (the caller's own) carries no tracking ID.
    expect(spam).toMatchObject([{ type: 'complained', trackingId: null, details: { feedbackType: 'JMRPP' } }]);
  });

  const item = (fields: Record<string, unknown>) =>
    JSON.stringify({ event: 'bounce', time: 1762164252, MessageID: 1, email: 'x@example.org', ...fields });

  it('classifies bounces and blocks as the reference table says', () => {
    const classify = (fields: Record<string, unknown>) => {
      const [event] = parseMailjetWebhook(item(fields)).events;
      return [event!.type, event!.bounceClass, event!.providerSuppression];
    };
    expect(classify({ hard_bounce: false, error: 'quota exceeded' })).toEqual(['bounced', 'soft', undefined]);
    expect(classify({ hard_bounce: false, error: 'greylisted' })).toEqual(['deferred', undefined, undefined]);
    expect(classify({ hard_bounce: true, error: 'greylisted' })).toEqual(['bounced', 'hard', undefined]);
    expect(classify({ event: 'blocked', error: 'spam reporter' })).toEqual(['rejected', undefined, 'complaint']);
    expect(classify({ event: 'blocked', error: 'blacklisted' })).toEqual(['rejected', undefined, null]);
    expect(classify({ event: 'blocked', error: 'duplicate in campaign' })).toEqual(['rejected', undefined, null]);
    expect(classify({ event: 'open' })).toEqual(['opened', undefined, undefined]);
    expect(classify({ event: 'something-new' })).toEqual(['unknown', undefined, undefined]);
  });

  it('keys an event by what a retry repeats: the same item twice is one key, another click URL another', () => {
    const click = (url: string) => parseMailjetWebhook(item({ event: 'click', url })).events[0]!.eventKey;
    expect(click('https://a.example')).toBe(click('https://a.example'));
    expect(click('https://a.example')).not.toBe(click('https://b.example'));
  });

  it('answers an empty batch as a ping, skips unusable items with a warning, and refuses what is not JSON', () => {
    expect(parseMailjetWebhook('[]').notice).toBe('ping');
    const receipt = parseMailjetWebhook(`[${item({})},{"event":"open"},42,${item({ time: 'soon' })}]`);
    expect(receipt.events).toHaveLength(1);
    expect(receipt.warnings.map((warning) => warning.index)).toEqual([1, 2, 3]);
    expectMailwardenError(() => parseMailjetWebhook('nope'), 'invalid_payload');
    expectMailwardenError(() => parseMailjetWebhook('"text"'), 'invalid_payload');
  });
});

describe('createMailjetWebhook', () => {
  const credentials = { username: 'mailjet', password: randomBytes(16).toString('hex') };
  const auth = { basic: [{ username: 'old', password: 'rotated-out' }, credentials] };
  const webhook = createMailjetWebhook(env);

  it('admits the configured basic credentials, any of a rotation list', async () => {
    const receipt = await webhook.receive(post(fixture('grouped.json'), basic(credentials.username, credentials.password)), auth);
    expect(receipt.events).toHaveLength(4);
  });

  it('refuses a request without them, with others, or when none are configured', async () => {
    await expect(webhook.receive(post(fixture('grouped.json')), auth)).rejects.toMatchObject({ code: 'webhook_unauthorized' });
    await expect(webhook.receive(post('[]', basic(credentials.username, 'wrong')), auth)).rejects.toMatchObject({
      code: 'webhook_unauthorized',
    });
    await expect(webhook.receive(post('[]', basic(credentials.username, credentials.password)), { basic: [] })).rejects.toMatchObject({
      code: 'webhook_unauthorized',
    });
  });

  it('refuses a body that is not UTF-8 JSON as invalid_payload', async () => {
    const headers = basic(credentials.username, credentials.password);
    await expect(webhook.receive({ ...post(''), headers, rawBody: new Uint8Array([0xff]) }, auth)).rejects.toMatchObject({
      code: 'invalid_payload',
    });
  });
});

describe('mailjetWebhook (testing kit)', () => {
  const credentials = { username: 'mailjet', password: 'kit-secret' };
  const webhook = createMailjetWebhook(env);

  it('posts a grouped array, MessageID a bare 17-digit integer that comes back exact', async () => {
    const request = mailjetWebhook({
      auth: { basic: credentials },
      events: [{ type: 'opened', recipient: 'a@example.org', trackingId: 'x' }],
    });
    const text = new TextDecoder().decode(request.rawBody);
    const messageId = request.events[0]!.messageId;
    expect(messageId).toMatch(/^1\d{16}$/);
    expect(text.startsWith('[')).toBe(true);
    expect(text).toContain(`"MessageID":${messageId},`);
    const receipt = await webhook.receive(request, { basic: [credentials] });
    expect(receipt.events.map((event) => [event.type, event.messageId, event.trackingId])).toEqual([['opened', messageId, 'x']]);
  });

  it('posts one bare event with grouped: false, and refuses several, a sent event, or events it cannot name', async () => {
    const single = mailjetWebhook({
      auth: { basic: credentials },
      grouped: false,
      events: [{ type: 'unsubscribed', recipient: 'a@example.org', stream: 'news' }],
    });
    expect(new TextDecoder().decode(single.rawBody).startsWith('{')).toBe(true);
    const receipt = await webhook.receive(single, { basic: [credentials] });
    expect(receipt.events).toMatchObject([{ type: 'unsubscribed', trackingId: null, stream: 'news' }]);
    const two = [
      { type: 'opened' as const, recipient: 'a@example.org' },
      { type: 'opened' as const, recipient: 'b@example.org' },
    ];
    expectMailwardenError(() => mailjetWebhook({ grouped: false, events: two }), 'invalid_request');
    expectMailwardenError(() => mailjetWebhook({ events: [{ type: 'sent', recipient: 'a@example.org' }] }), 'invalid_request');
  });
});
