import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attachPostalTrackingId, readPostalTrackingId } from '../../src/carriers/postal.js';
import { postalWebhook, railsJson, signPostalBody } from '../../src/testing/postal.js';
import { createPostalWebhook, parsePostalPublicKey, parsePostalWebhook, type PostalWebhookAuth } from '../../src/webhooks/postal.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/postal/${name}`, import.meta.url), 'utf8');

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T12:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const base64Key = keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const auth: PostalWebhookAuth = { publicKey: base64Key };

function signed(text: string, options: { legacy?: boolean } = {}): WebhookRequest {
  const rawBody = new TextEncoder().encode(text);
  return { method: 'POST', headers: { 'content-type': 'application/json', ...signPostalBody(keys.privateKey, rawBody, options) }, rawBody };
}

describe('attachPostalTrackingId', () => {
  const message = {
    to: ['jane@example.com'],
    from: 'news@example.com',
    subject: 'Hello',
    plain_body: 'Hi',
    headers: { 'X-Campaign': '7' },
  };

  it('sets the tag to the tracking ID verbatim, leaving the input and the caller’s headers alone', () => {
    const before = structuredClone(message);
    expect(attachPostalTrackingId(message, 'Frühling 🌷 <2026> & "co"')).toEqual({ ...message, tag: 'Frühling 🌷 <2026> & "co"' });
    expect(message).toEqual(before);
  });

  it('fits a 128-code-point ID of 4-byte characters: Postal counts characters, not bytes (varchar(255) utf8mb4)', () => {
    const id = '😀'.repeat(128);
    expect(attachPostalTrackingId({ to: ['a@example.com'] }, id).tag).toBe(id);
  });

  it('keeps a tag equal to the ID, refuses another: Postal keeps one tag per message', () => {
    expect(attachPostalTrackingId({ to: ['a@example.com'], tag: 'x' }, 'x').tag).toBe('x');
    expect(attachPostalTrackingId({ to: ['a@example.com'], tag: '' }, 'x').tag).toBe('x');
    expect(attachPostalTrackingId({ to: ['a@example.com'], tag: null }, 'x').tag).toBe('x');
    expectMailwardenError(() => attachPostalTrackingId({ to: ['a@example.com'], tag: 'newsletter' }, 'x'), 'tracking_id_not_carriable');
    expectMailwardenError(
      () => attachPostalTrackingId({ to: ['a@example.com'], headers: { 'x-postal-tag': 'newsletter' } }, 'x'),
      'tracking_id_not_carriable',
    );
  });

  it('refuses a stream (the one tag holds the ID), an invalid ID and headers that are not a hash', () => {
    expectMailwardenError(
      () => attachPostalTrackingId({ to: ['a@example.com'] }, 'x', { stream: 'news' } as never),
      'tracking_id_not_carriable',
    );
    expect(attachPostalTrackingId({ to: ['a@example.com'] }, 'x', { stream: null }).tag).toBe('x');
    expectMailwardenError(() => attachPostalTrackingId({ to: ['a@example.com'] }, 'x'.repeat(129)), 'invalid_tracking_id');
    expectMailwardenError(() => attachPostalTrackingId({ to: ['a@example.com'], headers: [] }, 'x'), 'invalid_request');
  });

  it('puts the one recipient’s unsubscribe headers in headers, replacing those it had', () => {
    const link = { headers: { 'List-Unsubscribe': '<https://u.example.com/t>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } };
    const withOld = { ...message, headers: { 'X-Campaign': '7', 'list-unsubscribe': '<mailto:old@example.com>' } };
    expect(
      attachPostalTrackingId(withOld, 'x', { unsubscribe: (email) => (email === 'jane@example.com' ? link : undefined) }).headers,
    ).toEqual({
      'X-Campaign': '7',
      ...link.headers,
    });
    expectMailwardenError(
      () => attachPostalTrackingId({ ...message, to: ['a@example.com', 'b@example.com'] }, 'x', { unsubscribe: () => link }),
      'unsubscribe_not_carriable',
    );
  });

  it('reads the tag of a message event and of a bounce’s original message', () => {
    expect(readPostalTrackingId({ message: { tag: 'a' } })).toBe('a');
    expect(readPostalTrackingId({ original_message: { tag: 'b' }, bounce: { tag: null } })).toBe('b');
    expect(readPostalTrackingId({ message: { tag: null } })).toBeNull();
    expect(readPostalTrackingId({ message: { tag: '' } })).toBeNull();
    expect(readPostalTrackingId(null)).toBeNull();
  });
});

describe('parsePostalWebhook: Postal’s documented payloads', () => {
  it('a HardFail with an SMTP 5xx is a hard bounce keyed by the envelope uuid', () => {
    const receipt = parsePostalWebhook(fixture('message-delivery-failed.json'));
    expect(receipt.warnings).toEqual([]);
    expect(receipt.events).toEqual([
      {
        provider: 'postal',
        type: 'bounced',
        bounceClass: 'hard',
        messageId: '4b9e2c1a-7d3f-4e8b-9c0a-1f2e3d4c5b6a@rp.postal.example.com',
        recipient: 'x@example.org',
        trackingId: 'abc123',
        occurredAt: new Date(1762164252300),
        eventKey: '8c1d5a3e-4f7b-4c2a-9a51-6f3e2d1b0c9a',
        details: {
          smtpStatus: '5.1.1',
          diagnostic: '550 5.1.1 <x@example.org>: Recipient address rejected: User unknown',
          bounceClassification: 'HardFail',
        },
      },
    ]);
  });

  it('a HardFail after the maximum number of delivery attempts is a soft bounce, which suppresses nothing', () => {
    const [event] = parsePostalWebhook(fixture('message-delivery-failed-max-attempts.json')).events;
    expect(event).toMatchObject({ type: 'bounced', bounceClass: 'soft', details: { smtpStatus: '4.7.1' } });
  });

  it('a HardFail for a reason of Postal’s own is a reject without suppression', () => {
    const text = fixture('message-delivery-failed.json')
      .replace('Permanent SMTP delivery error when sending to mx.example.org', 'Message has a spam score higher than the threshold')
      .replace(/"output":"[^"]*"/, '"output":""');
    const [event] = parsePostalWebhook(text).events;
    expect(event).toMatchObject({
      type: 'rejected',
      providerSuppression: null,
      details: { rejectReason: 'Message has a spam score higher than the threshold' },
    });
  });

  it.each([
    ['message-sent.json', { type: 'delivered', trackingId: 'welcome-2026', details: { smtpStatus: '2.0.0' } }],
    ['message-delayed.json', { type: 'deferred', trackingId: null, details: { smtpStatus: '4.2.2', bounceClassification: 'SoftFail' } }],
    ['message-held.json', { type: 'rejected', providerSuppression: null, recipient: 'gone@example.org' }],
    ['message-bounced.json', { type: 'bounced', bounceClass: 'undetermined', recipient: 'later@example.org', trackingId: 'spring <2026>' }],
    ['message-link-clicked.json', { type: 'clicked', details: { url: 'https://example.com/spring?utm=1&x=2' } }],
    ['message-loaded.json', { type: 'opened', occurredAt: new Date(1762164900500), details: { userAgent: 'Mozilla/5.0' } }],
  ])('%s', (name, expected) => {
    const receipt = parsePostalWebhook(fixture(name));
    expect(receipt.warnings).toEqual([]);
    expect(receipt.events).toHaveLength(1);
    expect(receipt.events[0]).toMatchObject(expected);
  });

  it('a hold for another reason than the suppression list (a send limit) is unknown: it may yet be sent', () => {
    const text = fixture('message-held.json').replace(/"details":"[^"]*"/, '"details":"Server send limit has been exceeded"');
    expect(parsePostalWebhook(text).events[0]).toMatchObject({ type: 'unknown' });
  });

  it('incoming mail and events about no message record nothing; an unknown event is a warning', () => {
    expect(parsePostalWebhook(fixture('message-sent-incoming.json'))).toMatchObject({ events: [], notice: 'ping' });
    expect(parsePostalWebhook(fixture('domain-dns-error.json'))).toMatchObject({ events: [], notice: 'ping' });
    expect(parsePostalWebhook('{"event":"SendLimitApproaching","timestamp":1,"uuid":"u","payload":{}}')).toMatchObject({ notice: 'ping' });
    expect(parsePostalWebhook('{"event":"MessageDeleted","timestamp":1,"uuid":"u","payload":{"message":{"to":"a@x"}}}')).toMatchObject({
      events: [],
      skipped: 1,
      warnings: [{ index: 0, code: 'invalid_event' }],
    });
  });

  it('without a uuid, a retry still has one key: a hash of what it repeats', () => {
    const text = fixture('message-sent.json').replace(/"uuid":"[^"]*",/, '');
    const [a] = parsePostalWebhook(text).events;
    const [b] = parsePostalWebhook(text).events;
    expect(a!.eventKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a!.eventKey).toBe(b!.eventKey);
  });

  it('throws invalid_payload for a body that is not a JSON object', () => {
    expectMailwardenError(() => parsePostalWebhook('not json'), 'invalid_payload');
    expectMailwardenError(() => parsePostalWebhook('[]'), 'invalid_payload');
  });
});

describe('createPostalWebhook: RSA signatures over the raw body', () => {
  const webhook = createPostalWebhook(env);
  const text = fixture('message-delivery-failed.json');

  it('accepts X-Postal-Signature-256, and the legacy X-Postal-Signature alone (Postal before 3.2)', async () => {
    expect((await webhook.receive(signed(text), auth)).events).toHaveLength(1);
    const legacy = signed(text, { legacy: true });
    expect(legacy.headers).not.toHaveProperty('x-postal-signature-256');
    expect((await webhook.receive(legacy, auth)).events).toHaveLength(1);
  });

  it('verifies the bytes as sent: Rails’ \\u003c escapes are not re-serialized', async () => {
    expect(text).toContain('\\u003c');
    const request = signed(text);
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(text)));
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: reserialized }, auth), 'webhook_unauthorized');
  });

  it('checks the SHA-256 signature when present: a good SHA-1 beside a bad SHA-256 is refused', async () => {
    const request = signed(text);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = {
      ...request,
      headers: { ...request.headers, 'x-postal-signature-256': sign('sha256', request.rawBody, other.privateKey).toString('base64') },
    };
    await expectMailwardenError(() => webhook.receive(forged, auth), 'webhook_unauthorized');
  });

  it('refuses a missing, garbled or foreign signature, a tampered body, and no configured key', async () => {
    const request = signed(text);
    await expectMailwardenError(
      () => webhook.receive({ ...request, headers: { 'content-type': 'application/json' } }, auth),
      'webhook_unauthorized',
    );
    await expectMailwardenError(
      () => webhook.receive({ ...request, headers: { 'x-postal-signature-256': 'bm90IGEgc2lnbmF0dXJl' } }, auth),
      'webhook_unauthorized',
    );
    const tampered = new TextEncoder().encode(text.replace('x@example.org', 'y@example.org'));
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: tampered }, auth), 'webhook_unauthorized');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    await expectMailwardenError(() => webhook.receive(request, { publicKey: other }), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(request, { publicKey: '' }), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(request, undefined as never), 'webhook_unauthorized');
  });

  it('takes the key as PEM (SPKI or PKCS#1), bare base64, base64 with line breaks, or the whole DKIM-style record', async () => {
    const pem = keys.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const pkcs1 = keys.publicKey.export({ format: 'pem', type: 'pkcs1' }).toString();
    const wrapped = base64Key.replace(/(.{64})/g, '$1\n');
    const record = `v=DKIM1; t=s; h=sha256; p=${base64Key};`;
    for (const publicKey of [pem, pkcs1, wrapped, record]) {
      expect((await webhook.receive(signed(text), { publicKey })).events).toHaveLength(1);
    }
  });

  it('refuses a key that is no RSA public key', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expectMailwardenError(() => parsePostalPublicKey(ec), 'webhook_unauthorized');
    expectMailwardenError(() => parsePostalPublicKey('not a key'), 'webhook_unauthorized');
    expectMailwardenError(() => parsePostalPublicKey('-----BEGIN PUBLIC KEY-----\nxx\n-----END PUBLIC KEY-----'), 'webhook_unauthorized');
    expect(parsePostalPublicKey(base64Key).equals(keys.publicKey)).toBe(true);
  });
});

