import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MANDRILL_METADATA_MAX_BYTES, attachMandrillTrackingId, readMandrillTrackingId } from '../../src/carriers/mandrill.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import { createMandrillWebhook, parseMandrillWebhook, type MandrillWebhookAuth } from '../../src/webhooks/mandrill.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const eventsText = readFileSync(new URL('./fixtures/mandrill/events.json', import.meta.url), 'utf8');
const events = (): unknown[] => JSON.parse(eventsText) as unknown[];

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const webhookKey = randomBytes(16).toString('base64url');
const url = 'https://mail.example.com/projects/acme/webhooks/mandrill?source=mandrill';
const auth: MandrillWebhookAuth = { webhookKey, url };

/** Signs form fields the way Mandrill's documentation says: URL, then each field sorted by name as name + value. */
function signed(fields: Record<string, string>, options: { key?: string; signUrl?: string; header?: string } = {}): WebhookRequest {
  const names = Object.keys(fields).sort();
  const text = (options.signUrl ?? url) + names.map((name) => name + fields[name]).join('');
  const signature = createHmac('sha1', options.key ?? webhookKey)
    .update(text)
    .digest('base64');
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', [options.header ?? 'x-mandrill-signature']: signature },
    rawBody: new TextEncoder().encode(new URLSearchParams(fields).toString()),
  };
}

