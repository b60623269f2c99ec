import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SPARKPOST_METADATA_MAX_BYTES, attachSparkPostTrackingId, readSparkPostTrackingId } from '../../src/carriers/sparkpost.js';
import type { DeliveryEvent } from '../../src/events/delivery-event.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { createSparkPostWebhook, parseSparkPostWebhook, type SparkPostWebhookAuth } from '../../src/webhooks/sparkpost.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/sparkpost/${name}`, import.meta.url), 'utf8'));

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

describe('attachSparkPostTrackingId', () => {
  const transmission = {
    campaign_id: 'welcome',
    metadata: { user_id: 42 },
    recipients: [
      { address: { email: 'jane@example.net', name: 'Jane' }, metadata: { service_id: 'caller-set', tier: 'gold' } },
      { address: 'john@example.net', tags: ['vip'] },
    ],
    content: { from: 'news@example.com', subject: 'Hello', text: 'Hi' },
  };

  it('writes transmission metadata.service_id and overwrites a recipient-level one, leaving the input alone', () => {
    const before = structuredClone(transmission);
    const sent = attachSparkPostTrackingId(transmission, 'welcome-2026');
    expect(transmission).toEqual(before);
    expect(sent).toEqual({
      ...transmission,
      metadata: { user_id: 42, service_id: 'welcome-2026' },
      recipients: [
        { address: { email: 'jane@example.net', name: 'Jane' }, metadata: { service_id: 'welcome-2026', tier: 'gold' } },
        { address: 'john@example.net', tags: ['vip'] },
      ],
    });
  });

  it('writes every inline recipient at the recipient level', () => {
    const sent = attachSparkPostTrackingId(transmission, 'welcome-2026', { level: 'recipient' });
    expect(sent.metadata).toEqual({ user_id: 42 });
    expect(sent.recipients.map((recipient) => (recipient as { metadata?: unknown }).metadata)).toEqual([
      { service_id: 'welcome-2026', tier: 'gold' },
      { service_id: 'welcome-2026' },
    ]);
  });

  it('keeps a stored recipient list as is at the transmission level, and refuses the recipient level', async () => {
    const stored = { recipients: { list_id: 'newsletter' }, content: { template_id: 'weekly' } };
    expect(attachSparkPostTrackingId(stored, 'weekly-7')).toEqual({ ...stored, metadata: { service_id: 'weekly-7' } });
    await expectMailwardenError(() => attachSparkPostTrackingId(stored, 'weekly-7', { level: 'recipient' }), 'tracking_id_not_carriable');
  });

  it("keeps the caller's SDK types", () => {
    interface SdkTransmission {
      recipients?: { address: string; metadata?: object }[] | { list_id: string };
      metadata?: object;
      campaign_id?: string;
    }
    const sdkTransmission: SdkTransmission = { recipients: [{ address: 'jane@example.net' }] };
    const typed: SdkTransmission = attachSparkPostTrackingId(sdkTransmission, 'abc');
    expect(typed.metadata).toEqual({ service_id: 'abc' });
  });

  it('validates the tracking ID', async () => {
    await expectMailwardenError(() => attachSparkPostTrackingId(transmission, ''), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSparkPostTrackingId(transmission, 'x'.repeat(129)), 'invalid_tracking_id');
    await expectMailwardenError(() => attachSparkPostTrackingId(transmission, '\ud800'), 'invalid_tracking_id');
  });

  it('refuses only when the caller metadata plus ours is over 10 KB for a recipient', async () => {
    const fill = (bytes: number) => ({ note: 'n'.repeat(bytes - '{"note":"","service_id":"abc"}'.length) });
    const atLimit = { recipients: [{ address: 'a@example.net' }], metadata: fill(SPARKPOST_METADATA_MAX_BYTES) };
    expect(Buffer.byteLength(JSON.stringify(attachSparkPostTrackingId(atLimit, 'abc').metadata))).toBe(SPARKPOST_METADATA_MAX_BYTES);
    const over = { ...atLimit, metadata: fill(SPARKPOST_METADATA_MAX_BYTES + 1) };
    await expectMailwardenError(() => attachSparkPostTrackingId(over, 'abc'), 'tracking_id_not_carriable');
    // The merge with recipient metadata counts too.
    const merged = {
      recipients: [{ address: 'a@example.net', metadata: { more: 'm'.repeat(6000) } }],
      metadata: { note: 'n'.repeat(6000) },
    };
    await expectMailwardenError(() => attachSparkPostTrackingId(merged, 'abc'), 'tracking_id_not_carriable');
  });

  it('refuses metadata that is not an object', async () => {
    await expectMailwardenError(() => attachSparkPostTrackingId({ metadata: 'x', recipients: [] }, 'abc'), 'invalid_request');
  });
});

describe('readSparkPostTrackingId', () => {
  it('reads rcpt_meta.service_id, numbers as their decimal string', () => {
    expect(readSparkPostTrackingId({ rcpt_meta: { service_id: 'abc' } })).toBe('abc');
    expect(readSparkPostTrackingId({ rcpt_meta: { service_id: 20260101 } })).toBe('20260101');
    expect(readSparkPostTrackingId({ rcpt_meta: { service_id: '' } })).toBeNull();
    expect(readSparkPostTrackingId({ rcpt_meta: { service_id: { nested: 1 } } })).toBeNull();
    expect(readSparkPostTrackingId({ rcpt_meta: null })).toBeNull();
    expect(readSparkPostTrackingId({})).toBeNull();
    expect(readSparkPostTrackingId('x')).toBeNull();
  });
});

describe('parseSparkPostWebhook', () => {
  const receipt = parseSparkPostWebhook(fixture('all-events.json'));
  const at = (index: number): DeliveryEvent => receipt.events[receipt.sources.indexOf(index)]!;
  const common = { provider: 'sparkpost', messageId: '65832150921904138', recipient: 'jane@example.net', trackingId: 'welcome-2026' };
  const time = (index: number) => new Date((1460989507 + index) * 1000);
  const key = (index: number) => `9235692769381385${index}`;

  it.each([
    [0, { type: 'sent', trackingId: null }],
    [1, { type: 'delivered' }],
    [
      2,
      {
        type: 'deferred',
        details: { smtpStatus: '4.4.4', diagnostic: '454 4.4.4 [internal] no MX or A for domain', bounceClassification: '21' },
      },
    ],
    [
      3,
      {
        type: 'bounced',
        bounceClass: 'hard',
        details: {
          smtpStatus: '5.1.1',
          diagnostic: '550 5.1.1 <jane@example.net>: Recipient address rejected: User unknown',
          bounceClassification: '10',
        },
      },
    ],
    [
      4,
      {
        type: 'bounced',
        bounceClass: 'soft',
        details: { smtpStatus: '5.2.2', diagnostic: '552 5.2.2 Mailbox full', bounceClassification: '22' },
      },
    ],
    [
      5,
      {
        type: 'rejected',
        providerSuppression: null,
        details: {
          smtpStatus: '5.7.1',
          rejectReason: '554 5.7.1 [internal] recipient address was suppressed due to customer policy',
          bounceClassification: '25',
        },
      },
    ],
    // No enhanced code in the reply: the reply code it starts with.
    [
      6,
      {
        type: 'bounced',
        bounceClass: 'undetermined',
        details: { smtpStatus: '550', diagnostic: '550 Rejected', bounceClassification: '1' },
      },
    ],
    [
      7,
      {
        type: 'bounced',
        bounceClass: 'soft',
        details: { smtpStatus: '5.7.1', diagnostic: '554 5.7.1 Service unavailable; client host blocked', bounceClassification: '51' },
      },
    ],
    [
      8,
      {
        type: 'bounced',
        bounceClass: 'hard',
        details: { smtpStatus: '5.0.0', diagnostic: '550 5.0.0 No such user', bounceClassification: '30' },
      },
    ],
    [9, { type: 'unknown', details: { diagnostic: 'Out of office until Monday', bounceClassification: '60' } }],
    [10, { type: 'unsubscribed', details: { diagnostic: 'unsubscribe', bounceClassification: '90' } }],
    [
      11,
      {
        type: 'rejected',
        providerSuppression: null,
        details: { smtpStatus: '5.7.1', rejectReason: '550 5.7.1 Unconfigured Sending Domain <example.com>', bounceClassification: '25' },
      },
    ],
    [
      12,
      {
        type: 'rejected',
        providerSuppression: null,
        details: {
          smtpStatus: '5.7.1',
          rejectReason: '554 5.7.1 recipient address suppressed due to customer policy',
          bounceClassification: '25',
        },
      },
    ],
    [
      13,
      {
        type: 'unknown',
        details: {
          smtpStatus: '5.3.3',
          diagnostic: "554 5.3.3 [internal] Error while rendering part html: substitution value 'name' did not exist",
        },
      },
    ],
    [14, { type: 'complained', details: { feedbackType: 'abuse' } }],
    [15, { type: 'clicked', details: { url: 'https://example.com/start', userAgent: 'Mozilla/5.0' } }],
    [16, { type: 'clicked', details: { url: 'https://example.com/amp', userAgent: 'Mozilla/5.0' } }],
    [17, { type: 'opened', trackingId: '20260101', details: { userAgent: 'Mozilla/5.0' } }],
    [18, { type: 'opened', details: { userAgent: 'Mozilla/5.0' } }],
    [19, { type: 'opened', details: { userAgent: 'Mozilla/5.0' } }],
    [20, { type: 'opened', details: { userAgent: 'Mozilla/5.0' } }],
    [21, { type: 'unsubscribed' }],
    [22, { type: 'unsubscribed', details: { url: 'https://example.com/unsubscribe', userAgent: 'Mozilla/5.0' } }],
    [23, { type: 'unknown', recipient: '15555550123' }],
  ] as const)('maps item %i', (index, expected) => {
    expect(at(index)).toEqual({ ...common, occurredAt: time(index), eventKey: key(index), ...expected });
  });

  it('maps a relay event to unknown and skips the recipient-less A/B test event with a warning', () => {
    expect(at(24)).toEqual({
      provider: 'sparkpost',
      type: 'unknown',
      messageId: null,
      recipient: 'inbound@relay.example.com',
      trackingId: null,
      occurredAt: new Date(1460989550_000),
      eventKey: '92356927693813899',
    });
    expect(receipt.warnings).toEqual([{ index: 25, code: 'invalid_event', message: 'the ab_test_completed event has no rcpt_to' }]);
    expect(receipt.skipped).toBe(1);
    expect(receipt.events).toHaveLength(25);
    expect(receipt.notice).toBeUndefined();
  });

  it('answers pings', () => {
    expect(parseSparkPostWebhook(fixture('ping.json'))).toEqual({ events: [], sources: [], warnings: [], skipped: 0, notice: 'ping' });
    expect(parseSparkPostWebhook({ msys: {} }).notice).toBe('ping');
    expect(parseSparkPostWebhook([]).notice).toBe('ping');
    const mixed = parseSparkPostWebhook([{ msys: {} }, (fixture('all-events.json') as unknown[])[1]]);
    expect(mixed.notice).toBeUndefined();
    expect(mixed.sources).toEqual([1]);
    expect(mixed.warnings).toEqual([]);
  });

  it('skips malformed items with a warning and keeps the rest', () => {
    const good = { msys: { message_event: { type: 'delivery', event_id: '7', rcpt_to: 'a@example.net', timestamp: '1700000000' } } };
    const result = parseSparkPostWebhook([
      'text',
      { cust: { id: '1' } },
      { msys: { message_event: good.msys.message_event, track_event: good.msys.message_event } },
      { msys: { message_event: [] } },
      { msys: { message_event: { rcpt_to: 'a@example.net', timestamp: '1700000000' } } },
      { msys: { message_event: { type: 'delivery', timestamp: '1700000000' } } },
      { msys: { message_event: { type: 'delivery', rcpt_to: 'a@example.net', timestamp: 'yesterday' } } },
      { msys: { message_event: { type: 'delivery', rcpt_to: 'a@example.net', timestamp: '99999999999999999999' } } },
      good,
    ]);
    expect(result.warnings.map((warning) => [warning.index, warning.message])).toEqual([
      [0, 'the item has no msys object'],
      [1, 'the item has no msys object'],
      [2, 'the item has more than one event class (message_event, track_event)'],
      [3, 'the event class is not an object'],
      [4, 'the event has no type'],
      [5, 'the delivery event has no rcpt_to'],
      [6, 'the delivery event has no valid timestamp'],
      [7, 'the delivery event has no valid timestamp'],
    ]);
    expect(result.skipped).toBe(8);
    expect(result.sources).toEqual([8]);
  });

  it('uses raw_rcpt_to without rcpt_to, ISO timestamps, and a stable hash key without event_id', () => {
    const item = {
      msys: {
        message_event: {
          type: 'bounce',
          bounce_class: 10,
          raw_rcpt_to: 'Jane@Example.net',
          transmission_id: '5',
          timestamp: '2026-01-02T03:04:05.000+00:00',
        },
      },
    };
    const [event] = parseSparkPostWebhook([item]).events;
    expect(event).toMatchObject({
      type: 'bounced',
      bounceClass: 'hard',
      recipient: 'Jane@Example.net',
      messageId: '5',
      occurredAt: new Date('2026-01-02T03:04:05Z'),
    });
    expect(event!.eventKey).toMatch(/^[0-9a-f]{64}$/);
    expect(parseSparkPostWebhook([structuredClone(item)]).events[0]!.eventKey).toBe(event!.eventKey);
  });

  it('throws invalid_payload only for a body that is neither an array nor an object', async () => {
    for (const body of ['text', 3, null, true]) {
      await expectMailwardenError(() => parseSparkPostWebhook(body), 'invalid_payload');
    }
  });
});

describe('createSparkPostWebhook', () => {
  const webhook = createSparkPostWebhook(env);
  const password = randomBytes(16).toString('hex');
  const token = randomBytes(24).toString('base64url');
  const body = fixture('ping.json');

  it.each<[string, SparkPostWebhookAuth, Record<string, string>]>([
    ['basic auth', { basic: [{ username: 'sparkpost', password }] }, basic('sparkpost', password)],
    [
      'basic auth, second of a rotation',
      {
        basic: [
          { username: 'old', password: 'old' },
          { username: 'sparkpost', password },
        ],
      },
      basic('sparkpost', password),
    ],
    ['an OAuth2 bearer token', { bearer: [token] }, { authorization: `Bearer ${token}` }],
    ['a custom header', { headers: [{ name: 'X-Webhook-Secret', value: token }] }, { 'x-webhook-secret': token }],
  ])('accepts %s', async (_, auth, headers) => {
    expect((await webhook.receive(post(body, headers), auth)).notice).toBe('ping');
  });

  it.each<[string, SparkPostWebhookAuth, Record<string, string>]>([
    ['a wrong password', { basic: [{ username: 'sparkpost', password }] }, basic('sparkpost', `${password}x`)],
    ['a wrong user', { basic: [{ username: 'sparkpost', password }] }, basic('other', password)],
    ['missing credentials', { basic: [{ username: 'sparkpost', password }] }, {}],
    ['a wrong bearer token', { bearer: [token] }, { authorization: `Bearer ${token}x` }],
    ['a missing bearer token', { bearer: [token] }, {}],
    ['basic credentials where a bearer token is configured', { bearer: [token] }, basic('sparkpost', token)],
    ['a wrong custom header', { headers: [{ name: 'X-Webhook-Secret', value: token }] }, { 'x-webhook-secret': 'guess' }],
    ['a missing custom header', { headers: [{ name: 'X-Webhook-Secret', value: token }] }, { 'x-other': token }],
    ['nothing configured', {}, basic('sparkpost', password)],
  ])('refuses %s', async (_, auth, headers) => {
    await expectMailwardenError(() => webhook.receive(post(body, headers), auth), 'webhook_unauthorized');
  });

  it('authenticates before looking at the body, then refuses a body that is not JSON', async () => {
    const auth = { basic: [{ username: 'sparkpost', password }] };
    await expectMailwardenError(() => webhook.receive(post('not json'), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post('not json', basic('sparkpost', password)), auth), 'invalid_payload');
  });

  it('parses an authenticated batch', async () => {
    const receipt = await webhook.receive(post(fixture('all-events.json'), basic('sparkpost', password)), {
      basic: [{ username: 'sparkpost', password }],
    });
    expect(receipt.events).toHaveLength(25);
    expect(receipt.events.every((event) => event.provider === 'sparkpost')).toBe(true);
  });
});
