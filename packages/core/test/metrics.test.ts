// What core tells a metrics backend (`MailwardenOptions.metrics`, docs/metrics.md): the store measured
// only when metrics are on, suppressions counted from what writes did, store failures told from the
// contract's answers, HTTP requests by route template, webhook intake and dropped hook calls.
import {
  createHttpHandler,
  createMailwarden,
  createMemoryStore,
  MailwardenError,
  type DeliveryEvent,
  type MailwardenMetrics,
  type Store,
} from '@mailwarden/core';
import { postmarkWebhook } from '@mailwarden/core/testing';
import { describe, expect, test } from 'vitest';
import { measureStore } from '../src/store/measured-store.js';

type Call = [keyof MailwardenMetrics, ...unknown[]];

/** Metrics that record every call; `of(name)` the arguments of one kind of call, durations left out. */
function recordingMetrics() {
  const calls: Call[] = [];
  const record =
    <K extends keyof MailwardenMetrics>(name: K) =>
    (...args: Parameters<MailwardenMetrics[K]>) =>
      void calls.push([name, ...args]);
  const metrics: MailwardenMetrics = {
    httpRequest: record('httpRequest'),
    eventsReceived: record('eventsReceived'),
    webhookVerificationFailed: record('webhookVerificationFailed'),
    suppressionsAdded: record('suppressionsAdded'),
    suppressionsRemoved: record('suppressionsRemoved'),
    storeOperation: record('storeOperation'),
    hookCallsDropped: record('hookCallsDropped'),
    outboundDelivery: record('outboundDelivery'),
    outboundLag: record('outboundLag'),
    alertRates: record('alertRates'),
  };
  const of = (name: keyof MailwardenMetrics) => calls.filter((call) => call[0] === name).map(([, ...args]) => args);
  return { metrics, calls, of };
}

const AT = new Date('2026-11-20T10:00:00Z');
const credentials = { username: 'postmark', password: 'secret' };

/** A SendGrid event of message `m-<n>` to `r<n>@example.com` unless `recipient` says otherwise. */
function event(
  type: 'bounced' | 'complained' | 'delivered',
  n: number,
  extra: { recipient?: string; eventKey?: string } = {},
): DeliveryEvent {
  return {
    provider: 'sendgrid',
    type,
    ...(type === 'bounced' ? { bounceClass: 'hard' as const } : {}),
    messageId: `m-${n}`,
    recipient: extra.recipient ?? `r${n}@example.com`,
    trackingId: null,
    occurredAt: AT,
    eventKey: extra.eventKey ?? `${type}-${n}`,
  };
}

describe('without metrics', () => {
  test('the store is used as given, and nothing is recorded', () => {
    const store = createMemoryStore();
    const mailwarden = createMailwarden({ store });
    expect(mailwarden.store).toBe(store);
    expect('metrics' in mailwarden).toBe(false);
  });
});

