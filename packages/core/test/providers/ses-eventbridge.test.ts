import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMailwarden, createMemoryStore, type DeliveryEvent } from '@mailwarden/core';
import { sesEventBridgeWebhook } from '../../src/testing/ses-eventbridge.js';
import { webhooksFor } from '../../src/testing/webhooks-for.js';
import { snsRawRequest } from '../../src/testing/ses.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import {
  createSesEventBridgeWebhook,
  parseSesEventBridgeWebhook,
  sesEventBridgeWebhookDefinition,
  type SesEventBridgeWebhookAuth,
} from '../../src/webhooks/ses-eventbridge.js';
import { parseSesWebhook } from '../../src/webhooks/ses.js';
import { routeProvider, webhookRoutes } from '../../src/webhooks/routes.js';
import { providers } from '../../src/events/delivery-event.js';
import { webhookChallenge, webhookRoute } from '../../src/webhooks/providers.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

const text = (path: string): string => readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
const fixture = (name: string): Record<string, unknown> => JSON.parse(text(`ses-eventbridge/${name}`)) as Record<string, unknown>;
const sesFixture = (name: string): Record<string, unknown> => JSON.parse(text(`ses/${name}`)) as Record<string, unknown>;

/** An EventBridge event of `detail`, as the default bus carries SES's. */
const eventOf = (detailType: string, detail: unknown, id = 'b9c8d7e6-f5a4-4b3c-8d2e-1f0a9b8c7d6e') => ({
  version: '0',
  id,
  'detail-type': detailType,
  source: 'aws.ses',
  account: '123456789012',
  time: '2026-03-02T10:15:08Z',
  region: 'us-east-1',
  resources: [],
  detail,
});

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-03-02T10:15:10Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

function post(body: unknown, headers: Record<string, string> = {}): WebhookRequest {
  const json = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    rawBody: new TextEncoder().encode(json),
  };
}

const basic = (username: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
});

describe('webhook routes', () => {
  it('are the providers, then ses-eventbridge, whose events carry ses', () => {
    expect(webhookRoutes).toEqual([...providers, 'ses-eventbridge']);
    for (const provider of providers) expect(routeProvider(provider)).toBe(provider);
    expect(routeProvider('ses-eventbridge')).toBe('ses');
    expect(webhookRoute('ses-eventbridge')).toBe('ses-eventbridge');
    expect(webhookChallenge('ses-eventbridge')).toMatch(/^Basic /);
  });

  it('an unknown route is not_found and names the routes', async () => {
    const error = await expectMailwardenError(() => webhookRoute('eventbridge'), 'not_found');
    expect(error.message).toContain('ses-eventbridge');
  });

  it('the definition makes a receiver whose events carry ses', () => {
    expect(sesEventBridgeWebhookDefinition.createReceiver(env).provider).toBe('ses');
  });
});

