import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SENDGRID_CUSTOM_ARGS_MAX_BYTES, attachSendGridTrackingId, readSendGridTrackingId } from '../../src/carriers/sendgrid.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { createSendGridWebhook, parseSendGridWebhook, type SendGridWebhookAuth } from '../../src/webhooks/sendgrid.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';
import { signSendGridBody } from '../../src/testing/sendgrid.js';
import { deliverSendGridMail } from './sendgrid.simulator.js';

const now = Date.parse('2026-01-01T00:10:00Z');
const env: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

function keyPair(): { privateKey: KeyObject; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  // What SendGrid shows as the verification key: base64 of the DER SubjectPublicKeyInfo.
  return { privateKey, publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
}

const keys = keyPair();
const auth: SendGridWebhookAuth = { publicKey: keys.publicKey };
const batch = new Uint8Array(readFileSync(new URL('./fixtures/sendgrid/batch.crlf.json', import.meta.url)));

function signedRequest(
  rawBody: Uint8Array,
  options: { timestamp?: string; privateKey?: KeyObject; headers?: Record<string, string> } = {},
): WebhookRequest {
  const timestamp = options.timestamp ?? String(Math.floor(now / 1000));
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-twilio-email-event-webhook-signature': signSendGridBody(options.privateKey ?? keys.privateKey, timestamp, rawBody),
      'x-twilio-email-event-webhook-timestamp': timestamp,
      ...options.headers,
    },
    rawBody,
  };
}

