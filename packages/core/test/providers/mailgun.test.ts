import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAILGUN_OPTIONS_MAX_BYTES,
  attachMailgunSmtpTrackingId,
  attachMailgunTrackingId,
  readMailgunLegacyTrackingId,
  readMailgunTrackingId,
} from '../../src/carriers/mailgun.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import { MailwardenError } from '../../src/errors.js';
import { createMailwarden } from '../../src/mailwarden.js';
import { createMemoryStore } from '../../src/memory-store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import {
  MAILGUN_DEFAULT_TOLERANCE_SECONDS,
  MAILGUN_TOKEN_MEMORY_SECONDS,
  createMailgunWebhook,
  parseMailgunLegacyWebhook,
  parseMailgunWebhook,
  type MailgunWebhookAuth,
} from '../../src/webhooks/mailgun.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';
import { mailgunApiUserVariables, mailgunSmtpUserVariables } from './mailgun.simulator.js';

const now = Date.parse('2026-01-01T01:00:00Z');
const env: WebhookEnvironment = {
  now: () => now,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const signingKey = randomBytes(16).toString('hex');
const auth: MailgunWebhookAuth = { signingKey };
const eventData = JSON.parse(readFileSync(new URL('./fixtures/mailgun/event-data.json', import.meta.url), 'utf8')) as Record<
  string,
  { 'event-data': Record<string, unknown> }
>;
const legacy = JSON.parse(readFileSync(new URL('./fixtures/mailgun/legacy.json', import.meta.url), 'utf8')) as Record<
  string,
  [string, string][]
>;

function signature(options: { timestamp?: string; token?: string; key?: string } = {}) {
  const timestamp = options.timestamp ?? String(Math.floor(now / 1000));
  const token = options.token ?? randomBytes(25).toString('hex');
  return {
    timestamp,
    token,
    signature: createHmac('sha256', options.key ?? signingKey)
      .update(timestamp + token)
      .digest('hex'),
  };
}

function jsonRequest(body: unknown): WebhookRequest {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, rawBody: new TextEncoder().encode(JSON.stringify(body)) };
}

function signedJson(name: string, options: Parameters<typeof signature>[0] = {}): WebhookRequest {
  return jsonRequest({ signature: signature(options), ...eventData[name]! });
}

/** A legacy form as Mailgun posts it: its fields (user variables merged in), then timestamp, token and signature. */
function signedForm(fields: [string, string][], options: Parameters<typeof signature>[0] = {}): WebhookRequest {
  const form = new URLSearchParams(fields);
  for (const [name, value] of Object.entries(signature(options))) form.append(name, value);
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: new TextEncoder().encode(form.toString()),
  };
}

async function receiveOne(request: WebhookRequest): Promise<DeliveryEvent> {
  const receipt = await createMailgunWebhook(env).receive(request, auth);
  expect(receipt.warnings).toEqual([]);
  expect(receipt.events).toHaveLength(1);
  expect(receipt.sources).toEqual([0]);
  return receipt.events[0]!;
}