describe('the measured store', () => {
  test('reaches what is not a Store method, and has the optional methods the store has, no more', () => {
    const store = createMemoryStore({ changes: {} });
    const measured = measureStore(store, recordingMetrics().metrics);
    expect(measured.changes).toEqual(store.changes);
    expect(typeof measured.purgeExpired).toBe('function');
    expect((measured as typeof store).retained()).toEqual(store.retained());
    const bare = { ...store, purgeExpired: undefined, claimWebhookToken: undefined } as Store;
    const measuredBare = measureStore(bare, recordingMetrics().metrics);
    expect(measuredBare.purgeExpired).toBeUndefined();
    expect(measuredBare.claimWebhookToken).toBeUndefined();
  });

  test('times every call by operation; only a failure of the store counts as failed, not an answer of the contract', async () => {
    const store = createMemoryStore({ changes: { maxLength: 1 } });
    const { metrics, of } = recordingMetrics();
    const measured = measureStore(store, metrics);
    await measured.getSuppression('acme', 'a'.repeat(64));
    await measured.pauseStream('acme', 'one', 1);
    await measured.pauseStream('acme', 'two', 2);
    await expect(measured.listChanges('acme', { after: 0, limit: 10 })).rejects.toMatchObject({ code: 'change_cursor_expired' });
    const failing = measureStore(
      {
        ...store,
        getSuppression: async () => {
          throw new MailwardenError('store_unavailable', 'down');
        },
      },
      metrics,
    );
    await expect(failing.getSuppression('acme', 'a'.repeat(64))).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(of('storeOperation').map(([operation, , failed]) => [operation, failed])).toEqual([
      ['getSuppression', false],
      ['pauseStream', false],
      ['pauseStream', false],
      ['listChanges', false],
      ['getSuppression', true],
    ]);
    for (const [, seconds] of of('storeOperation')) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  test('counts suppressions added and removed from what each write did', async () => {
    const { metrics, of } = recordingMetrics();
    const mailwarden = createMailwarden({ metrics, now: () => AT.getTime() });
    await mailwarden.suppressions.add('acme', 'ana@example.com');
    await mailwarden.suppressions.add('acme', 'ana@example.com'); // already there: nothing added
    await mailwarden.applyEvents('acme', [
      event('bounced', 1, { recipient: 'bob@example.com' }),
      event('bounced', 1, { recipient: 'bob@example.com' }), // a duplicate
      event('complained', 2),
      event('delivered', 3),
    ]);
    // bob's hard bounce raised to a complaint: an upgrade counts as added in its new reason.
    await mailwarden.applyEvents('acme', [event('complained', 1, { recipient: 'bob@example.com' })]);
    // An import: one new, one already there as strong.
    await mailwarden.suppressions.addMany(
      'acme',
      [
        { email: 'new@example.com', reason: 'hard_bounce' },
        { email: 'r2@example.com', reason: 'complaint' },
      ],
      {
        source: 'import',
      },
    );
    expect(of('suppressionsAdded')).toEqual([
      ['manual', 'api', 1],
      ['hard_bounce', 'webhook', 1],
      ['complaint', 'webhook', 1],
      ['complaint', 'webhook', 1],
      ['hard_bounce', 'import', 1],
    ]);
    const hash = mailwarden.suppressions.hashOf('ana@example.com');
    await mailwarden.suppressions.remove('acme', hash);
    await expect(mailwarden.suppressions.remove('acme', hash)).rejects.toMatchObject({ code: 'suppression_not_found' }); // nothing removed
    await mailwarden.suppressions.removeMany('acme', [
      { email: 'bob@example.com' },
      { email: 'r2@example.com' },
      { email: 'no@example.com' },
    ]);
    expect(of('suppressionsRemoved')).toEqual([
      ['manual', 1],
      ['complaint', 2],
    ]);
  });

  test("reports a project's alert rates when its window moved, at most every 10 s, and when read", async () => {
    let now = AT.getTime();
    const { metrics, of } = recordingMetrics();
    const mailwarden = createMailwarden({ metrics, now: () => now, alerts: { window: 10, minMessages: 10 } });
    const bounce = (n: number) => event('bounced', n);
    const delivered = (n: number) => event('delivered', n);
    await mailwarden.applyEvents('acme', [bounce(1), delivered(2), delivered(3), delivered(4)]);
    await mailwarden.store.getAlertWindows('acme', ['x']); // not the project's window: no rates
    await new Promise((resolve) => setImmediate(resolve));
    expect(of('alertRates')).toEqual([['acme', 0.25, 0]]);
    await mailwarden.applyEvents('acme', [bounce(5)]); // within 10 s of the last read: not read again
    now += 10_000;
    await mailwarden.applyEvents('acme', [delivered(6)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(of('alertRates')).toEqual([
      ['acme', 0.25, 0],
      ['acme', 2 / 6, 0],
    ]);
    await mailwarden.alerts.status('acme');
    expect(of('alertRates').at(-1)).toEqual(['acme', 2 / 6, 0]);
  });
});

describe('HTTP, intake and hooks', () => {
  test('requests are told by route template, never by their path; unknown paths and methods by a fixed label', async () => {
    const { metrics, of } = recordingMetrics();
    const mailwarden = createMailwarden({ metrics });
    const handler = createHttpHandler(mailwarden, { apiKeys: { key: 'acme' } });
    const get = (path: string, method = 'GET') => handler.handle({ method, path, query: '', headers: { 'x-api-key': 'key' } });
    await get('/projects/acme/suppressions');
    await get('/projects/acme/messages/m%40x');
    await get('/no/such/thing');
    await get('/projects/acme/suppressions', 'BREW');
    await get('/openapi.json');
    await get('/dashboard/');
    expect(of('httpRequest').map(([route, method, status]) => [route, method, status])).toEqual([
      ['/projects/{projectId}/suppressions', 'GET', 200],
      ['/projects/{projectId}/messages/{id}', 'GET', 400],
      ['unmatched', 'GET', 404],
      ['/projects/{projectId}/suppressions', 'other', 405],
      ['/openapi.json', 'GET', 200],
      ['unmatched', 'GET', 404],
    ]);
  });

  test('webhook intake counts the events received by provider and type, and the requests its verification refused', async () => {
    const { metrics, of } = recordingMetrics();
    const mailwarden = createMailwarden({ metrics, webhooks: { auth: { acme: { postmark: { basic: [credentials] } } } } });
    const request = postmarkWebhook({
      auth: { basic: credentials },
      events: [{ type: 'bounced', recipient: 'bob@example.com', occurredAt: AT }],
    });
    await mailwarden.ingestWebhook('postmark', 'acme', request);
    const forged = postmarkWebhook({
      auth: { basic: { ...credentials, password: 'wrong' } },
      events: [{ type: 'delivered', recipient: 'bob@example.com' }],
    });
    await expect(mailwarden.ingestWebhook('postmark', 'acme', forged)).rejects.toMatchObject({ code: 'webhook_unauthorized' });
    expect(of('eventsReceived')).toEqual([['postmark', 'bounced', 1]]);
    expect(of('webhookVerificationFailed')).toEqual([['postmark']]);
  });

  test('hook calls dropped past maxPendingHookCalls are counted', async () => {
    const { metrics, of } = recordingMetrics();
    const mailwarden = createMailwarden({
      metrics,
      maxPendingHookCalls: 1,
      logger: { error() {} },
      on: { event: () => new Promise(() => {}) },
    });
    await mailwarden.applyEvents('acme', [event('delivered', 1), event('delivered', 2), event('delivered', 3)]);
    await new Promise((resolve) => setImmediate(resolve)); // calls are made, or dropped, after the answer
    expect(of('hookCallsDropped')).toEqual([[1], [1]]);
  });
});
