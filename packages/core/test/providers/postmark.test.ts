import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachPostmarkTrackingId, readPostmarkTrackingId, splitPostmarkTrackingId } from '../../src/carriers/postmark.js';
import {
  createPostmarkWebhook,
  parsePostmarkWebhook,
  postmarkRecordId,
  recordIdOf,
  type PostmarkWebhookAuth,
} from '../../src/webhooks/postmark.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/postmark/${name}`, import.meta.url), 'utf8');

const now = Date.parse('2026-01-01T12:00:00Z');
const env: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

function post(text: string, headers: Record<string, string> = {}): WebhookRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, rawBody: new TextEncoder().encode(text) };
}

const basic = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
});

describe('attachPostmarkTrackingId', () => {
  const message = { From: 'news@example.com', To: 'jane@example.com', Subject: 'Hello', TextBody: 'Hi', Metadata: { user_id: '42' } };

  it('writes a plain Metadata.service_id when it fits, leaving the input alone', () => {
    const before = structuredClone(message);
    expect(attachPostmarkTrackingId(message, 'welcome-2026')).toEqual({
      ...message,
      Metadata: { user_id: '42', service_id: 'welcome-2026' },
    });
    expect(message).toEqual(before);
    expect(attachPostmarkTrackingId({ To: 'a@example.com' }, 'x'.repeat(80)).Metadata).toEqual({ service_id: 'x'.repeat(80) });
  });

  it('splits a longer ID in order over service_id, service_id_2, …', () => {
    const id = `${'a'.repeat(80)}${'b'.repeat(20)}`;
    expect(attachPostmarkTrackingId(message, id).Metadata).toEqual({
      user_id: '42',
      service_id: 'a'.repeat(80),
      service_id_2: 'b'.repeat(20),
    });
  });

  it('splits on code points, each chunk at most 80 UTF-16 units', () => {
    expect(splitPostmarkTrackingId(`${'a'.repeat(79)}😀b`)).toEqual(['a'.repeat(79), '😀b']);
    const astral = '😀'.repeat(128);
    const chunks = splitPostmarkTrackingId(astral);
    expect(chunks.map((chunk) => chunk.length)).toEqual([80, 80, 80, 16]);
    expect(chunks.join('')).toBe(astral);
  });

  it("replaces the caller's own service_id keys, so no stale part is joined", () => {
    const stale = { To: 'a@example.com', Metadata: { service_id: 'old', service_id_2: 'old-tail', service_id_7: 'x', other: 'kept' } };
    expect(attachPostmarkTrackingId(stale, 'new').Metadata).toEqual({ other: 'kept', service_id: 'new' });
  });

  it('refuses a caller key that equals one of ours but for case', async () => {
    await expectMailwardenError(() => attachPostmarkTrackingId({ Metadata: { Service_Id: 'x' } }, 'abc'), 'tracking_id_not_carriable');
    // SERVICE_ID_2 only clashes when the ID needs a second field.
    expect(attachPostmarkTrackingId({ Metadata: { SERVICE_ID_2: 'x' } }, 'abc').Metadata).toEqual({ SERVICE_ID_2: 'x', service_id: 'abc' });
    await expectMailwardenError(
      () => attachPostmarkTrackingId({ Metadata: { SERVICE_ID_2: 'x' } }, 'a'.repeat(81)),
      'tracking_id_not_carriable',
    );
  });

  it('refuses when the fields needed plus the caller’s exceed 10', async () => {
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, index) => [`k${index}`, 'v']));
    expect(Object.keys(attachPostmarkTrackingId({ Metadata: nine }, 'a'.repeat(80)).Metadata)).toHaveLength(10);
    await expectMailwardenError(() => attachPostmarkTrackingId({ Metadata: nine }, 'a'.repeat(81)), 'tracking_id_not_carriable');
    const six = Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`k${index}`, 'v']));
    expect(Object.keys(attachPostmarkTrackingId({ Metadata: six }, '😀'.repeat(128)).Metadata)).toHaveLength(10);
  });

  it("keeps the caller's SDK types", () => {
    interface SdkMessage {
      From: string;
      To?: string;
      Metadata?: object;
      TrackOpens?: boolean;
    }
    const sdkMessage: SdkMessage = { From: 'news@example.com', To: 'jane@example.com' };
    const typed: SdkMessage = attachPostmarkTrackingId(sdkMessage, 'abc');
    const batch: SdkMessage[] = attachPostmarkTrackingId([sdkMessage], 'abc');
    expect([typed.Metadata, batch[0]!.Metadata]).toEqual([{ service_id: 'abc' }, { service_id: 'abc' }]);
  });

  it('handles a batch (an array of messages)', () => {
    const batch = attachPostmarkTrackingId([{ To: 'a@example.com' }, { To: 'b@example.com', Metadata: { k: 'v' } }], 'batch-1');
    expect(batch).toEqual([
      { To: 'a@example.com', Metadata: { service_id: 'batch-1' } },
      { To: 'b@example.com', Metadata: { k: 'v', service_id: 'batch-1' } },
    ]);
  });

  it('validates the tracking ID and the Metadata', async () => {
    await expectMailwardenError(() => attachPostmarkTrackingId(message, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachPostmarkTrackingId(message, 'x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => attachPostmarkTrackingId({ Metadata: ['x'] }, 'abc'), 'invalid_request');
  });
});

describe('readPostmarkTrackingId', () => {
  it('joins service_id, service_id_2, … up to the first gap', () => {
    expect(readPostmarkTrackingId({ Metadata: { service_id: 'abc' } })).toBe('abc');
    expect(readPostmarkTrackingId({ Metadata: { service_id_2: 'b', service_id: 'a', service_id_3: 'c' } })).toBe('abc');
    expect(readPostmarkTrackingId({ Metadata: { service_id: 'a', service_id_3: 'c' } })).toBe('a');
    expect(readPostmarkTrackingId({ Metadata: { service_id: 'a', service_id_2: 7 } })).toBe('a');
    expect(readPostmarkTrackingId({ Metadata: { service_id_2: 'b' } })).toBeNull();
    expect(readPostmarkTrackingId({ Metadata: {} })).toBeNull();
    expect(readPostmarkTrackingId({})).toBeNull();
    expect(readPostmarkTrackingId(null)).toBeNull();
  });
});

describe('parsePostmarkWebhook', () => {
  const receivedAt = new Date(now);
  const one = (name: string) => {
    const receipt = parsePostmarkWebhook(fixture(name), receivedAt);
    expect(receipt.warnings).toEqual([]);
    expect(receipt.sources).toEqual([0]);
    return receipt.events[0]!;
  };

  it('reads a hard bounce, with the exact digits of an ID above 2^53', () => {
    expect(Number.isSafeInteger(4323372036854775807)).toBe(false);
    expect(one('bounce-hard.json')).toEqual({
      provider: 'postmark',
      type: 'bounced',
      bounceClass: 'hard',
      messageId: '883953f4-6105-42a2-a16a-77a8eac79483',
      recipient: 'john@example.com',
      trackingId: `campaign/${'x'.repeat(71)}-tail`,
      occurredAt: new Date('2019-11-05T16:33:54.907Z'),
      eventKey: 'Bounce:4323372036854775807',
      details: {
        smtpStatus: '5.1.1',
        diagnostic: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
        bounceClassification: 'HardBounce',
      },
    });
  });

  it('tells apart IDs that JSON.parse rounds to the same number', () => {
    const text = fixture('bounce-hard.json');
    const other = text.replace('4323372036854775807', '4323372036854775808');
    expect(JSON.parse(other).ID).toBe(JSON.parse(text).ID);
    expect(parsePostmarkWebhook(other, receivedAt).events[0]!.eventKey).toBe('Bounce:4323372036854775808');
  });

  it('reads a soft bounce', () => {
    expect(one('bounce-soft.json')).toEqual({
      provider: 'postmark',
      type: 'bounced',
      bounceClass: 'soft',
      messageId: '9f1a6b1e-1b7c-4d8e-8a51-0c7c43a1b3f2',
      recipient: 'jane@example.com',
      trackingId: 'welcome-2026',
      occurredAt: new Date('2026-03-01T15:00:00.123Z'),
      eventKey: 'Bounce:1234567890',
      details: {
        smtpStatus: '4.2.2',
        diagnostic: 'smtp;452 4.2.2 The email account that you tried to reach is over quota.',
        bounceClassification: 'SoftBounce',
      },
    });
  });

  it('reads a spam complaint', () => {
    expect(one('spam-complaint.json')).toEqual({
      provider: 'postmark',
      type: 'complained',
      messageId: '00000000-0000-0000-0000-000000000042',
      recipient: 'john@example.com',
      trackingId: 'welcome-2026',
      occurredAt: new Date('2019-11-05T16:33:54.907Z'),
      eventKey: 'SpamComplaint:9007199254740993',
      details: { diagnostic: 'Test spam complaint details' },
    });
  });

  it.each([
    ['delivery.json', 'delivered', '2019-11-05T16:33:54Z', { smtpStatus: '2.0.0', diagnostic: 'smtp;250 2.0.0 OK' }],
    ['open.json', 'opened', '2019-11-05T16:40:00.100Z', { userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)' }],
    ['click.json', 'clicked', '2019-11-05T16:41:00Z', { url: 'https://example.com/start', userAgent: 'Mozilla/5.0 (Macintosh)' }],
  ])('reads %s', (name, type, time, details) => {
    const event = one(name);
    expect(event).toEqual({
      provider: 'postmark',
      type,
      messageId: '883953f4-6105-42a2-a16a-77a8eac79483',
      recipient: 'john@example.com',
      trackingId: 'welcome-2026',
      occurredAt: new Date(time),
      eventKey: event.eventKey,
      details,
    });
    expect(event.eventKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keys records without ID by their fields, so a retry matches and different records do not', () => {
    const keys = ['delivery.json', 'open.json', 'click.json'].map((name) => one(name).eventKey);
    expect(new Set(keys).size).toBe(3);
    expect(parsePostmarkWebhook(fixture('delivery.json'), new Date(0)).events[0]!.eventKey).toBe(keys[0]);
    const otherLink = JSON.stringify({ ...JSON.parse(fixture('click.json')), OriginalLink: 'https://example.com/other' });
    expect(parsePostmarkWebhook(otherLink, receivedAt).events[0]!.eventKey).not.toBe(keys[2]);
  });

  it.each([
    [
      'subscription-change-hard-bounce.json',
      {
        type: 'bounced',
        bounceClass: 'hard',
        messageId: 'b6e0e2a1-5d6c-4a0e-9b0f-8a2b1c3d4e5f',
        recipient: 'bounced-address@example.com',
        trackingId: 'welcome-2026',
        occurredAt: new Date('2020-02-01T10:53:34.416Z'),
      },
    ],
    [
      'subscription-change-unsubscribe.json',
      {
        type: 'unsubscribed',
        messageId: 'c7f1f3b2-6e7d-4b1f-8c1a-9b3c2d4e5f60',
        recipient: 'leaver@example.com',
        trackingId: null,
        // No stream carried: the unsubscribe is Postmark's MessageStream's (docs/providers/postmark.md#unsubscribes).
        stream: 'broadcast',
        occurredAt: new Date('2020-02-02T08:00:00Z'),
      },
    ],
    [
      'subscription-change-reactivated.json',
      {
        type: 'unknown',
        messageId: null,
        recipient: 'bounced-address@example.com',
        trackingId: null,
        occurredAt: new Date('2020-02-03T08:00:00Z'),
      },
    ],
  ])('reads %s', (name, expected) => {
    const event = one(name);
    expect(event).toEqual({ provider: 'postmark', eventKey: event.eventKey, ...expected });
  });

  it('maps a subscription change to a complaint', () => {
    const text = fixture('subscription-change-hard-bounce.json').replace('"HardBounce"', '"SpamComplaint"');
    expect(parsePostmarkWebhook(text, receivedAt).events[0]!.type).toBe('complained');
  });

  it.each([
    ['HardBounce', 1, { type: 'bounced', bounceClass: 'hard' }],
    ['SoftBounce', 4096, { type: 'bounced', bounceClass: 'soft' }],
    ['VirusNotification', 8192, { type: 'bounced', bounceClass: 'soft' }],
    ['Transient', 2, { type: 'deferred' }],
    ['DnsError', 256, { type: 'deferred' }],
    ['BadEmailAddress', 100000, { type: 'rejected', providerSuppression: null }],
    ['ManuallyDeactivated', 100002, { type: 'rejected', providerSuppression: null }],
    ['Blocked', 100006, { type: 'rejected', providerSuppression: null }],
    ['DMARCPolicy', 100009, { type: 'rejected', providerSuppression: null }],
    ['Unconfirmed', 100003, { type: 'rejected', providerSuppression: null }],
    ['Unsubscribe', 16, { type: 'unsubscribed' }],
    ['SpamNotification', 512, { type: 'complained' }],
    ['SpamComplaint', 100001, { type: 'complained' }],
    ['AutoResponder', 64, { type: 'unknown' }],
    ['AddressChange', 128, { type: 'unknown' }],
    ['ChallengeVerification', 16384, { type: 'unknown' }],
    ['Subscribe', 32, { type: 'unknown' }],
    ['OpenRelayTest', 1024, { type: 'unknown' }],
    ['Unknown', 2048, { type: 'unknown' }],
    ['SMTPApiError', 100007, { type: 'unknown' }],
    ['TemplateRenderingFailed', 100010, { type: 'unknown' }],
    ['InboundError', 100008, { type: 'unknown' }],
  ] as const)('maps bounce Type %s (TypeCode %i)', (type, code, expected) => {
    const record = JSON.parse(fixture('bounce-soft.json')) as Record<string, unknown>;
    const byType = parsePostmarkWebhook(JSON.stringify({ ...record, Type: type, TypeCode: code }), receivedAt).events[0]!;
    const { Type: _, ...withoutType } = record;
    const byCode = parsePostmarkWebhook(JSON.stringify({ ...withoutType, TypeCode: code }), receivedAt).events[0]!;
    for (const event of [byType, byCode]) {
      expect({ type: event.type, bounceClass: event.bounceClass, providerSuppression: event.providerSuppression }).toEqual({
        bounceClass: undefined,
        providerSuppression: undefined,
        ...expected,
      });
    }
  });

  it('uses the time of receipt for a record without its time field, keeping the key independent of it', () => {
    const text = fixture('bounce-no-id-no-time.json');
    const [event] = parsePostmarkWebhook(text, receivedAt).events;
    expect(event).toEqual({
      provider: 'postmark',
      type: 'deferred',
      messageId: '0c9a3f7e-4f7b-4b1c-9f8a-3f4d2e1c0b9a',
      recipient: 'slow@example.com',
      trackingId: null,
      occurredAt: receivedAt,
      eventKey: event!.eventKey,
      details: { smtpStatus: '4.7.0', diagnostic: 'smtp;421 4.7.0 Try again later', bounceClassification: 'Transient' },
    });
    expect(parsePostmarkWebhook(text, new Date(0)).events[0]!.eventKey).toBe(event!.eventKey);
  });

  it('skips a record naming no recipient (anymail #447) with a warning', () => {
    expect(parsePostmarkWebhook(fixture('bounce-unsubscribe-missing-fields.json'), receivedAt)).toEqual({
      events: [],
      sources: [],
      warnings: [{ index: 0, code: 'invalid_event', message: 'the Bounce record names no recipient' }],
      skipped: 1,
    });
  });

  it('skips an inbound message and unknown record types with a warning', () => {
    expect(parsePostmarkWebhook(fixture('inbound.json'), receivedAt).warnings).toEqual([
      { index: 0, code: 'invalid_event', message: 'the record has no RecordType (an inbound message?)' },
    ]);
    expect(parsePostmarkWebhook('{"RecordType":"Mystery","Recipient":"a@example.com"}', receivedAt).skipped).toBe(1);
  });

  it('throws invalid_payload for text that is not a JSON object', async () => {
    for (const text of ['', 'not json', '[]', '[{"RecordType":"Delivery"}]', '42', 'null', '"x"']) {
      await expectMailwardenError(() => parsePostmarkWebhook(text, receivedAt), 'invalid_payload');
    }
  });
});

describe('postmarkRecordId', () => {
  it.each([
    ['{"ID":4323372036854775807}', '4323372036854775807'],
    ['{ "ID" :\n 42 , "x": 1}', '42'],
    ['{"Metadata":{"ID":"nested"},"ID":7}', '7'],
    ['{"ID":7,"Metadata":{"ID":"nested"},"List":[{"ID":9}]}', '7'],
    ['{"Metadata":{"ID":1}}', undefined],
    ['{"Details":"\\"ID\\":5","Other":"ID"}', undefined],
    ['{"\\u0049D":12}', '12'],
    ['{"ID":1,"ID":2}', '2'],
    ['{"ID":"abc-1"}', 'abc-1'],
    ['{"ID":1.5e3}', undefined],
    ['{"ID":-1}', undefined],
    ['{"ID":null}', undefined],
    ['{"ID":{"ID":3}}', undefined],
    ['{"Key\\\\":"\\\\","ID":8}', '8'],
    // Not JSON: no ID (the receiver refuses such a body before it looks for one).
    ['{"ID":5,"unterminated', undefined],
    ['{"\\', undefined],
  ])('reads %s', (text, expected) => {
    expect(postmarkRecordId(text)).toBe(expected);
  });

  it('reads the same ID from the parsed record as from the text alone (the receiver reads the text only for a numeric ID)', () => {
    const idText = fc.oneof(
      fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
      fc.constantFrom('-1', '1.5e3', '1E3', '10.0', '-0', '0', 'null', 'true', '{"ID":3}', '[7]', '""'),
      fc.string({ maxLength: 110 }).map((value) => JSON.stringify(value)),
    );
    const member = fc.oneof(
      idText.map((value) => ({ name: '"ID"', value })),
      fc.constantFrom('"Metadata"', '"\\u0049D"', '"RecordType"', '"Email"').chain((name) => idText.map((value) => ({ name, value }))),
    );
    const space = fc.constantFrom('', ' ', '\n ', '\t');
    const text = fc
      .tuple(fc.array(fc.tuple(member, space, space), { maxLength: 5 }), space)
      .map(
        ([members, end]) =>
          `{${members.map(([{ name, value }, before, after]) => `${before}${name}${after}:${before}${value}${after}`).join(',')}${end}}`,
      );
    fc.assert(
      fc.property(text, (written) => {
        expect(recordIdOf(JSON.parse(written) as Record<string, unknown>, written)).toBe(postmarkRecordId(written));
      }),
    );
  });
});

describe('createPostmarkWebhook', () => {
  const webhook = createPostmarkWebhook(env);
  const password = randomBytes(16).toString('hex');
  const secret = randomBytes(24).toString('base64url');
  const body = fixture('delivery.json');

  it.each<[string, PostmarkWebhookAuth, Record<string, string>]>([
    ['basic auth (HttpAuth)', { basic: [{ username: 'postmark', password }] }, basic('postmark', password)],
    ['a custom header (HttpHeaders)', { headers: [{ name: 'X-Webhook-Secret', value: secret }] }, { 'x-webhook-secret': secret }],
    [
      'a custom header with basic auth also configured',
      { basic: [{ username: 'postmark', password }], headers: [{ name: 'X-Webhook-Secret', value: secret }] },
      { 'X-Webhook-Secret': secret },
    ],
    ['a bearer token', { bearer: [secret] }, { authorization: `Bearer ${secret}` }],
  ])('accepts %s', async (_, auth, headers) => {
    const receipt = await webhook.receive(post(body, headers), auth);
    expect(receipt.events.map((event) => event.type)).toEqual(['delivered']);
  });

  it.each<[string, PostmarkWebhookAuth, Record<string, string>]>([
    ['a wrong password', { basic: [{ username: 'postmark', password }] }, basic('postmark', 'wrong')],
    ['missing credentials', { basic: [{ username: 'postmark', password }] }, {}],
    ['a wrong header value', { headers: [{ name: 'X-Webhook-Secret', value: secret }] }, { 'x-webhook-secret': `${secret}x` }],
    ['a missing header', { headers: [{ name: 'X-Webhook-Secret', value: secret }] }, { 'x-other': secret }],
    ['the secret in another header', { headers: [{ name: 'X-Webhook-Secret', value: secret }] }, { authorization: `Bearer ${secret}` }],
    ['a wrong bearer token', { bearer: [secret] }, { authorization: `Bearer x${secret}` }],
    ['a missing bearer token', { bearer: [secret] }, {}],
    ['nothing configured', {}, basic('postmark', password)],
  ])('refuses %s', async (_, auth, headers) => {
    await expectMailwardenError(() => webhook.receive(post(body, headers), auth), 'webhook_unauthorized');
  });

  it('stamps records without a time with env.now, and refuses bodies that are not UTF-8 JSON objects', async () => {
    const auth = { basic: [{ username: 'postmark', password }] };
    const receipt = await webhook.receive(post(fixture('bounce-no-id-no-time.json'), basic('postmark', password)), auth);
    expect(receipt.events[0]!.occurredAt).toEqual(new Date(now));
    await expectMailwardenError(() => webhook.receive(post('[]', basic('postmark', password)), auth), 'invalid_payload');
    const invalidUtf8 = { ...post('', basic('postmark', password)), rawBody: new Uint8Array([0x7b, 0xff, 0x7d]) };
    await expectMailwardenError(() => webhook.receive(invalidUtf8, auth), 'invalid_payload');
  });
});