describe('attachMailgunTrackingId', () => {
  it('adds v:service_id to a mailgun.js message object without touching the input', () => {
    const message = {
      from: 'news@mg.example.com',
      to: ['jane@example.com', 'john@example.com'],
      'o:tag': ['welcome'],
      'v:service_id': 'old',
      'v:plan': 'pro',
    };
    const snapshot = structuredClone(message);
    const next = attachMailgunTrackingId(message, 'welcome-2026');
    expect(message).toEqual(snapshot);
    expect(next).toEqual({ ...message, 'v:service_id': 'welcome-2026' });
    expect(mailgunApiUserVariables(next)).toEqual({ plan: 'pro', service_id: 'welcome-2026' });
  });

  it('returns a new URLSearchParams or FormData of the same kind, other fields kept', () => {
    const params = new URLSearchParams([
      ['to', 'a@example.com'],
      ['to', 'b@example.com'],
      ['v:service_id', 'old'],
    ]);
    const nextParams = attachMailgunTrackingId(params, 'x');
    expect(nextParams).toBeInstanceOf(URLSearchParams);
    expect([...nextParams]).toEqual([
      ['to', 'a@example.com'],
      ['to', 'b@example.com'],
      ['v:service_id', 'x'],
    ]);
    expect(params.get('v:service_id')).toBe('old');

    const form = new FormData();
    form.append('to', 'a@example.com');
    form.append('attachment', new Blob(['hello']), 'hello.txt');
    const nextForm = attachMailgunTrackingId(form, 'x');
    expect(nextForm).toBeInstanceOf(FormData);
    expect(nextForm.get('v:service_id')).toBe('x');
    expect((nextForm.get('attachment') as File).name).toBe('hello.txt');
    expect(form.has('v:service_id')).toBe(false);
  });

  it('removes a service_id the caller put into h:X-Mailgun-Variables, so the carriers never disagree', () => {
    const next = attachMailgunTrackingId({ 'h:X-Mailgun-Variables': '{"plan": "pro", "service_id": "old"}' }, 'x');
    expect(next).toEqual({ 'h:X-Mailgun-Variables': '{"plan": "pro"}', 'v:service_id': 'x' });
    const untouched = attachMailgunTrackingId({ 'h:X-Mailgun-Variables': '{ "plan" : 1.0 }' }, 'x');
    expect(untouched['h:X-Mailgun-Variables']).toBe('{ "plan" : 1.0 }');
  });

  it('leaves a caller header without service_id byte for byte, even an over-long unfolded one', () => {
    // Counterexample of the round-trip property (seed 1943334968): the generator wrote a 999-octet header
    // line. Mailgun refuses that; it is the caller's header, so variable mode does not rewrite it.
    const text = JSON.stringify({ ' ': 'v'.repeat(100), '"': 'v'.repeat(862) });
    expect(Buffer.byteLength(`X-Mailgun-Variables: ${text}`)).toBe(999);
    expect(() => mailgunApiUserVariables({ 'h:X-Mailgun-Variables': text })).toThrow(/999 octets/);
    expect(attachMailgunTrackingId({ 'h:X-Mailgun-Variables': text }, ' ')['h:X-Mailgun-Variables']).toBe(text);
    // The header variant rewrites it anyway, and folds it.
    const folded = attachMailgunTrackingId({ 'h:X-Mailgun-Variables': text }, ' ', { via: 'header' })['h:X-Mailgun-Variables'] as string;
    expect(folded).toContain('\r\n ');
    expect(mailgunApiUserVariables({ 'h:X-Mailgun-Variables': folded })).toEqual({
      ' ': 'v'.repeat(100),
      '"': 'v'.repeat(862),
      service_id: ' ',
    });
  });

  it('merges into h:X-Mailgun-Variables with via: header, keeping the other members byte for byte', () => {
    const next = attachMailgunTrackingId(
      {
        'h:x-mailgun-variables': '{ "big": 12345678901234567890, "nested": {"service_id": "inner"}, "service_id": "old" }',
        'v:service_id': 'old',
      },
      'a"b\u007f',
      { via: 'header' },
    );
    expect(next).toEqual({
      'h:x-mailgun-variables': '{"big": 12345678901234567890,"nested": {"service_id": "inner"},"service_id":"a\\"b\\u007f"}',
    });
    expect(mailgunApiUserVariables(next)['service_id']).toBe('a"b\u007f');
    expect(attachMailgunTrackingId({}, 'x', { via: 'header' })).toEqual({ 'h:X-Mailgun-Variables': '{"service_id":"x"}' });
  });

  it('folds the header between members when a line would exceed 998 octets', () => {
    const members = Array.from({ length: 6 }, (_, i) => `"k${i}": "${'v'.repeat(300)}"`);
    const next = attachMailgunTrackingId({ 'h:X-Mailgun-Variables': `{${members.join(', ')}}` }, '😀'.repeat(128), { via: 'header' });
    const value = next['h:X-Mailgun-Variables'] as string;
    const lines = `X-Mailgun-Variables: ${value}`.split('\r\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(998);
    for (const line of lines.slice(1)) expect(line.startsWith(' ')).toBe(true);
    expect(JSON.parse(value)).toMatchObject({ k0: 'v'.repeat(300), service_id: '😀'.repeat(128) });
    expect(mailgunApiUserVariables(next)['service_id']).toBe('😀'.repeat(128));
  });

  it('encodes an ID with CR or LF (multipart bodies turn them into CRLF) as base64url with v:service_id_enc', () => {
    expect(attachMailgunTrackingId({ to: 'a@example.com' }, 'a\nb')).toEqual({
      to: 'a@example.com',
      'v:service_id': 'YQpi',
      'v:service_id_enc': 'b64u',
    });
    const form = new FormData();
    form.append('v:service_id_enc', 'b64u');
    expect([...attachMailgunTrackingId(form, 'x').entries()]).toEqual([['v:service_id', 'x']]);
    expect([...attachMailgunTrackingId(new URLSearchParams(), '\r').entries()]).toEqual([
      ['v:service_id', 'DQ'],
      ['v:service_id_enc', 'b64u'],
    ]);
    // The JSON header escapes CR and LF itself: no encoding, and a stale v:service_id_enc is removed.
    expect(attachMailgunTrackingId({ 'v:service_id_enc': 'b64u' }, 'a\nb', { via: 'header' })).toEqual({
      'h:X-Mailgun-Variables': '{"service_id":"a\\nb"}',
    });
  });

  it("encodes an ID starting with U+FEFF, which Node's multipart parser (and so the legacy receiver) drops", async () => {
    const fields: Record<string, string> = attachMailgunTrackingId({ to: 'a@example.com' }, '\ufeffspring');
    expect(fields).toEqual({ to: 'a@example.com', 'v:service_id': '77u_c3ByaW5n', 'v:service_id_enc': 'b64u' });
    // Why: a value written as is comes back without its U+FEFF from Response.formData().
    const form = new FormData();
    form.append('service_id', '\ufeffspring');
    const sent = new Response(form);
    const parsed = await new Response(await sent.arrayBuffer(), {
      headers: { 'content-type': sent.headers.get('content-type')! },
    }).formData();
    expect(parsed.get('service_id')).toBe('spring');
    expect(readMailgunTrackingId({ 'user-variables': { service_id: fields['v:service_id'], service_id_enc: 'b64u' } })).toBe(
      '\ufeffspring',
    );
    // Only a leading one: inside an ID it is kept as is.
    expect(attachMailgunTrackingId({}, 'spring\ufeff')).toEqual({ 'v:service_id': 'spring\ufeff' });
  });

  it('refuses a header that is not a JSON object to merge into, and an invalid tracking ID', async () => {
    await expectMailwardenError(
      () => attachMailgunTrackingId({ 'h:X-Mailgun-Variables': 'nope' }, 'x', { via: 'header' }),
      'tracking_id_not_carriable',
    );
    await expectMailwardenError(
      () => attachMailgunTrackingId({ 'h:X-Mailgun-Variables': '[1]' }, 'x', { via: 'header' }),
      'tracking_id_not_carriable',
    );
    await expectMailwardenError(() => attachMailgunTrackingId({}, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachMailgunTrackingId({ 'h:X-Mailgun-Variables': 5 }, 'x'), 'invalid_request');
  });

  it('throws tracking_id_not_carriable only when the o:/h:/v: options exceed 16 kB', async () => {
    const id = 'welcome-2026';
    const room = MAILGUN_OPTIONS_MAX_BYTES - 'v:service_id'.length - id.length - 'h:X-Filler'.length;
    expect(attachMailgunTrackingId({ 'h:X-Filler': 'a'.repeat(room), text: 'b'.repeat(50_000) }, id)).toHaveProperty('v:service_id', id);
    const error = await expectMailwardenError(
      () => attachMailgunTrackingId({ 'h:X-Filler': 'a'.repeat(room + 1) }, id),
      'tracking_id_not_carriable',
    );
    expect(error.message).toContain('16 kB');
    expect(error.message).toContain('X-Mailgun-Variables');
  });
});

describe('attachMailgunSmtpTrackingId', () => {
  it('writes a prepared X-Mailgun-Variables header for nodemailer, merged with the existing one', () => {
    const headers = { 'X-Campaign': 'spring', 'x-mailgun-variables': '{"plan":"pro"}' };
    const next = attachMailgunSmtpTrackingId(headers, 'ü"x');
    expect(next).toEqual({
      'X-Campaign': 'spring',
      'x-mailgun-variables': { prepared: true, value: '{"plan":"pro","service_id":"\\u00fc\\"x"}' },
    });
    expect(headers['x-mailgun-variables']).toBe('{"plan":"pro"}');
    expect(mailgunSmtpUserVariables(next)).toEqual({ plan: 'pro', service_id: 'ü"x' });
    expect(attachMailgunSmtpTrackingId(undefined, 'x')).toEqual({ 'X-Mailgun-Variables': { prepared: true, value: '{"service_id":"x"}' } });
  });

  it("writes 7-bit JSON by default, the caller's members too (same JSON values), and raw UTF-8 with smtputf8", () => {
    const headers = { 'X-Mailgun-Variables': '{"city":"Zürich","n":1.0}' };
    const sevenBit = attachMailgunSmtpTrackingId(headers, 'Frühling 🌷', { prepared: false });
    expect(sevenBit).toEqual({ 'X-Mailgun-Variables': '{"city":"Z\\u00fcrich","n":1.0,"service_id":"Fr\\u00fchling \\ud83c\\udf37"}' });
    expect(JSON.parse(sevenBit['X-Mailgun-Variables'] as string)).toEqual({ city: 'Zürich', n: 1, service_id: 'Frühling 🌷' });
    const utf8 = attachMailgunSmtpTrackingId(headers, 'Frühling 🌷', { prepared: false, smtputf8: true });
    expect(utf8).toEqual({ 'X-Mailgun-Variables': '{"city":"Zürich","n":1.0,"service_id":"Frühling 🌷"}' });
  });

  it('writes =? as \\u003d? everywhere in the header, so no receiver decodes an encoded word out of the JSON', () => {
    const headers = { 'X-Mailgun-Variables': '{"note":"=?utf-8?q?=22?="}' };
    const value = attachMailgunSmtpTrackingId(headers, '=?UTF-8?B?IiI=?=', { prepared: false, smtputf8: true })['X-Mailgun-Variables'];
    expect(value).toBe('{"note":"\\u003d?utf-8?q?=22?=","service_id":"\\u003d?UTF-8?B?IiI\\u003d?="}');
    expect(JSON.parse(value as string)).toEqual({ note: '=?utf-8?q?=22?=', service_id: '=?UTF-8?B?IiI=?=' });
  });

  it('refuses a variable of yours that fits a line as UTF-8 but not once escaped to 7-bit, naming smtputf8', async () => {
    const headers = { 'X-Mailgun-Variables': JSON.stringify({ note: '日'.repeat(200) }) };
    const error = await expectMailwardenError(() => attachMailgunSmtpTrackingId(headers, 'x'), 'invalid_request');
    expect(error.message).toMatch(/"note".*smtputf8/);
    expect(
      JSON.parse((attachMailgunSmtpTrackingId(headers, 'x', { smtputf8: true })['X-Mailgun-Variables'] as { value: string }).value),
    ).toEqual({
      note: '日'.repeat(200),
      service_id: 'x',
    });
  });

  it('merges several X-Mailgun-Variables headers into one (nodemailer takes a list of plain strings only)', () => {
    const next = attachMailgunSmtpTrackingId(
      { 'X-Mailgun-Variables': ['{"a":1}', { prepared: true, value: '{"service_id":"old","b":2}' }] },
      'x',
      { prepared: false },
    );
    expect(next).toEqual({ 'X-Mailgun-Variables': '{"a":1,"b":2,"service_id":"x"}' });
  });

  it('replaces a service_id_enc the caller left, so a plain ID is never read as encoded', () => {
    const next = attachMailgunSmtpTrackingId({ 'X-Mailgun-Variables': '{"service_id_enc":"b64u","a":1}' }, 'x', { prepared: false });
    expect(next).toEqual({ 'X-Mailgun-Variables': '{"a":1,"service_id":"x"}' });
  });

  it('shows why the header must be prepared: nodemailer would encode a plain JSON value', () => {
    const plain = attachMailgunSmtpTrackingId({}, 'x', { prepared: false });
    expect(() => mailgunSmtpUserVariables(plain)).toThrow(/RFC 2047/);
  });

  it('refuses headers given as an array and an existing header that is not a JSON object', async () => {
    await expectMailwardenError(() => attachMailgunSmtpTrackingId([{ key: 'X-A', value: 'b' }], 'x'), 'invalid_request');
    await expectMailwardenError(() => attachMailgunSmtpTrackingId({ 'X-Mailgun-Variables': 'oops' }, 'x'), 'tracking_id_not_carriable');
  });
});

describe('readMailgunTrackingId', () => {
  it('reads user-variables.service_id: strings as sent, numbers as decimal strings', () => {
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 'abc' } })).toBe('abc');
    expect(readMailgunTrackingId({ 'event-data': { 'user-variables': { service_id: 'abc' } } })).toBe('abc');
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 123 } })).toBe('123');
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 1.5 } })).toBe('1.5');
    expect(readMailgunTrackingId({ 'user-variables': { service_id: true } })).toBeNull();
    expect(readMailgunTrackingId({ 'user-variables': { service_id: '' } })).toBeNull();
    expect(readMailgunTrackingId({ 'user-variables': null })).toBeNull();
    expect(readMailgunTrackingId(null)).toBeNull();
  });

  it('decodes service_id when service_id_enc is b64u, and reads nothing for another encoding or a bad value', () => {
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 'YQpi', service_id_enc: 'b64u' } })).toBe('a\nb');
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 'YQpi', service_id_enc: 'zip' } })).toBeNull();
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 'a.b', service_id_enc: 'b64u' } })).toBeNull();
    expect(readMailgunTrackingId({ 'user-variables': { service_id: 7, service_id_enc: 'b64u' } })).toBeNull();
    expect(
      readMailgunLegacyTrackingId([
        ['service_id', 'DQ'],
        ['service_id_enc', 'b64u'],
      ]),
    ).toBe('\r');
    expect(
      readMailgunLegacyTrackingId([
        ['service_id', 'DQ'],
        ['service_id_enc', ''],
      ]),
    ).toBeNull();
  });

  it('does not unwrap a double-encoded string: the quotes may be part of the ID', () => {
    expect(readMailgunTrackingId({ 'user-variables': { service_id: '"abc"' } })).toBe('"abc"');
  });

  it('reads the first service_id field of a legacy form', () => {
    expect(
      readMailgunLegacyTrackingId([
        ['event', 'opened'],
        ['service_id', 'a'],
        ['service_id', 'b'],
      ]),
    ).toBe('a');
    expect(readMailgunLegacyTrackingId([['event', 'opened']])).toBeNull();
  });
});