describe('attachSendGridTrackingId', () => {
  it('writes custom_args.service_id on the message and on every personalization, without touching the input', () => {
    const request = {
      from: { email: 'news@example.com' },
      subject: 'Hello',
      custom_args: { campaign: 'spring' },
      personalizations: [
        { to: [{ email: 'jane@example.com' }], custom_args: { user: '42', service_id: 'old' } },
        { to: [{ email: 'john@example.com' }] },
      ],
      content: [{ type: 'text/plain', value: 'Hi' }],
    };
    const snapshot = structuredClone(request);
    const next = attachSendGridTrackingId(request, 'welcome-2026');
    expect(request).toEqual(snapshot);
    expect(next).toEqual({
      ...request,
      custom_args: { campaign: 'spring', service_id: 'welcome-2026' },
      personalizations: [
        { to: [{ email: 'jane@example.com' }], custom_args: { user: '42', service_id: 'welcome-2026' } },
        { to: [{ email: 'john@example.com' }], custom_args: { service_id: 'welcome-2026' } },
      ],
    });
  });

  it('folds the SDK camelCase customArgs into custom_args and removes it', () => {
    const next = attachSendGridTrackingId(
      {
        to: 'jane@example.com',
        customArgs: { campaign: 'spring', service_id: 'stale' },
        personalizations: [{ to: 'jane@example.com', customArgs: { user: '42' }, custom_args: { user: '43' } }],
      },
      'welcome-2026',
    );
    expect(next).toEqual({
      to: 'jane@example.com',
      custom_args: { campaign: 'spring', service_id: 'welcome-2026' },
      personalizations: [{ to: 'jane@example.com', custom_args: { user: '43', service_id: 'welcome-2026' } }],
    });
    expect(next).not.toHaveProperty('customArgs');
    expect(next.personalizations?.[0]).not.toHaveProperty('customArgs');
  });

  it('accepts an SDK-shaped message type and gives the same type back', () => {
    interface SdkMail {
      to: string;
      from: string;
      customArgs?: { [key: string]: string };
      personalizations?: { to: string; customArgs?: { [key: string]: string } }[];
    }
    const mail: SdkMail = { to: 'jane@example.com', from: 'news@example.com' };
    const next: SdkMail = attachSendGridTrackingId(mail, 'x');
    expect(next.to).toBe('jane@example.com');
  });

  it('refuses an invalid tracking ID and a non-object custom_args', async () => {
    await expectMailwardenError(() => attachSendGridTrackingId({}, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSendGridTrackingId({}, 'x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSendGridTrackingId({ custom_args: ['a'] } as never, 'x'), 'invalid_request');
  });

  it('throws tracking_id_not_carriable only when the custom args a recipient gets exceed 10,000 bytes', async () => {
    const id = 'welcome-2026';
    const overhead = 'service_id'.length + id.length + 'filler'.length;
    const fits = { custom_args: { filler: 'a'.repeat(SENDGRID_CUSTOM_ARGS_MAX_BYTES - overhead) } };
    expect(attachSendGridTrackingId(fits, id).custom_args).toHaveProperty('service_id', id);
    const over = { custom_args: { filler: 'a'.repeat(SENDGRID_CUSTOM_ARGS_MAX_BYTES - overhead + 1) } };
    const error = await expectMailwardenError(() => attachSendGridTrackingId(over, id), 'tracking_id_not_carriable');
    expect(error.message).toContain('10,000');
    // Message-level and personalization-level args add up for that personalization's recipients.
    const split = {
      custom_args: { a: 'a'.repeat(5000) },
      personalizations: [{ to: [{ email: 'jane@example.com' }], custom_args: { b: 'b'.repeat(5000) } }],
    };
    await expectMailwardenError(() => attachSendGridTrackingId(split, id), 'tracking_id_not_carriable');
  });
});

describe('readSendGridTrackingId', () => {
  it('reads the top-level service_id key', () => {
    expect(readSendGridTrackingId({ event: 'open', service_id: 'a b"c' })).toBe('a b"c');
    expect(readSendGridTrackingId({ service_id: 42 })).toBe('42');
    expect(readSendGridTrackingId({ service_id: '' })).toBeNull();
    expect(readSendGridTrackingId({ service_id: { x: 1 } })).toBeNull();
    expect(readSendGridTrackingId({ event: 'bounce' })).toBeNull();
    expect(readSendGridTrackingId('service_id')).toBeNull();
  });
});

describe('SendGrid webhook receiver', () => {
  const webhook = createSendGridWebhook(env);

  it('keeps the CRLF separators of the fixture (the bytes SendGrid signs)', () => {
    expect(Buffer.from(batch).toString('utf8')).toContain('},\r\n{');
  });

  it('accepts a correctly signed batch and normalizes every event type', async () => {
    const receipt = await webhook.receive(signedRequest(batch), auth);
    expect(receipt.warnings).toEqual([]);
    expect(receipt.skipped).toBe(0);
    expect(receipt.sources).toEqual(receipt.events.map((_, index) => index));
    const summary = receipt.events.map((event) => [
      event.type,
      event.bounceClass ?? null,
      event.providerSuppression ?? null,
      event.recipient,
    ]);
    expect(summary).toEqual([
      ['sent', null, null, 'jane@example.com'],
      ['deferred', null, null, 'jane@example.com'],
      ['delivered', null, null, 'jane@example.com'],
      ['opened', null, null, 'jane@example.com'],
      ['clicked', null, null, 'jane@example.com'],
      ['bounced', 'hard', null, 'gone@example.net'],
      ['bounced', 'soft', null, 'blocked@example.org'],
      ['bounced', 'hard', null, 'late@example.org'],
      ['rejected', null, 'bounce', 'gone@example.net'],
      ['rejected', null, 'complaint', 'angry@example.com'],
      ['rejected', null, 'unsubscribe', 'left@example.com'],
      ['rejected', null, null, 'broken@example.com'],
      ['complained', null, null, 'jane@example.com'],
      ['unsubscribed', null, null, 'jane@example.com'],
      ['unsubscribed', null, null, 'jane@example.com'],
      ['unknown', null, null, 'jane@example.com'],
    ]);
    const keys = new Set(receipt.events.map((event) => event.eventKey));
    expect(keys.size).toBe(receipt.events.length);
    for (const event of receipt.events) expect(event.eventKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('maps the fields of one event exactly', async () => {
    const receipt = await webhook.receive(signedRequest(batch), auth);
    expect(receipt.events[5]).toEqual({
      provider: 'sendgrid',
      type: 'bounced',
      bounceClass: 'hard',
      messageId: 'qNwBLgPQQjW6DJvKQwSAbw',
      recipient: 'gone@example.net',
      trackingId: 'welcome-2026',
      occurredAt: new Date('2026-01-01T00:05:00Z'),
      eventKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      details: {
        smtpStatus: '5.1.1',
        diagnostic: '550 5.1.1 The email account that you tried to reach does not exist.',
        bounceClassification: 'Invalid Address',
      },
    } satisfies DeliveryEvent);
    const sent = receipt.events[0]!;
    expect(sent.messageId).toBe('14c5d75ce93');
    expect(sent.trackingId).toBe('welcome-2026');
    expect(sent.occurredAt).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(sent).not.toHaveProperty('details');
    const details = receipt.events.map((event) => event.details);
    expect(details[1]).toStrictEqual({ smtpStatus: '400', diagnostic: '400 try again later' });
    expect(details[2]).toStrictEqual({ smtpStatus: '250', diagnostic: '250 OK' });
    expect(details[3]).toStrictEqual({
      userAgent: 'Mozilla/4.0 (compatible; MSIE 6.1; Windows XP; .NET CLR 1.1.4322; .NET CLR 2.0.50727)',
    });
    expect(details[4]).toStrictEqual({ url: 'https://example.com/start', userAgent: 'Mozilla/4.0' });
    // Without bounce_classification, the bounce's type (bounce or blocked) is SendGrid's classification.
    expect(details[6]).toMatchObject({ smtpStatus: '4.7.0', bounceClassification: 'Reputation' });
    expect(details[7]).toMatchObject({ smtpStatus: '5.1.1', bounceClassification: 'bounce' });
    expect(details[8]).toStrictEqual({ rejectReason: 'Bounced Address' });
    expect(details[12]).toBeUndefined();
  });

  it('gives an asynchronous bounce (no sg_message_id, no custom args) a null message id and tracking ID', async () => {
    const receipt = await webhook.receive(signedRequest(batch), auth);
    const late = receipt.events[7]!;
    expect(late.messageId).toBeNull();
    expect(late.trackingId).toBeNull();
    expect(late.recipient).toBe('late@example.org');
  });

  it('keys events on their identifying fields, so a retry with a new sg_event_id is the same event', () => {
    const event = { email: 'a@example.com', timestamp: 1767225600, event: 'delivered', sg_message_id: 'abc.filter.0' };
    const first = parseSendGridWebhook([{ ...event, sg_event_id: 'one' }]).events[0]!;
    const retry = parseSendGridWebhook([{ ...event, sg_event_id: 'two' }]).events[0]!;
    expect(retry.eventKey).toBe(first.eventKey);
    const otherClick = parseSendGridWebhook([
      { ...event, event: 'click', url: 'https://a' },
      { ...event, event: 'click', url: 'https://b' },
    ]);
    expect(otherClick.events[0]!.eventKey).not.toBe(otherClick.events[1]!.eventKey);
    const bySmtpId = parseSendGridWebhook([
      { ...event, sg_message_id: undefined, 'smtp-id': '<x@y>' },
      { ...event, sg_message_id: undefined, 'smtp-id': '<z@y>' },
    ]);
    expect(bySmtpId.events[0]!.eventKey).not.toBe(bySmtpId.events[1]!.eventKey);
  });

  it('does not mistake a drop reason named like an Object.prototype member for a suppression list', () => {
    // Counterexample of the never-throw property: reason "constructor" found Object.prototype.constructor
    // in the reason table, giving providerSuppression a function and an event the schema refuses.
    const receipt = parseSendGridWebhook([
      { event: 'dropped', email: 'a@example.com', timestamp: 0, reason: 'constructor' },
      { event: 'dropped', email: 'a@example.com', timestamp: 0, reason: '__proto__' },
    ]);
    expect(receipt.events.map((event) => event.providerSuppression)).toEqual([null, null]);
  });

  it('matches drop reasons case-insensitively', () => {
    const receipt = parseSendGridWebhook([
      { email: 'a@example.com', timestamp: 1, event: 'dropped', reason: 'BOUNCED ADDRESS' },
      { email: 'a@example.com', timestamp: 1, event: 'dropped', reason: ' spam reporting address ' },
    ]);
    expect(receipt.events.map((event) => event.providerSuppression)).toEqual(['bounce', 'complaint']);
  });

  it('accepts the key as a PEM too', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const receipt = await webhook.receive(signedRequest(batch, { privateKey }), { publicKey: pem });
    expect(receipt.events).toHaveLength(16);
  });

  it('rejects a tampered body, including the same JSON re-serialized without the CRLFs', async () => {
    const request = signedRequest(batch);
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(Buffer.from(batch).toString('utf8'))));
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: reserialized }, auth), 'webhook_unauthorized');
    const tampered = Buffer.from(Buffer.from(batch).toString('utf8').replace('"Bounced Address"', '"Invalid"'));
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: tampered }, auth), 'webhook_unauthorized');
  });

  it('rejects a signature made with another key, a wrong key type and a malformed signature', async () => {
    const other = keyPair();
    await expectMailwardenError(
      () => webhook.receive(signedRequest(batch, { privateKey: other.privateKey }), auth),
      'webhook_unauthorized',
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    await expectMailwardenError(() => webhook.receive(signedRequest(batch), { publicKey: rsa }), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signedRequest(batch), { publicKey: 'not a key' }), 'webhook_unauthorized');
    const garbage = signedRequest(batch, { headers: { 'x-twilio-email-event-webhook-signature': 'AAAA' } });
    await expectMailwardenError(() => webhook.receive(garbage, auth), 'webhook_unauthorized');
  });

  it('rejects missing headers and stale or future timestamps beyond the tolerance', async () => {
    const { 'x-twilio-email-event-webhook-signature': _, ...unsigned } = signedRequest(batch).headers;
    await expectMailwardenError(() => webhook.receive({ ...signedRequest(batch), headers: unsigned }, auth), 'webhook_unauthorized');
    const seconds = Math.floor(now / 1000);
    await expectMailwardenError(
      () => webhook.receive(signedRequest(batch, { timestamp: String(seconds - 601) }), auth),
      'webhook_unauthorized',
    );
    await expectMailwardenError(
      () => webhook.receive(signedRequest(batch, { timestamp: String(seconds + 601) }), auth),
      'webhook_unauthorized',
    );
    await expect(webhook.receive(signedRequest(batch, { timestamp: String(seconds - 600) }), auth)).resolves.toBeDefined();
    const custom = { ...auth, toleranceSeconds: 60 };
    await expectMailwardenError(
      () => webhook.receive(signedRequest(batch, { timestamp: String(seconds - 61) }), custom),
      'webhook_unauthorized',
    );
    await expectMailwardenError(() => webhook.receive(signedRequest(batch, { timestamp: '1e9' }), auth), 'webhook_unauthorized');
  });

  it('also requires a configured OAuth bearer token', async () => {
    const oauth = { ...auth, oauthTokens: ['token-a', 'token-b'] };
    await expectMailwardenError(() => webhook.receive(signedRequest(batch), oauth), 'webhook_unauthorized');
    const wrong = signedRequest(batch, { headers: { authorization: 'Bearer token-c' } });
    await expectMailwardenError(() => webhook.receive(wrong, oauth), 'webhook_unauthorized');
    const right = signedRequest(batch, { headers: { authorization: 'Bearer token-b' } });
    expect((await webhook.receive(right, oauth)).events).toHaveLength(16);
  });

  it('answers a signed body that is not a JSON array with invalid_payload, and an empty array as a ping', async () => {
    const object = new TextEncoder().encode('{"event":"open"}');
    await expectMailwardenError(() => webhook.receive(signedRequest(object), auth), 'invalid_payload');
    const text = new TextEncoder().encode('not json');
    await expectMailwardenError(() => webhook.receive(signedRequest(text), auth), 'invalid_payload');
    const empty = await webhook.receive(signedRequest(new TextEncoder().encode('[]')), auth);
    expect(empty.notice).toBe('ping');
    expect(empty.events).toEqual([]);
  });

  it('round-trips a tracking ID through the simulator', async () => {
    const request = attachSendGridTrackingId(
      { personalizations: [{ to: [{ email: 'jane@example.com' }, { email: 'john@example.com' }] }] },
      '"quoted" ünïcode 😀',
    );
    const rawBody = deliverSendGridMail(request, 'delivered', Math.floor(now / 1000));
    const receipt = await webhook.receive(signedRequest(rawBody), auth);
    expect(receipt.events.map((event) => event.trackingId)).toEqual(['"quoted" ünïcode 😀', '"quoted" ünïcode 😀']);
  });
});

