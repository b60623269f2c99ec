import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { attachResendTrackingId, readResendStream, readResendTrackingId } from '../../src/carriers/resend.js';
import { resendRequest, resendWebhook } from '../../src/testing/resend.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { createResendWebhook, parseResendWebhook } from '../../src/webhooks/resend.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const NOW = Date.parse('2026-11-03T10:04:12.126Z');
const env: WebhookEnvironment = {
  now: () => NOW,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const secret = `whsec_${Buffer.from('resend-test-signing-secret').toString('base64')}`;
const oldSecret = `whsec_${Buffer.from('resend-old-signing-secret').toString('base64')}`;
const auth = { signingSecret: secret };
const webhook = createResendWebhook(env);

/** The bounce of Resend's documentation (docs/providers/resend.md#payload), tags as an object. */
const documentedBounce = {
  type: 'email.bounced',
  created_at: '2026-11-03T10:04:12.126Z',
  data: {
    email_id: '4ef3a0b2-8f4e-4f53-9f2c-7d5a1c0e9b11',
    created_at: '2026-11-03T10:04:11.894719+00:00',
    from: 'News <news@example.com>',
    to: ['x@example.org'],
    subject: 'Spring sale',
    tags: { service_id: 'spring-sale', service_stream: 'marketing' },
    headers: [{ name: 'X-Entity-Ref-ID', value: '42' }],
    bounce: {
      type: 'Permanent',
      subType: 'General',
      message: "The recipient's email provider sent a hard bounce message.",
      diagnosticCode: ['smtp; 550 5.1.1 user unknown'],
    },
  },
};

const signed = (body: unknown, at = new Date(NOW), id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W') =>
  resendRequest(JSON.stringify(body), [], secret, at, id);

describe('Resend signature (Svix)', () => {
  it('admits a request signed as Svix signs it, checked against the standardwebhooks package', async () => {
    const body = JSON.stringify(documentedBounce);
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const timestamp = Math.floor(NOW / 1000);
    const signature = new Webhook(secret).sign(id, new Date(NOW), body);
    // The scheme by hand: base64 HMAC-SHA256, keyed with the secret's base64 after whsec_, over id.timestamp.body.
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(signature).toBe(`v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`);
    const receipt = await webhook.receive(
      {
        method: 'POST',
        headers: { 'svix-id': id, 'svix-timestamp': String(timestamp), 'svix-signature': signature },
        rawBody: new TextEncoder().encode(body),
      },
      auth,
    );
    expect(receipt.events).toHaveLength(1);
  });

  it('admits any v1 entry of a space-separated list, and any configured secret (rotation)', async () => {
    const request = resendRequest(JSON.stringify(documentedBounce), [], oldSecret, new Date(NOW));
    const theirs = request.headers['svix-signature']!;
    const listed = { ...request, headers: { ...request.headers, 'svix-signature': `v1,bm90LWl0 v2,abc ${theirs}` } };
    expect((await webhook.receive(listed, { signingSecret: [secret, oldSecret] })).events).toHaveLength(1);
    await expectMailwardenError(() => webhook.receive(request, auth), 'webhook_unauthorized');
  });

  it('refuses a changed body, missing headers, a timestamp over 5 minutes off, or no usable secret', async () => {
    const request = signed(documentedBounce);
    const text = Buffer.from(request.rawBody).toString('utf8');
    const tampered = { ...request, rawBody: new TextEncoder().encode(text.replace('x@example.org', 'y@example.org')) };
    await expectMailwardenError(() => webhook.receive(tampered, auth), 'webhook_unauthorized');
    for (const name of ['svix-id', 'svix-timestamp', 'svix-signature']) {
      const { [name]: _, ...headers } = request.headers;
      await expectMailwardenError(() => webhook.receive({ ...request, headers }, auth), 'webhook_unauthorized');
    }
    // The same id signed anew with another timestamp: the timestamp is part of what is signed.
    await expectMailwardenError(
      () => webhook.receive({ ...request, headers: { ...request.headers, 'svix-timestamp': String(Math.floor(NOW / 1000) - 1) } }, auth),
      'webhook_unauthorized',
    );
    await expect(webhook.receive(signed(documentedBounce, new Date(Math.ceil(NOW / 1000) * 1000 - 300_000)), auth)).resolves.toBeDefined();
    await expectMailwardenError(() => webhook.receive(signed(documentedBounce, new Date(NOW - 301_000)), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signed(documentedBounce, new Date(NOW + 301_000)), auth), 'webhook_unauthorized');
    for (const signingSecret of ['', [], 'whsec_', 'whsec_not base64!', ['whsec_']]) {
      await expectMailwardenError(() => webhook.receive(request, { signingSecret }), 'webhook_unauthorized');
    }
  });

  it('keys events by svix-id, which a retry keeps while svix-timestamp changes', async () => {
    const first = await webhook.receive(signed(documentedBounce, new Date(NOW - 5000), 'msg_retry'), auth);
    const retry = await webhook.receive(signed(documentedBounce, new Date(NOW), 'msg_retry'), auth);
    expect(first.events[0]!.eventKey).toBe('msg_retry:x@example.org');
    expect(retry.events[0]!.eventKey).toBe(first.events[0]!.eventKey);
  });
});

describe('Resend events', () => {
  it('the documented bounce: hard, with its SMTP status, diagnostic and classification', async () => {
    const receipt = await webhook.receive(signed(documentedBounce), auth);
    expect(receipt).toMatchObject({ warnings: [], skipped: 0 });
    expect(receipt.events).toStrictEqual([
      {
        provider: 'resend',
        type: 'bounced',
        bounceClass: 'hard',
        providerSuppression: null,
        messageId: '4ef3a0b2-8f4e-4f53-9f2c-7d5a1c0e9b11',
        recipient: 'x@example.org',
        trackingId: 'spring-sale',
        stream: 'marketing',
        occurredAt: new Date('2026-11-03T10:04:12.126Z'),
        eventKey: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W:x@example.org',
        details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', bounceClassification: 'Permanent/General' },
      },
    ]);
  });

  const withType = (type: string, extra: Record<string, unknown> = {}) => ({
    ...documentedBounce,
    type,
    data: { ...documentedBounce.data, bounce: undefined, ...extra },
  });

  it.each([
    ['email.sent', {}, { type: 'sent' }],
    ['email.delivered', {}, { type: 'delivered' }],
    ['email.delivery_delayed', {}, { type: 'deferred' }],
    ['email.complained', {}, { type: 'complained' }],
    ['email.opened', {}, { type: 'opened' }],
    ['email.clicked', { click: { link: 'https://example.com/a', userAgent: 'UA', ipAddress: '192.0.2.1' } }, { type: 'clicked' }],
    ['email.failed', { failed: { reason: 'reached_daily_quota' } }, { type: 'rejected', providerSuppression: null }],
    [
      'email.suppressed',
      { suppressed: { type: 'OnAccountSuppressionList', message: 'on the list' } },
      { type: 'rejected', providerSuppression: 'bounce' },
    ],
    ['email.bounced', { bounce: { type: 'Transient', subType: 'MailboxFull' } }, { type: 'bounced', bounceClass: 'soft' }],
    // The webhook page names Temporary where the bounce page names Transient: both are soft.
    ['email.bounced', { bounce: { type: 'Temporary' } }, { type: 'bounced', bounceClass: 'soft' }],
    ['email.bounced', { bounce: { type: 'Undetermined' } }, { type: 'bounced', bounceClass: 'undetermined' }],
    ['email.bounced', {}, { type: 'bounced', bounceClass: 'undetermined' }],
  ])('%s %j is %j', (type, extra, expected) => {
    const receipt = parseResendWebhook(withType(type, extra), { svixId: 'msg_1' });
    expect(receipt.warnings).toStrictEqual([]);
    expect(receipt.events[0]).toMatchObject(expected);
  });

  it('keeps what Resend said: a failure’s reason, a suppression’s type, a click’s link', () => {
    const details = (type: string, extra: Record<string, unknown>) => parseResendWebhook(withType(type, extra)).events[0]!.details;
    expect(details('email.failed', { failed: { reason: 'reached_daily_quota' } })).toStrictEqual({ rejectReason: 'reached_daily_quota' });
    expect(details('email.suppressed', { suppressed: { type: 'OnAccountSuppressionList' } })).toStrictEqual({
      rejectReason: 'OnAccountSuppressionList',
    });
    expect(details('email.clicked', { click: { link: 'https://example.com/a', userAgent: 'UA' } })).toStrictEqual({
      url: 'https://example.com/a',
      userAgent: 'UA',
    });
  });

  it('events that are not about a sent message are a ping; an unknown email type is skipped with a warning', () => {
    for (const type of ['email.scheduled', 'email.received', 'contact.created', 'domain.updated', 'suppression.added']) {
      expect(parseResendWebhook({ type, created_at: '2026-11-03T10:04:12Z', data: {} })).toMatchObject({ notice: 'ping', events: [] });
    }
    expect(parseResendWebhook(withType('email.teleported'))).toMatchObject({
      events: [],
      skipped: 1,
      warnings: [{ index: 0, code: 'invalid_event', message: expect.stringContaining('email.teleported') }],
    });
  });

  it('one event per address of data.to; without svix-id, a hash of the event’s fields keys it', () => {
    const receipt = parseResendWebhook(withType('email.delivered', { to: ['a@example.org', 'b@example.org'] }));
    expect(receipt.events.map((event) => event.recipient)).toStrictEqual(['a@example.org', 'b@example.org']);
    expect(receipt.events[0]!.eventKey).toMatch(/^[0-9a-f]{64}$/);
    expect(receipt.events[0]!.eventKey).not.toBe(receipt.events[1]!.eventKey);
  });

  it('refuses a body that is not a JSON object; skips an event without type, data, time or recipient', async () => {
    await expectMailwardenError(() => webhook.receive(resendRequest('[]', [], secret, new Date(NOW)), auth), 'invalid_payload');
    await expectMailwardenError(() => webhook.receive(resendRequest('{', [], secret, new Date(NOW)), auth), 'invalid_payload');
    for (const body of [
      { data: {} },
      { type: 'email.sent' },
      withType('email.sent', { to: [] }),
      { ...withType('email.sent'), created_at: 'x' },
    ]) {
      const payload = body as Record<string, unknown>;
      if (payload['created_at'] === 'x') (payload['data'] as Record<string, unknown>)['created_at'] = 'y';
      expect(parseResendWebhook(payload)).toMatchObject({ events: [], skipped: 1 });
    }
  });
});

describe('Resend carrier', () => {
  it('an ID of the tag alphabet goes as is; others as base64url with service_id_enc; the caller’s tags kept in order', () => {
    const email = {
      from: 'a@example.com',
      to: 'b@example.org',
      tags: [
        { name: 'service_id', value: 'old' },
        { name: 'campaign', value: 'x' },
      ],
    };
    expect(attachResendTrackingId(email, 'spring-sale').tags).toStrictEqual([
      { name: 'campaign', value: 'x' },
      { name: 'service_id', value: 'spring-sale' },
    ]);
    expect(attachResendTrackingId(email, 'Frühling 🌷', { stream: 'digest' }).tags).toStrictEqual([
      { name: 'campaign', value: 'x' },
      { name: 'service_id', value: Buffer.from('Frühling 🌷').toString('base64url') },
      { name: 'service_id_enc', value: 'b64u' },
      { name: 'service_stream', value: 'digest' },
    ]);
    expect(email.tags).toHaveLength(2);
  });

  it('falls back to X-Service-Id when the tags are full (75), and reads it back from data.headers', () => {
    const tags = Array.from({ length: 75 }, (_, i) => ({ name: `t${i}`, value: 'v' }));
    const email = attachResendTrackingId({ to: 'b@example.org', tags, headers: { 'x-service-id': 'stale' } }, 'Frühling', {
      stream: 'digest',
    });
    expect(email.tags).toStrictEqual(tags);
    expect(email.headers).toStrictEqual({ 'X-Service-Id': '=?UTF-8?B?RnLDvGhsaW5n?=', 'X-Service-Stream': 'digest' });
    const headers = Object.entries(email.headers).map(([name, value]) => ({ name, value }));
    expect(readResendTrackingId({ tags: {}, headers })).toBe('Frühling');
    expect(readResendStream({ tags: {}, headers })).toBe('digest');
  });

  it('reads tags as an object and as a list of { name, value }', () => {
    const encoded = Buffer.from('日本').toString('base64url');
    expect(readResendTrackingId({ tags: { service_id: encoded, service_id_enc: 'b64u' } })).toBe('日本');
    expect(
      readResendTrackingId({
        tags: [
          { name: 'service_id', value: encoded },
          { name: 'service_id_enc', value: 'b64u' },
        ],
      }),
    ).toBe('日本');
    expect(readResendStream({ tags: [{ name: 'service_stream', value: 'digest' }] })).toBe('digest');
    expect(readResendTrackingId({ tags: { service_id: 'x', service_id_enc: 'rot13' } })).toBeNull();
    expect(readResendTrackingId({ tags: [] })).toBeNull();
  });

  it('adds the one-click unsubscribe headers of the one recipient; several recipients cannot carry them', async () => {
    const unsubscribe = (email: string) => ({
      headers: { 'List-Unsubscribe': `<https://u.example.com/${email}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    const email = attachResendTrackingId({ to: ['Ana <ana@example.org>'], headers: { 'X-Entity-Ref-ID': '1' } }, 'x', { unsubscribe });
    expect(email.headers).toStrictEqual({
      'X-Entity-Ref-ID': '1',
      'List-Unsubscribe': '<https://u.example.com/ana@example.org>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    await expectMailwardenError(
      () => attachResendTrackingId([{ to: ['a@example.org', 'b@example.org'] }], 'x', { unsubscribe }),
      'unsubscribe_not_carriable',
    );
  });

  it('refuses tags that are not a list and headers that are not an object', async () => {
    await expectMailwardenError(() => attachResendTrackingId({ tags: { service_id: 'x' } }, 'x'), 'invalid_request');
    await expectMailwardenError(() => attachResendTrackingId({ headers: [] }, 'x'), 'invalid_request');
  });
});

describe('resendWebhook (testing kit)', () => {
  it('signs with the first secret of a list, and refuses an unsubscribe Resend never reports', async () => {
    const request = resendWebhook({
      signingSecret: [secret, oldSecret],
      signedAt: new Date(NOW),
      events: [{ type: 'delivered', recipient: 'a@example.org', trackingId: '😀'.repeat(128), stream: 'digest' }],
    });
    const receipt = await webhook.receive(request, auth);
    expect(receipt.events).toMatchObject([{ type: 'delivered', trackingId: '😀'.repeat(128), stream: 'digest' }]);
    await expectMailwardenError(
      () => resendWebhook({ signingSecret: secret, events: [{ type: 'unsubscribed', recipient: 'a@example.org' }] }),
      'invalid_request',
    );
  });
});