describe('parseSesEventBridgeWebhook', () => {
  it('maps the detail as the SES receiver maps an SNS Message: same events, keyed by the SES event itself', () => {
    const bridged = parseSesEventBridgeWebhook(fixture('bounce.json'));
    const viaSns = parseSesWebhook(sesFixture('bounce-permanent.json'), { snsMessageId: null });
    expect(bridged).toEqual(viaSns);
    expect(
      bridged.events.map(({ provider, type, bounceClass, recipient, trackingId }) => ({
        provider,
        type,
        bounceClass,
        recipient,
        trackingId,
      })),
    ).toEqual([
      { provider: 'ses', type: 'bounced', bounceClass: 'hard', recipient: 'ana@example.org', trackingId: 'spring-sale' },
      { provider: 'ses', type: 'bounced', bounceClass: 'hard', recipient: 'Bo@Example.org', trackingId: 'spring-sale' },
    ]);
    expect(bridged.events[0]!.details).toMatchObject({ smtpStatus: '5.1.1', bounceClassification: 'Permanent/General' });
  });

  it('keys events by the SES event, not the envelope id: a redelivery under another id is the same event', () => {
    const detail = sesFixture('delivery.json');
    const first = parseSesEventBridgeWebhook(eventOf('Email Delivered', detail, '11111111-1111-4111-8111-111111111111'));
    const again = parseSesEventBridgeWebhook(eventOf('Email Delivered', detail, '22222222-2222-4222-8222-222222222222'));
    expect(first.events.map((event) => event.eventKey)).toEqual(again.events.map((event) => event.eventKey));
    expect(new Set(first.events.map((event) => event.eventKey)).size).toBe(3);
  });

  it('takes every SES event type the SNS receiver takes, with its detail-type', () => {
    const cases: [string, string, DeliveryEvent['type']][] = [
      ['Email Sent', 'send.json', 'sent'],
      ['Email Delivered', 'delivery.json', 'delivered'],
      ['Email Delivery Delayed', 'delivery-delay.json', 'deferred'],
      ['Email Complaint Received', 'complaint-feedback.json', 'complained'],
      ['Email Rejected', 'reject.json', 'rejected'],
      ['Email Opened', 'open.json', 'opened'],
      ['Email Clicked', 'click.json', 'clicked'],
      ['Email Rendering Failed', 'rendering-failure.json', 'rejected'],
      ['Email Subscribed', 'subscription.json', 'unsubscribed'],
    ];
    for (const [detailType, name, type] of cases) {
      const receipt = parseSesEventBridgeWebhook(eventOf(detailType, sesFixture(name)));
      expect(receipt.warnings, name).toEqual([]);
      expect(receipt.events.length, name).toBeGreaterThan(0);
      expect(new Set(receipt.events.map((event) => event.type)), name).toEqual(new Set([type]));
    }
  });

  it('an unsubscribe keeps its stream, as through SNS', () => {
    const bridged = parseSesEventBridgeWebhook(fixture('subscription.json'));
    expect(bridged.events).toEqual(parseSesWebhook(sesFixture('subscription.json'), { snsMessageId: null }).events);
    expect(bridged.events.every((event) => event.type === 'unsubscribed')).toBe(true);
  });

  it("SES's events that are not about email (sending status, advisor) are a ping", () => {
    expect(parseSesEventBridgeWebhook(fixture('sending-status.json')).notice).toBe('ping');
    expect(parseSesEventBridgeWebhook(eventOf('Advisor Recommendation Status Open', {})).notice).toBe('ping');
  });

  it('takes the bare SES record of an input transformer ($.detail)', () => {
    expect(parseSesEventBridgeWebhook(sesFixture('bounce-permanent.json'))).toEqual(parseSesEventBridgeWebhook(fixture('bounce.json')));
  });

  it('an email event whose detail is unusable is a warning, as through SNS', () => {
    const receipt = parseSesEventBridgeWebhook(eventOf('Email Bounced', { eventType: 'Bounce', mail: {} }));
    expect(receipt.events).toEqual([]);
    expect(receipt.skipped).toBe(1);
  });

  it('throws invalid_payload for what is not an SES EventBridge event', async () => {
    for (const body of [
      [],
      'x',
      null,
      42,
      {},
      { ...eventOf('Email Bounced', sesFixture('bounce-permanent.json')), source: 'aws.ec2' },
      { ...eventOf('Email Bounced', sesFixture('bounce-permanent.json')), 'detail-type': 7 },
      eventOf('Email Bounced', 'not an object'),
      eventOf('Email Bounced', JSON.stringify(sesFixture('bounce-permanent.json'))),
    ]) {
      await expectMailwardenError(() => parseSesEventBridgeWebhook(body), 'invalid_payload');
    }
  });
});

describe('createSesEventBridgeWebhook', () => {
  const webhook = createSesEventBridgeWebhook(env);
  const password = randomBytes(16).toString('hex');
  const token = randomBytes(24).toString('base64url');
  const body = fixture('bounce.json');

  it.each<[string, SesEventBridgeWebhookAuth, Record<string, string>]>([
    ['a Basic connection', { basic: [{ username: 'eventbridge', password }] }, basic('eventbridge', password)],
    [
      'a Basic connection, second of a rotation',
      {
        basic: [
          { username: 'old', password: 'old' },
          { username: 'eventbridge', password },
        ],
      },
      basic('eventbridge', password),
    ],
    ['an API-key connection (a header of any name)', { headers: [{ name: 'x-api-key', value: token }] }, { 'x-api-key': token }],
    ['an OAuth connection (the bearer token the endpoint issued)', { bearer: [token] }, { authorization: `Bearer ${token}` }],
  ])('accepts %s', async (_, auth, headers) => {
    const receipt = await webhook.receive(post(body, headers), auth);
    expect(receipt.events).toHaveLength(2);
  });

  it.each<[string, SesEventBridgeWebhookAuth, Record<string, string>]>([
    ['a wrong password', { basic: [{ username: 'eventbridge', password }] }, basic('eventbridge', `${password}x`)],
    ['missing credentials', { basic: [{ username: 'eventbridge', password }] }, {}],
    ['a wrong API key', { headers: [{ name: 'x-api-key', value: token }] }, { 'x-api-key': `${token}x` }],
    ['the API key under another header', { headers: [{ name: 'x-api-key', value: token }] }, { 'x-other': token }],
    ['a wrong bearer token', { bearer: [token] }, { authorization: `Bearer ${token}x` }],
    ['nothing configured', {}, basic('eventbridge', password)],
  ])('refuses %s', async (_, auth, headers) => {
    await expectMailwardenError(() => webhook.receive(post(body, headers), auth), 'webhook_unauthorized');
  });

  it('authenticates before looking at the body, then refuses a body that is not JSON', async () => {
    const auth = { headers: [{ name: 'x-api-key', value: token }] };
    await expectMailwardenError(() => webhook.receive(post('not json'), auth), 'webhook_unauthorized');
    await expectMailwardenError(() => webhook.receive(post('not json', { 'x-api-key': token }), auth), 'invalid_payload');
  });
});