describe('the testing kit’s Postal requests', () => {
  it('are written as Rails writes JSON and signed both ways', () => {
    const request = postalWebhook({
      privateKey: keys.privateKey,
      events: [{ type: 'clicked', recipient: 'a@example.org', trackingId: '<b>&' }],
    });
    const text = new TextDecoder().decode(request.rawBody);
    expect(text).toContain('"tag":"\\u003cb\\u003e\\u0026"');
    expect(text).not.toMatch(/[<>&]/);
    expect(Object.keys(request.headers)).toEqual(
      expect.arrayContaining(['x-postal-signature', 'x-postal-signature-256', 'x-postal-signature-kid']),
    );
    expect(railsJson({ a: '\u2028' })).toBe('{"a":"\\u2028"}');
  });

  it('refuse what Postal cannot report: a send, a complaint, an unsubscribe, a stream', () => {
    for (const type of ['sent', 'complained', 'unsubscribed'] as const) {
      expect(() => postalWebhook({ privateKey: keys.privateKey, events: [{ type, recipient: 'a@example.org' }] })).toThrow(/Postal has no/);
    }
    expect(() =>
      postalWebhook({ privateKey: keys.privateKey, events: [{ type: 'delivered', recipient: 'a@example.org', stream: 'news' }] }),
    ).toThrow(/cannot carry a stream/);
  });
});