describe('Mailgun webhook receiver: JSON', () => {
  it('maps a delivered event field by field', async () => {
    const event = await receiveOne(signedJson('delivered'));
    expect(event).toEqual({
      provider: 'mailgun',
      type: 'delivered',
      messageId: '20260101000000.1.2A60A5F3D2B1C0FF@mg.example.com',
      recipient: 'jane@example.com',
      trackingId: 'welcome-2026',
      occurredAt: new Date(1767225660818),
      eventKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      details: { smtpStatus: '250', diagnostic: 'OK' },
    } satisfies DeliveryEvent);
  });

  it('maps every event type', async () => {
    const expected: Record<string, [DeliveryEvent['type'], string | null, string | null, string]> = {
      accepted: ['sent', null, null, 'jane@example.com'],
      delivered: ['delivered', null, null, 'jane@example.com'],
      'failed-permanent': ['bounced', 'hard', null, 'gone@example.net'],
      'failed-suppress-bounce': ['rejected', null, 'bounce', 'gone@example.net'],
      'failed-suppress-complaint': ['rejected', null, 'complaint', 'angry@example.com'],
      'failed-suppress-unsubscribe': ['rejected', null, 'unsubscribe', 'left@example.com'],
      'failed-temporary': ['deferred', null, null, 'busy@example.org'],
      'failed-delivery-status-null': ['bounced', 'hard', null, 'gone@example.net'],
      rejected: ['rejected', null, null, 'jane@example.com'],
      opened: ['opened', null, null, 'jane@example.com'],
      clicked: ['clicked', null, null, 'jane@example.com'],
      unsubscribed: ['unsubscribed', null, null, 'jane@example.com'],
      complained: ['complained', null, null, 'jane@example.com'],
      stored: ['unknown', null, null, 'inbox@mg.example.com'],
    };
    expect(Object.keys(expected).sort()).toEqual(Object.keys(eventData).sort());
    for (const [name, [type, bounceClass, suppression, recipient]] of Object.entries(expected)) {
      const event = await receiveOne(signedJson(name));
      expect([event.type, event.bounceClass ?? null, event.providerSuppression ?? null, event.recipient], name).toEqual([
        type,
        bounceClass,
        suppression,
        recipient,
      ]);
    }
  });

  it('survives delivery-status: null (anymail #361) and describes events in Mailgun words', async () => {
    const nullStatus = await receiveOne(signedJson('failed-delivery-status-null'));
    expect(nullStatus.details).toStrictEqual({ bounceClassification: 'permanent/generic' });
    expect((await receiveOne(signedJson('failed-permanent'))).details).toStrictEqual({
      smtpStatus: '5.1.1',
      diagnostic: 'smtp; 550 5.1.1 The email account that you tried to reach does not exist.',
      bounceClassification: 'permanent/bounce',
    });
    expect((await receiveOne(signedJson('failed-temporary'))).details).toStrictEqual({
      smtpStatus: '4.7.1',
      diagnostic: '451 4.7.1 Greylisted, please try again later',
      bounceClassification: 'temporary/generic',
    });
    // Code 605 is Mailgun's own, not an SMTP status.
    expect((await receiveOne(signedJson('failed-suppress-bounce'))).details).toStrictEqual({
      rejectReason: 'Not delivering to previously bounced address',
    });
    expect((await receiveOne(signedJson('opened'))).details).toStrictEqual({
      userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_13_6)',
    });
    expect((await receiveOne(signedJson('clicked'))).details).toStrictEqual({ url: 'https://example.com/start', userAgent: 'Mozilla/5.0' });
    const rejected = await receiveOne(signedJson('rejected'));
    expect(rejected.details).toStrictEqual({ rejectReason: 'Sandbox subdomains are for test purposes only.' });
    expect(rejected.messageId).toBe('20260101000000.1.B31A451A2E5422BB@sandbox55887.mailgun.org');
    expect(rejected.trackingId).toBeNull();
  });

  it('keys on event-data id and timestamp, not on the token, so a resent event is the same event', async () => {
    const first = await receiveOne(signedJson('opened'));
    const again = await receiveOne(signedJson('opened'));
    expect(again.eventKey).toBe(first.eventKey);
    const nextDay = structuredClone(eventData['opened']!);
    nextDay['event-data']['timestamp'] = (nextDay['event-data']['timestamp'] as number) + 86_400;
    expect(parseMailgunWebhook(nextDay).events[0]!.eventKey).not.toBe(first.eventKey);
  });

  it('strips angle brackets from the message id', () => {
    const body = structuredClone(eventData['opened']!);
    (body['event-data']['message'] as { headers: Record<string, string> }).headers['message-id'] = ' <abc@mg.example.com> ';
    expect(parseMailgunWebhook(body).events[0]!.messageId).toBe('abc@mg.example.com');
  });

  it('rejects a tampered signature, a wrong key, a stale or future timestamp', async () => {
    const webhook = createMailgunWebhook(env);
    const tampered = { signature: { ...signature(), signature: 'f'.repeat(64) }, ...eventData['delivered'] };
    await expectMailwardenError(() => webhook.receive(jsonRequest(tampered), auth), 'webhook_unauthorized');
    const swappedToken = { signature: { ...signature(), token: 'another-token' }, ...eventData['delivered'] };
    await expectMailwardenError(() => webhook.receive(jsonRequest(swappedToken), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signedJson('delivered', { key: 'wrong-key' }), auth), 'webhook_unauthorized');
    const seconds = Math.floor(now / 1000);
    const strict = { ...auth, toleranceSeconds: 300 };
    await expectMailwardenError(
      () => webhook.receive(signedJson('delivered', { timestamp: String(seconds - 301) }), strict),
      'webhook_unauthorized',
    );
    await expectMailwardenError(
      () => webhook.receive(signedJson('delivered', { timestamp: String(seconds + 301) }), strict),
      'webhook_unauthorized',
    );
    await expect(webhook.receive(signedJson('delivered', { timestamp: String(seconds - 300) }), strict)).resolves.toBeDefined();
    // The default admits Mailgun's retries of the same signature block for up to 8 hours, no longer.
    await expect(webhook.receive(signedJson('delivered', { timestamp: String(seconds - 8 * 3600 - 600) }), auth)).resolves.toBeDefined();
    await expectMailwardenError(
      () => webhook.receive(signedJson('delivered', { timestamp: String(seconds - 9 * 3600 - 1) }), auth),
      'webhook_unauthorized',
    );
    const noBlock = jsonRequest(eventData['delivered']);
    await expectMailwardenError(() => webhook.receive(noBlock, auth), 'webhook_unauthorized');
  });

  it('names its signed token, remembered past any tolerance up to 7 days, for intake to claim', async () => {
    const request = signedJson('delivered');
    const { token, timestamp } = JSON.parse(Buffer.from(request.rawBody).toString('utf8')).signature as {
      token: string;
      timestamp: string;
    };
    for (const toleranceSeconds of [60, undefined, 30 * 24 * 3600]) {
      const receipt = await createMailgunWebhook(env).receive(request, {
        ...auth,
        ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }),
      });
      const remembered = Math.max(toleranceSeconds ?? MAILGUN_DEFAULT_TOLERANCE_SECONDS, MAILGUN_TOKEN_MEMORY_SECONDS);
      expect(receipt.oneTimeToken).toStrictEqual({ token: `mailgun:${token}`, expiresAt: (Number(timestamp) + remembered) * 1000 });
    }
  });

  // Replays through intake, where the token is claimed: the same request again is a harmless retry
  // (its events are duplicates), the token with another body is refused, on every instance of a store.
  const intake = (store: Store = createMemoryStore()) =>
    createMailwarden({ store, webhooks: { auth: { acme: { mailgun: auth } }, environment: env } });
  const forgedWith = (request: WebhookRequest, event: string) =>
    jsonRequest({ ...(JSON.parse(Buffer.from(request.rawBody).toString('utf8')) as object), ...eventData[event] });

  it('stores a replayed request once, and refuses its token with another body', async () => {
    const mailwarden = intake();
    const request = signedJson('delivered');
    expect(await mailwarden.ingestWebhook('mailgun', 'acme', request)).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await mailwarden.ingestWebhook('mailgun', 'acme', request)).toMatchObject({ accepted: 0, duplicates: 1 });
    // Mailgun signs the token, not the body: a captured signature must not carry another event.
    const error = await expectMailwardenError(
      () => mailwarden.ingestWebhook('mailgun', 'acme', forgedWith(request, 'complained')),
      'webhook_unauthorized',
    );
    expect(error.message).toContain('already used');
    expect((await mailwarden.messages.list('acme')).items.map((message) => message.status)).toStrictEqual(['delivered']);
  });

  it('refuses the replay on another instance sharing the store', async () => {
    const store = createMemoryStore();
    const [first, second] = [intake(store), intake(store)];
    const request = signedJson('delivered');
    await first.ingestWebhook('mailgun', 'acme', request);
    await expectMailwardenError(() => second.ingestWebhook('mailgun', 'acme', forgedWith(request, 'complained')), 'webhook_unauthorized');
    expect(await second.ingestWebhook('mailgun', 'acme', request)).toMatchObject({ duplicates: 1 });
  });

  it('accepts the retry of a request whose events could not be stored (a 503)', async () => {
    const store = createMemoryStore();
    let failures = 1;
    const flaky: Store = {
      ...store,
      applyEvents: async (projectId, events) => {
        if (failures-- > 0) throw new MailwardenError('store_unavailable', 'down');
        return store.applyEvents(projectId, events);
      },
    };
    const mailwarden = intake(flaky);
    const request = signedForm(legacy['delivered']!);
    await expectMailwardenError(() => mailwarden.ingestWebhook('mailgun', 'acme', request), 'store_unavailable');
    expect(await mailwarden.ingestWebhook('mailgun', 'acme', request)).toMatchObject({ accepted: 1 });
  });

  it('without a store that claims tokens, still refuses a replayed token within this process', async () => {
    const { claimWebhookToken: _omitted, ...plain } = createMemoryStore();
    const mailwarden = intake(plain);
    const request = signedJson('delivered');
    await mailwarden.ingestWebhook('mailgun', 'acme', request);
    expect(await mailwarden.ingestWebhook('mailgun', 'acme', request)).toMatchObject({ duplicates: 1 });
    await expectMailwardenError(
      () => mailwarden.ingestWebhook('mailgun', 'acme', forgedWith(request, 'complained')),
      'webhook_unauthorized',
    );
  });

  it('answers bodies that can never be parsed with invalid_payload', async () => {
    const webhook = createMailgunWebhook(env);
    const text: WebhookRequest = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      rawBody: new TextEncoder().encode('nope'),
    };
    await expectMailwardenError(() => webhook.receive(text, auth), 'invalid_payload');
    await expectMailwardenError(() => webhook.receive(jsonRequest([1, 2]), auth), 'invalid_payload');
    await expectMailwardenError(() => webhook.receive(jsonRequest({ signature: signature() }), auth), 'invalid_payload');
  });

  it("answers the console's test post (Mailgun's sample message id) as a ping", async () => {
    const sample = structuredClone(eventData['delivered']!);
    sample['event-data']['recipient'] = 'alice@example.com';
    sample['event-data']['message'] = {
      headers: {
        to: 'Alice <alice@example.com>',
        'message-id': '20130503182626.18666.16540@mg.example.com',
        from: 'Bob <bob@mg.example.com>',
        subject: 'Test delivered webhook',
      },
    };
    const receipt = await createMailgunWebhook(env).receive(jsonRequest({ signature: signature(), ...sample }), auth);
    expect(receipt).toMatchObject({ events: [], skipped: 0, notice: 'ping' });
  });

  it('does not mistake a reason or code named like an Object.prototype member for a suppression list', () => {
    // Counterexample of the never-throw property: reason "constructor" found Object.prototype.constructor
    // in the reason table, turning a failed event into a rejected one with a function as providerSuppression.
    const failed = parseMailgunWebhook({
      'event-data': { event: 'failed', timestamp: 0, recipient: 'a@example.com', reason: 'constructor', severity: 'permanent' },
    });
    expect([failed.events[0]!.type, failed.events[0]!.bounceClass]).toEqual(['bounced', 'hard']);
    const dropped = parseMailgunLegacyWebhook([
      ['event', 'dropped'],
      ['recipient', 'a@example.com'],
      ['timestamp', '0'],
      ['code', 'toString'],
    ]);
    expect(dropped.events[0]!.providerSuppression).toBeNull();
  });

  it('skips an event without a recipient with a warning', () => {
    const receipt = parseMailgunWebhook({ 'event-data': { event: 'delivered', timestamp: 1 } });
    expect(receipt).toMatchObject({
      events: [],
      sources: [],
      skipped: 1,
      warnings: [{ index: 0, code: 'invalid_event', message: 'the delivered event has no recipient' }],
    });
  });
});