describe('through intake', () => {
  const auth = {
    ses: {
      topicArns: ['arn:aws:sns:us-east-1:123456789012:ses-events'],
      basic: [{ username: 'sns', password: 'p' }],
      signatureRequired: false,
    },
    'ses-eventbridge': { headers: [{ name: 'x-api-key', value: 'eventbridge-secret' }] },
  };

  it('events are of provider ses; a retry and the same SES event by SNS raw delivery are duplicates', async () => {
    const mailwarden = createMailwarden({ store: createMemoryStore(), webhooks: { auth: { acme: auth }, environment: env } });
    const request = post(fixture('bounce.json'), { 'x-api-key': 'eventbridge-secret' });
    expect(await mailwarden.ingestWebhook('ses-eventbridge', 'acme', request)).toMatchObject({ accepted: 2, duplicates: 0 });
    expect(await mailwarden.ingestWebhook('ses-eventbridge', 'acme', request)).toMatchObject({ accepted: 0, duplicates: 2 });
    const raw = snsRawRequest(text('ses/bounce-permanent.json'), { 'x-amz-sns-topic-arn': auth.ses.topicArns[0]!, ...basic('sns', 'p') });
    expect(await mailwarden.ingestWebhook('ses', 'acme', raw)).toMatchObject({ accepted: 0, duplicates: 2 });
    const messages = await mailwarden.messages.list('acme');
    expect(messages.items.map((message) => message.provider)).toEqual(['ses', 'ses']);
  });

  it('refuses a request of the ses-eventbridge route on the SNS receiver, and the reverse: nothing is recorded', async () => {
    const mailwarden = createMailwarden({ store: createMemoryStore(), webhooks: { auth: { acme: auth }, environment: env } });
    await expectMailwardenError(
      () => mailwarden.ingestWebhook('ses-eventbridge', 'acme', post(fixture('bounce.json'), basic('sns', 'p'))),
      'webhook_unauthorized',
    );
    await expectMailwardenError(
      () => mailwarden.ingestWebhook('ses', 'acme', post(fixture('bounce.json'), { 'x-api-key': 'eventbridge-secret' })),
      'webhook_unauthorized',
    );
    expect((await mailwarden.messages.list('acme')).items).toEqual([]);
  });

  it('a project without ses-eventbridge configuration refuses the route', async () => {
    const mailwarden = createMailwarden({ webhooks: { auth: { acme: { ses: auth.ses } }, environment: env } });
    await expectMailwardenError(
      () => mailwarden.ingestWebhook('ses-eventbridge', 'acme', post(fixture('bounce.json'), { 'x-api-key': 'eventbridge-secret' })),
      'webhook_unauthorized',
    );
  });

  it("the testing kit's request is what the receiver records", async () => {
    const mailwarden = createMailwarden({ webhooks: { auth: { acme: auth }, environment: env } });
    const request = sesEventBridgeWebhook({
      auth: { headers: { 'x-api-key': 'eventbridge-secret' } },
      events: [{ type: 'bounced', recipient: 'bob@example.com', trackingId: 'spring-sale' }],
    });
    expect(await mailwarden.ingestWebhook('ses-eventbridge', 'acme', request)).toMatchObject({ accepted: 1 });
  });
});

describe('unsubscribes through EventBridge suppress in the stream, as through SNS', () => {
  const AT = new Date('2026-11-20T10:00:00.000Z');
  const auth = { 'ses-eventbridge': { bearer: ['eventbridge-token'] } };
  const unsubscribe = async (event: { stream?: string; topic?: string }, defaultStream?: string) => {
    const mailwarden = createMailwarden({
      webhooks: { auth: { acme: auth }, environment: env },
      ...(defaultStream === undefined ? {} : { defaultStream: { acme: defaultStream } }),
    });
    const requests = webhooksFor('ses-eventbridge', auth['ses-eventbridge'], [
      { type: 'unsubscribed', recipient: 'ana@example.org', occurredAt: AT, ...event },
    ]);
    for (const request of requests) {
      expect(await mailwarden.ingestWebhook('ses-eventbridge', 'acme', request)).toMatchObject({ accepted: 1, skipped: 0 });
    }
    return mailwarden;
  };

  it('in the stream the message carried, and there only', async () => {
    const mailwarden = await unsubscribe({ stream: 'marketing' });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org', { stream: 'marketing' })).toMatchObject({
      suppressed: true,
      source: 'unsubscribe',
      cause: expect.objectContaining({ provider: 'ses' }),
    });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org')).toMatchObject({ suppressed: false });
  });

  it('the topic opted out of, when a stream name, wins over the carried stream', async () => {
    const mailwarden = await unsubscribe({ stream: 'marketing', topic: 'weekly-digest' });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org', { stream: 'weekly-digest' })).toMatchObject({ suppressed: true });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org', { stream: 'marketing' })).toMatchObject({ suppressed: false });
  });

  it("without a stream, in the project's default stream", async () => {
    const mailwarden = await unsubscribe({}, 'newsletter');
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org', { stream: 'newsletter' })).toMatchObject({ suppressed: true });
    expect(await mailwarden.suppressions.check('acme', 'ana@example.org')).toMatchObject({ suppressed: false });
  });
});