describe('attachMandrillTrackingId', () => {
  const request = {
    message: {
      from_email: 'news@example.com',
      to: [{ email: 'jane@example.net' }, { email: 'john@example.net' }],
      subject: 'Hello',
      metadata: { user_id: 111 },
      recipient_metadata: [
        { rcpt: 'jane@example.net', values: { service_id: 'caller-set', tier: 'gold' } },
        { rcpt: 'john@example.net', values: { tier: 'silver' } },
      ],
    },
    template_name: 'welcome',
  };

  it('writes message.metadata.service_id, overwrites a recipient-level one, and leaves the input alone', () => {
    const before = structuredClone(request);
    expect(attachMandrillTrackingId(request, 'welcome-2026')).toEqual({
      ...request,
      message: {
        ...request.message,
        metadata: { user_id: 111, service_id: 'welcome-2026' },
        recipient_metadata: [
          { rcpt: 'jane@example.net', values: { service_id: 'welcome-2026', tier: 'gold' } },
          { rcpt: 'john@example.net', values: { tier: 'silver' } },
        ],
      },
    });
    expect(request).toEqual(before);
  });

  it('refuses only when the metadata JSON, the caller’s plus ours, is over 200 bytes', async () => {
    const wrapper = '{"note":"","service_id":""}'.length;
    const fits = { message: { metadata: { note: 'n'.repeat(MANDRILL_METADATA_MAX_BYTES - wrapper - 3) } } };
    expect(Buffer.byteLength(JSON.stringify(attachMandrillTrackingId(fits, 'abc').message.metadata))).toBe(200);
    await expectMailwardenError(() => attachMandrillTrackingId(fits, 'abcd'), 'tracking_id_not_carriable');
    // UTF-8 bytes as JSON.stringify writes them: "😀" is 4 bytes, "\n" is written as two characters.
    expect(() => attachMandrillTrackingId({ message: {} }, '😀'.repeat(45))).not.toThrow(); // 17 + 180 bytes
    await expectMailwardenError(() => attachMandrillTrackingId({ message: {} }, '😀'.repeat(46)), 'tracking_id_not_carriable');
    await expectMailwardenError(() => attachMandrillTrackingId({ message: {} }, '\u0001'.repeat(31)), 'tracking_id_not_carriable');
    // A 128-character ASCII ID alone fits (145 bytes).
    expect(attachMandrillTrackingId({ message: {} }, 'a'.repeat(128)).message.metadata).toEqual({ service_id: 'a'.repeat(128) });
  });

  it('counts recipient metadata merged over the message metadata', async () => {
    const merged = {
      message: { metadata: { a: 'x'.repeat(90) }, recipient_metadata: [{ rcpt: 'j@example.net', values: { b: 'y'.repeat(90) } }] },
    };
    await expectMailwardenError(() => attachMandrillTrackingId(merged, 'abc'), 'tracking_id_not_carriable');
  });

  it("keeps the caller's SDK types", () => {
    interface SdkSendRequest {
      message: { to: { email: string }[]; metadata?: { [key: string]: unknown } };
      async?: boolean;
    }
    const sdkRequest: SdkSendRequest = { message: { to: [{ email: 'jane@example.net' }] } };
    const typed: SdkSendRequest = attachMandrillTrackingId(sdkRequest, 'abc');
    expect(typed.message.metadata).toEqual({ service_id: 'abc' });
  });

  it('validates the tracking ID and the metadata', async () => {
    await expectMailwardenError(() => attachMandrillTrackingId(request, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachMandrillTrackingId(request, 'x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => attachMandrillTrackingId({ message: { metadata: 'x' } }, 'abc'), 'invalid_request');
  });
});

describe('readMandrillTrackingId', () => {
  it('reads msg.metadata.service_id, numbers as their decimal string', () => {
    expect(readMandrillTrackingId({ msg: { metadata: { service_id: 'abc' } } })).toBe('abc');
    expect(readMandrillTrackingId({ msg: { metadata: { service_id: 111 } } })).toBe('111');
    expect(readMandrillTrackingId({ msg: { metadata: { service_id: true } } })).toBeNull();
    expect(readMandrillTrackingId({ msg: { metadata: [] } })).toBeNull();
    expect(readMandrillTrackingId({ msg: {} })).toBeNull();
    expect(readMandrillTrackingId({ reject: { email: 'a@example.net' } })).toBeNull();
  });
});

describe('parseMandrillWebhook', () => {
  const receipt = parseMandrillWebhook(events());
  const at = (index: number): DeliveryEvent => receipt.events[receipt.sources.indexOf(index)]!;
  const id = (index: number) => `exampleaaaaaaaaaaaaaaaaaaaaaaaa${String(index).padStart(2, '0')}`;
  const key = (index: number, event: string, url: string | null = null) =>
    createHash('sha256')
      .update(JSON.stringify([id(index), 'jane@example.net', event, 1384954000 + index, url]))
      .digest('hex');

  it.each([
    [0, 'send', { type: 'sent' }],
    // Its reply is in msg.smtp_events, not msg.diag.
    [
      1,
      'deferral',
      { type: 'deferred', details: { smtpStatus: '4.3.5', diagnostic: '451 4.3.5 Temporarily unavailable, try again later.' } },
    ],
    [
      2,
      'hard_bounce',
      {
        type: 'bounced',
        bounceClass: 'hard',
        details: {
          smtpStatus: '5.1.1',
          diagnostic: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
          bounceClassification: 'bad_mailbox',
        },
      },
    ],
    [
      3,
      'soft_bounce',
      {
        type: 'bounced',
        bounceClass: 'soft',
        details: { smtpStatus: '5.2.2', diagnostic: 'smtp;552 5.2.2 Over Quota', bounceClassification: 'mailbox_full' },
      },
    ],
    [4, 'delivered', { type: 'delivered' }],
    [5, 'open', { type: 'opened', trackingId: '20260101', details: { userAgent: 'Mozilla/5.0 (Macintosh)' } }],
    [7, 'spam', { type: 'complained' }],
    [8, 'unsub', { type: 'unsubscribed' }],
    [9, 'reject', { type: 'rejected', providerSuppression: null, trackingId: null }],
    [13, 'whatever_new', { type: 'unknown' }],
  ] as const)('maps item %i (%s)', (index, event, expected) => {
    expect(at(index)).toEqual({
      provider: 'mandrill',
      messageId: id(index),
      recipient: 'jane@example.net',
      trackingId: 'welcome-2026',
      occurredAt: new Date((1384954000 + index) * 1000),
      eventKey: key(index, event),
      ...expected,
    });
  });

  it('keys events by recipient too, so payloads without _id do not collide', () => {
    // Found by the ingest tests: two rejects in the same second without `_id` shared one key, so the
    // second recipient counted as a duplicate.
    const both = parseMandrillWebhook([
      { event: 'reject', ts: 1760000000, msg: { email: 'a@example.net' } },
      { event: 'reject', ts: 1760000000, msg: { email: 'b@example.net' } },
    ]);
    expect(both.events).toHaveLength(2);
    expect(both.events[0]!.eventKey).not.toBe(both.events[1]!.eventKey);
  });

  it('keys a click by its URL too', () => {
    expect(at(6)).toEqual({
      provider: 'mandrill',
      type: 'clicked',
      messageId: id(6),
      recipient: 'jane@example.net',
      trackingId: 'welcome-2026',
      occurredAt: new Date(1384954006_000),
      eventKey: key(6, 'click', 'https://example.com/start'),
      details: { url: 'https://example.com/start', userAgent: 'Mozilla/5.0 (Macintosh)' },
    });
  });

  it('ignores sync events and inbound messages without warnings', () => {
    expect(receipt.sources).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13]);
    expect(receipt.warnings).toEqual([]);
    expect(receipt.skipped).toBe(0);
  });

  it('skips malformed events with a warning and keeps the rest', () => {
    const good = events()[0];
    const result = parseMandrillWebhook([
      7,
      { ts: 1 },
      { event: 'send', ts: 1 },
      { event: 'send', ts: 1, msg: { metadata: {} } },
      { event: 'send', ts: 'soon', msg: { email: 'a@example.net' } },
      { event: 'send', ts: 1e300, msg: { email: 'a@example.net' } },
      good,
    ]);
    expect(result.warnings.map((warning) => [warning.index, warning.message])).toEqual([
      [0, 'the event is not an object'],
      [1, 'the event has no event name'],
      [2, 'the send event has no msg object'],
      [3, 'the send event has no msg.email'],
      [4, 'the send event has no valid ts'],
      [5, 'the send event has no valid ts'],
    ]);
    expect(result.skipped).toBe(6);
    expect(result.sources).toEqual([6]);
  });

  it('takes msg._id when the top-level _id is missing', () => {
    const [event] = parseMandrillWebhook([{ event: 'send', ts: 1, msg: { _id: 'abc', email: 'a@example.net' } }]).events;
    expect(event!.messageId).toBe('abc');
  });

  it('answers an empty batch as a ping and refuses a value that is not an array', async () => {
    expect(parseMandrillWebhook([])).toEqual({ events: [], sources: [], warnings: [], skipped: 0, notice: 'ping' });
    for (const value of [{}, 'x', null, 1]) await expectMailwardenError(() => parseMandrillWebhook(value), 'invalid_payload');
  });
});

describe('createMandrillWebhook', () => {
  const webhook = createMandrillWebhook(env);
  const fields = { mandrill_events: eventsText };

  it('accepts a correctly signed batch', async () => {
    const receipt = await webhook.receive(signed(fields), auth);
    expect(receipt.events).toHaveLength(11);
  });

  it('accepts the X-Mailchimp-Signature header name too', async () => {
    expect((await webhook.receive(signed(fields, { header: 'x-mailchimp-signature' }), auth)).events).toHaveLength(11);
  });

  it('signs every form field, sorted by name', async () => {
    const receipt = await webhook.receive(signed({ zeta: '1', mandrill_events: '[]', alpha: '2' }), auth);
    expect(receipt.notice).toBe('ping');
  });

  it('refuses a tampered field', async () => {
    const request = signed(fields);
    const tampered = new TextEncoder().encode(
      new URLSearchParams({ mandrill_events: eventsText.replace('hard_bounce', 'delivered') }).toString(),
    );
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: tampered }, auth), 'webhook_unauthorized');
    const added = new TextEncoder().encode(`${new TextDecoder().decode(request.rawBody)}&extra=1`);
    await expectMailwardenError(() => webhook.receive({ ...request, rawBody: added }, auth), 'webhook_unauthorized');
  });

  it('refuses a signature over another URL (a trailing slash differs)', async () => {
    await expectMailwardenError(() => webhook.receive(signed(fields), { ...auth, url: `${url}/` }), 'webhook_unauthorized');
    await expectMailwardenError(
      () =>
        webhook.receive(signed(fields, { signUrl: 'https://mail.example.com/projects/acme/webhooks/mandrill/' }), {
          ...auth,
          url: 'https://mail.example.com/projects/acme/webhooks/mandrill',
        }),
      'webhook_unauthorized',
    );
  });

  it('refuses a wrong key, a missing signature, and an unconfigured webhook', async () => {
    await expectMailwardenError(
      () => webhook.receive(signed(fields, { key: randomBytes(16).toString('base64url') }), auth),
      'webhook_unauthorized',
    );
    const { 'x-mandrill-signature': _, ...headers } = signed(fields).headers;
    await expectMailwardenError(() => webhook.receive({ ...signed(fields), headers }, auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signed(fields, { key: '' }), { webhookKey: '', url }), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signed(fields), { webhookKey, url: '' }), 'webhook_unauthorized');
  });

  it("accepts Mandrill's URL check signed with test-webhook as a ping, and nothing else signed with that key", async () => {
    const check = signed({ mandrill_events: '[]' }, { key: 'test-webhook' });
    expect(await webhook.receive(check, auth)).toEqual({ events: [], sources: [], warnings: [], skipped: 0, notice: 'ping' });
    await expectMailwardenError(() => webhook.receive(check, { ...auth, allowTestKey: false }), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(signed(fields, { key: 'test-webhook' }), auth), 'webhook_unauthorized');
    await expectMailwardenError(
      () => webhook.receive(signed({ mandrill_events: '[ ]' }, { key: 'test-webhook' }), auth),
      'webhook_unauthorized',
    );
    await expectMailwardenError(
      () => webhook.receive(signed({ mandrill_events: '[]', x: '1' }, { key: 'test-webhook' }), auth),
      'webhook_unauthorized',
    );
    // The check is signed over the configured URL too.
    await expectMailwardenError(
      () => webhook.receive(signed({ mandrill_events: '[]' }, { key: 'test-webhook', signUrl: `${url}/` }), auth),
      'webhook_unauthorized',
    );
  });

  it('refuses an authenticated body without a usable mandrill_events field', async () => {
    await expectMailwardenError(() => webhook.receive(signed({ other: '1' }), auth), 'invalid_payload');
    await expectMailwardenError(() => webhook.receive(signed({ mandrill_events: '[{' }), auth), 'invalid_payload');
    await expectMailwardenError(() => webhook.receive(signed({ mandrill_events: '{}' }), auth), 'invalid_payload');
  });
});

describe('Mandrill SMTP attempts', () => {
  it('gives an event without msg.diag the diag of its latest attempt that has one', () => {
    const item = (smtpEvents: unknown) => ({
      event: 'deferral',
      _id: 'm1',
      ts: 1700000000,
      msg: { _id: 'm1', email: 'bob@example.com', ts: 1699999990, smtp_events: smtpEvents },
    });
    const parse = (smtpEvents: unknown) => parseMandrillWebhook([item(smtpEvents)]).events[0]!.details?.diagnostic;
    expect(
      parse([
        { ts: 1699999995, type: 'deferred', diag: '421 4.7.0 Try again later' },
        { ts: 1699999999, type: 'deferred', diag: '451 4.7.1 Greylisted' },
        { ts: 1699999997, type: 'deferred', diag: '450 4.2.0 Busy' },
        { ts: 1700000001, type: 'deferred' },
      ]),
    ).toBe('451 4.7.1 Greylisted');
    expect(parse([])).toBeUndefined();
    expect(parse('not a list')).toBeUndefined();
    expect(parse([null, 7, { diag: 5 }])).toBeUndefined();
  });
});