describe('parseSendGridWebhook', () => {
  it('skips malformed items with a warning and keeps the rest', () => {
    const receipt = parseSendGridWebhook([
      'text',
      { event: 'open', timestamp: 1 },
      { email: 'a@example.com', timestamp: 1 },
      { email: 'a@example.com', event: 'open', timestamp: '1767225600' },
      { email: 'a@example.com', event: 'open', timestamp: 1767225600, sg_message_id: `${'x'.repeat(1025)}.0` },
      { email: 'a@example.com', event: 'open', timestamp: 1767225600 },
    ]);
    expect(receipt.events).toHaveLength(1);
    expect(receipt.sources).toEqual([5]);
    expect(receipt.skipped).toBe(5);
    expect(receipt.warnings.map((warning) => [warning.index, warning.code])).toEqual([
      [0, 'invalid_event'],
      [1, 'invalid_event'],
      [2, 'invalid_event'],
      [3, 'invalid_event'],
      [4, 'invalid_event'],
    ]);
    expect(receipt.warnings[1]!.message).toBe('the open event has no email');
  });

  it("answers the console's test post (SendGrid's sample events for example@test.com) as a ping", () => {
    const sample = [
      {
        email: 'example@test.com',
        timestamp: 1513299569,
        'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
        event: 'processed',
        category: 'cat facts',
        sg_event_id: 'sg_event_id',
        sg_message_id: 'sg_message_id',
      },
      {
        email: 'example@test.com',
        timestamp: 1513299569,
        'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
        event: 'bounce',
        reason: '500 unknown recipient',
        status: '5.0.0',
        type: 'bounce',
        sg_event_id: 'sg_event_id',
        sg_message_id: 'sg_message_id',
      },
      { email: 'example@test.com', timestamp: 1513299569, event: 'spamreport', sg_event_id: 'sg_event_id', sg_message_id: 'sg_message_id' },
    ];
    expect(parseSendGridWebhook(sample)).toEqual({ events: [], sources: [], warnings: [], skipped: 0, notice: 'ping' });
    // A real batch that merely contains such an event is not a test post.
    expect(parseSendGridWebhook([...sample, { email: 'jane@example.com', timestamp: 1, event: 'open' }]).events).toHaveLength(4);
  });

  it('treats a bounce without a known type as undetermined and account events as unknown', () => {
    const receipt = parseSendGridWebhook([
      { email: 'a@example.com', timestamp: 1, event: 'bounce' },
      { email: 'a@example.com', timestamp: 1, event: 'account_status_change' },
    ]);
    expect(receipt.events.map((event) => [event.type, event.bounceClass ?? null])).toEqual([
      ['bounced', 'undetermined'],
      ['unknown', null],
    ]);
  });
});