describe('Mailgun webhook receiver: legacy forms', () => {
  const signedAt = new Date(Math.floor(now / 1000) * 1000);

  it('maps every legacy event type', async () => {
    const expected: Record<string, [DeliveryEvent['type'], string | null, string | null, string]> = {
      delivered: ['delivered', null, null, 'jane@example.com'],
      'dropped-bounced-address': ['rejected', null, 'bounce', 'gone@example.net'],
      'dropped-unsubscribed': ['rejected', null, 'unsubscribe', 'left@example.com'],
      'dropped-spam': ['rejected', null, 'complaint', 'angry@example.com'],
      'dropped-old': ['rejected', null, null, 'nomx@example.org'],
      bounced: ['bounced', 'hard', null, 'gone@example.net'],
      complained: ['complained', null, null, 'angry@example.com'],
      unsubscribed: ['unsubscribed', null, null, 'jane@example.com'],
      opened: ['opened', null, null, 'jane@example.com'],
      'clicked-colliding-variables': ['clicked', null, null, 'jane@example.com'],
    };
    expect(Object.keys(expected).sort()).toEqual(Object.keys(legacy).sort());
    for (const [name, [type, bounceClass, suppression, recipient]] of Object.entries(expected)) {
      const event = await receiveOne(signedForm(legacy[name]!));
      expect([event.type, event.bounceClass ?? null, event.providerSuppression ?? null, event.recipient], name).toEqual([
        type,
        bounceClass,
        suppression,
        recipient,
      ]);
      expect(event.occurredAt, name).toEqual(signedAt);
    }
  });

  it('maps a dropped event field by field, the message id without brackets', async () => {
    const event = await receiveOne(signedForm(legacy['dropped-bounced-address']!));
    expect(event).toEqual({
      provider: 'mailgun',
      type: 'rejected',
      providerSuppression: 'bounce',
      messageId: '20160421180324.70521.79375.96884DDB@mg.example.com',
      recipient: 'gone@example.net',
      trackingId: 'welcome-2026',
      occurredAt: signedAt,
      eventKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      details: { rejectReason: 'Not delivering to previously bounced address' },
    } satisfies DeliveryEvent);
    expect((await receiveOne(signedForm(legacy['opened']!))).messageId).toBe('20160421180324.70521.79375.FFFF@mg.example.com');
    expect((await receiveOne(signedForm(legacy['dropped-old']!))).trackingId).toBeNull();
  });

  it("uses Mailgun's own fields when user variables named event, recipient, token, timestamp, signature collide", async () => {
    const event = await receiveOne(signedForm(legacy['clicked-colliding-variables']!));
    expect(event.type).toBe('clicked');
    expect(event.recipient).toBe('jane@example.com');
    expect(event.occurredAt).toEqual(signedAt);
    expect(event.trackingId).toBe('welcome-2026');
  });

  it('verifies the last token/timestamp/signature, not the user variable posted before them', async () => {
    const webhook = createMailgunWebhook(env);
    // A valid signature block posted first (as a user variable would be) does not cover a bad last one.
    const form = new URLSearchParams(legacy['opened']!);
    for (const [name, value] of Object.entries(signature())) form.append(name, value);
    for (const [name, value] of Object.entries({ ...signature(), signature: '0'.repeat(64) })) form.append(name, value);
    const request: WebhookRequest = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: new TextEncoder().encode(form.toString()),
    };
    await expectMailwardenError(() => webhook.receive(request, auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signedForm(legacy['opened']!, { key: 'wrong' }), auth), 'webhook_unauthorized');
  });

  it('reads a multipart legacy form and ignores its attachments', async () => {
    const form = new FormData();
    for (const [name, value] of legacy['dropped-bounced-address']!) form.append(name, value);
    form.append('attachment-1', new Blob(['Return-Path: <>\r\n\r\nbounce']), 'message.eml');
    for (const [name, value] of Object.entries(signature())) form.append(name, value);
    const encoded = new Request('http://localhost/', { method: 'POST', body: form });
    const request: WebhookRequest = {
      method: 'POST',
      headers: { 'content-type': encoded.headers.get('content-type')! },
      rawBody: new Uint8Array(await encoded.arrayBuffer()),
    };
    const event = await receiveOne(request);
    expect([event.type, event.providerSuppression, event.trackingId]).toEqual(['rejected', 'bounce', 'welcome-2026']);
    const broken = { ...request, rawBody: new TextEncoder().encode('not multipart') };
    await expectMailwardenError(() => createMailgunWebhook(env).receive(broken, auth), 'invalid_payload');
  });

  it('warns about an inbound-route post (no event field) and refuses an empty form', async () => {
    const receipt = parseMailgunLegacyWebhook([
      ['recipient', 'inbox@mg.example.com'],
      ['sender', 'bob@example.org'],
    ]);
    expect(receipt.skipped).toBe(1);
    expect(receipt.warnings[0]!.message).toContain('no event field');
    await expectMailwardenError(() => parseMailgunLegacyWebhook([]), 'invalid_payload');
  });
});
