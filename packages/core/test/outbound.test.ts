// Outbound webhooks against a real local receiver: every change arrives signed (Standard Webhooks), in
// order; failures are retried on the schedule, then the endpoint pauses and resumes from its cursor;
// redirects are not followed; answers are read up to a cap; two instances never deliver at once.
import {
  createMailwarden,
  createMemoryStore,
  DEFAULT_OUTBOUND_SCHEDULE,
  type Mailwarden,
  type MailwardenOptions,
  type MemoryStore,
  type OutboundEndpoint,
  type OutboundOptions,
} from '@mailwarden/core';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { MailwardenMetrics } from '../src/metrics.js';
import { startOutboundEngine } from '../src/outbound/engine.js';
import { checkOutboundOptions } from '../src/outbound/options.js';
import { expectMailwardenError } from './expect-mailwarden-error.js';
import { FakeTime, startReceiver, type Receiver, type ReceivedRequest } from './outbound-receiver.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEXT_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
// Whole seconds, near the real clock: `webhook-timestamp` has seconds, and `verify` checks it against `Date.now`.
const START = Math.floor(Date.now() / 1000) * 1000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function logSink() {
  const logged: { context: Record<string, unknown>; message: string }[] = [];
  return { logged, logger: { error: (context: Record<string, unknown>, message: string) => void logged.push({ context, message }) } };
}

interface Setup {
  receiver: Receiver;
  time: FakeTime;
  store: MemoryStore;
  mailwarden: Mailwarden;
  logged: ReturnType<typeof logSink>['logged'];
}

/** A receiver, a fake clock, a memory store with its feed, and an instance delivering to one endpoint `crm` of `acme`. */
async function setup(
  endpoint: Partial<OutboundEndpoint> = {},
  outbound: Partial<OutboundOptions> = {},
  options: MailwardenOptions = {},
): Promise<Setup> {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const time = new FakeTime(START);
  const store = createMemoryStore({ changes: {} });
  const { logged, logger } = logSink();
  const mailwarden = createMailwarden({
    store,
    now: time.now,
    logger,
    outbound: {
      endpoints: { acme: [{ id: 'crm', url: receiver.url, secrets: [SECRET], ...endpoint }] },
      timers: time.timers,
      ...outbound,
    },
    ...options,
  });
  cleanups.push(() => mailwarden.close());
  // The first look leases the endpoint: it receives the changes made from then on.
  await time.advance(0);
  return { receiver, time, store, mailwarden, logged };
}

const addresses = (count: number, from = 1) => Array.from({ length: count }, (_, index) => `user${from + index}@example.com`);

async function suppress(mailwarden: Mailwarden, emails: readonly string[]): Promise<void> {
  for (const email of emails) await mailwarden.suppressions.add('acme', email);
}

/** Verifies a request as a receiver would, at the time it was signed (`verify` checks the timestamp against the clock). */
function verifyAt(secret: string, request: ReceivedRequest): unknown {
  const spy = vi.spyOn(Date, 'now').mockReturnValue(Number(request.headers['webhook-timestamp']) * 1000);
  try {
    return new Webhook(secret).verify(request.body, request.headers);
  } finally {
    spy.mockRestore();
  }
}

const ids = (requests: readonly ReceivedRequest[]) => requests.map((request) => request.headers['webhook-id']);

describe('outbound webhooks', () => {
  test('every change arrives once, in order, as the feed shows it, signed with each secret', async () => {
    const { receiver, time, mailwarden } = await setup({ secrets: [SECRET, NEXT_SECRET] });
    await suppress(mailwarden, addresses(4));
    await mailwarden.allowlist.add('acme', '@example.org');
    await time.advance(1000);

    const { items } = await mailwarden.changes.list('acme');
    expect(items).toHaveLength(5);
    expect(ids(receiver.received)).toEqual(items.map((change) => change.id));
    for (const [index, request] of receiver.received.entries()) {
      const change = items[index]!;
      expect(request.path).toBe('/hook');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['user-agent']).toBe('Mailwarden-Webhooks/1.0');
      expect(request.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      // The body is Standard Webhooks' envelope around the change as `changes.list` answers it.
      const envelope = { type: change.kind, timestamp: change.at, data: change };
      expect(verifyAt(SECRET, request)).toEqual(envelope);
      expect(verifyAt(NEXT_SECRET, request)).toEqual(envelope);
    }
    expect(() => verifyAt('whsec_dGhlIHdyb25nIHNlY3JldCBhdCBhbGw=', receiver.received[0]!)).toThrow('No matching signature');
    const [status] = await mailwarden.outbound.list('acme');
    expect(status).toMatchObject({ id: 'crm', state: 'delivering', cursor: 5, latest: 5, lag: 0, failures: 0, last_error: null });
    expect(status!.last_success_at).toBe(new Date(START + 1000).toISOString());
  });

  test('a new endpoint starts at the end of the feed: changes made before it was first seen are not sent', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const time = new FakeTime(START);
    const store = createMemoryStore({ changes: {} });
    await createMailwarden({ store, now: time.now }).suppressions.add('acme', 'before@example.com');
    const mailwarden = createMailwarden({
      store,
      now: time.now,
      outbound: { endpoints: { acme: [{ id: 'crm', url: receiver.url, secrets: [SECRET] }] }, timers: time.timers },
    });
    cleanups.push(() => mailwarden.close());
    await time.advance(0);
    await suppress(mailwarden, ['after@example.com']);
    await time.advance(1000);
    expect(ids(receiver.received)).toEqual(['acme:2']);
  });

  test('failures are retried on the schedule, then the change is delivered', async () => {
    const { receiver, time, mailwarden } = await setup({}, { schedule: [5000, 20_000, 60_000] });
    const statuses = [500, 503, 200];
    receiver.answer = () => ({ status: statuses.shift() ?? 200 });
    await suppress(mailwarden, addresses(2));
    await time.advance(1000);
    const failedAt = START + 1000;
    expect(await mailwarden.outbound.list('acme')).toMatchObject([
      {
        state: 'retrying',
        cursor: 0,
        lag: 2,
        failures: 1,
        last_error: 'HTTP 500',
        failing_since: new Date(failedAt).toISOString(),
        next_attempt_at: new Date(failedAt + 5000).toISOString(),
      },
    ]);
    await time.advance(60_000);
    // Attempts at the first look, 5 s later, then 20 s after that; the second change right after.
    expect(receiver.received.map((request) => Number(request.headers['webhook-timestamp']) * 1000 - failedAt)).toEqual([
      0, 5000, 25_000, 25_000,
    ]);
    expect(ids(receiver.received)).toEqual(['acme:1', 'acme:1', 'acme:1', 'acme:2']);
    expect(await mailwarden.outbound.list('acme')).toMatchObject([
      { state: 'delivering', cursor: 2, failures: 0, failing_since: null, next_attempt_at: null, last_error: null },
    ]);
  });

  test('an endpoint failing past the schedule is paused and logged; resumed, it delivers from its cursor, losing nothing', async () => {
    const { receiver, time, mailwarden, logged } = await setup({}, { schedule: [1000, 2000] });
    receiver.answer = () => ({ status: 503 });
    await suppress(mailwarden, addresses(3));
    await time.advance(60_000);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(ids(receiver.received))).toEqual(new Set(['acme:1']));
    const [paused] = await mailwarden.outbound.list('acme');
    expect(paused).toMatchObject({ state: 'paused', cursor: 0, failures: 3, last_error: 'HTTP 503', next_attempt_at: null });
    expect(paused!.paused_at).toBe(new Date(START + 1000 + 3000).toISOString());
    expect(logged).toHaveLength(1);
    expect(logged[0]!.message).toContain('paused');
    expect((await mailwarden.changes.list('acme', { kinds: ['endpoint'] })).items).toMatchObject([
      { kind: 'endpoint.paused', endpoint: 'crm', error: 'HTTP 503', seq: 4 },
    ]);

    // Paused, it sends nothing however long it waits, until resumed.
    receiver.answer = () => ({ status: 204 });
    await time.advance(24 * 60 * 60 * 1000);
    expect(receiver.received).toHaveLength(3);
    expect(await mailwarden.outbound.resume('acme', 'crm')).toMatchObject({
      state: 'delivering',
      cursor: 0,
      latest: 5,
      failures: 0,
      paused_at: null,
    });
    await time.advance(0);
    expect(ids(receiver.received.slice(3))).toEqual(['acme:1', 'acme:2', 'acme:3', 'acme:4', 'acme:5']);
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ type: 'endpoint.resumed', data: { endpoint: 'crm' } });
  });

  test("with the default schedule (Svix's), eight attempts over 27 h 35 min, then paused", async () => {
    expect(DEFAULT_OUTBOUND_SCHEDULE.reduce((sum, delay) => sum + delay, 0)).toBe(((27 * 60 + 35) * 60 + 5) * 1000);
    const pollMs = 60_000;
    const { receiver, time, mailwarden } = await setup({}, { pollMs });
    receiver.answer = () => ({ status: 500 });
    await suppress(mailwarden, addresses(1));
    await time.advance(30 * 60 * 60 * 1000);
    const attempts = receiver.received.map((request) => Number(request.headers['webhook-timestamp']) * 1000);
    expect(attempts).toHaveLength(8);
    // Each retry comes at the first look once its delay has passed.
    for (const [index, delay] of DEFAULT_OUTBOUND_SCHEDULE.entries()) {
      const gap = attempts[index + 1]! - attempts[index]!;
      expect(gap).toBeGreaterThanOrEqual(delay);
      expect(gap).toBeLessThan(delay + pollMs);
    }
    expect(await mailwarden.outbound.list('acme')).toMatchObject([{ state: 'paused', failures: 8 }]);
  });

  test('a redirect is a failure and its Location is never requested', async () => {
    const { receiver, time, mailwarden } = await setup();
    receiver.answer = () => ({ status: 302, headers: { location: `${new URL(receiver.url).origin}/elsewhere` } });
    await suppress(mailwarden, addresses(1));
    await time.advance(1000);
    expect(receiver.received.map((request) => request.path)).toEqual(['/hook']);
    expect(await mailwarden.outbound.list('acme')).toMatchObject([{ state: 'retrying', last_error: 'HTTP 302' }]);
  });

  test('an endless answer is read up to the cap, then let go', async () => {
    // The timeout is far away: only the cap can end this request.
    const { receiver, time, mailwarden } = await setup({}, { maxResponseBytes: 1024, timeoutMs: 600_000, leaseMs: 700_000 });
    receiver.answer = () => 'endless';
    await suppress(mailwarden, addresses(1));
    await time.advance(1000);
    expect(await mailwarden.outbound.list('acme')).toMatchObject([{ state: 'delivering', cursor: 1 }]);
    // What it wrote before the client went away is the cap plus the sockets' buffers, not endless.
    expect(await receiver.endlessClosed).toBeLessThan(64 * 1024 * 1024);
  });

  test('a receiver that never answers times out, and intake never waits for delivery', async () => {
    const { receiver, time, mailwarden } = await setup({}, { timeoutMs: 100, leaseMs: 1000 });
    receiver.answer = () => 'hang';
    await suppress(mailwarden, addresses(1));
    const delivering = time.advance(1000);
    await receiver.waitFor(1);
    // A delivery is hanging, and intake goes on regardless.
    await mailwarden.suppressions.add('acme', 'meanwhile@example.com');
    await mailwarden.applyEvents('acme', [
      {
        provider: 'postmark',
        type: 'delivered',
        eventKey: 'd-1',
        messageId: 'm-1',
        recipient: 'x@example.com',
        trackingId: null,
        occurredAt: new Date(START),
      },
    ]);
    await delivering;
    expect(await mailwarden.outbound.list('acme')).toMatchObject([{ state: 'retrying', cursor: 0, last_error: 'timeout' }]);
  });

  test('an unreachable endpoint fails with a bounded reason', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const { time, mailwarden } = await setup({ url });
    await suppress(mailwarden, addresses(1));
    await time.advance(1000);
    expect(await mailwarden.outbound.list('acme')).toMatchObject([{ state: 'retrying', last_error: 'connection refused' }]);
  });

  test('kinds filter what is sent; the cursor moves over the rest', async () => {
    const { receiver, time, mailwarden } = await setup({ kinds: ['allowlist', 'suppression.removed'] });
    const { suppression } = await mailwarden.suppressions.add('acme', 'user1@example.com');
    await suppress(mailwarden, addresses(1, 2));
    await mailwarden.allowlist.add('acme', '@example.org');
    await suppress(mailwarden, addresses(2, 3));
    await mailwarden.suppressions.remove('acme', suppression.hash);
    await suppress(mailwarden, addresses(1, 5));
    await time.advance(1000);
    expect(receiver.received.map((request) => JSON.parse(request.body).type)).toEqual(['allowlist.added', 'suppression.removed']);
    expect(ids(receiver.received)).toEqual(['acme:3', 'acme:6']);
    expect(await mailwarden.outbound.list('acme')).toMatchObject([
      { kinds: ['suppression.removed', 'allowlist.added', 'allowlist.removed'], cursor: 7, latest: 7, lag: 0 },
    ]);
  });

  test('a cursor that retention overtook skips to what is kept, logged as cursor_expired', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const time = new FakeTime(START);
    const store = createMemoryStore({ changes: { maxLength: 3 } });
    const { logged, logger } = logSink();
    // The endpoint was first seen at the start of the feed, then nothing delivered while 10 changes were made.
    await store.leaseOutbound('acme', 'crm', 'earlier', START, START);
    const mailwarden = createMailwarden({
      store,
      now: time.now,
      logger,
      outbound: { endpoints: { acme: [{ id: 'crm', url: receiver.url, secrets: [SECRET] }] }, timers: time.timers },
    });
    cleanups.push(() => mailwarden.close());
    await suppress(mailwarden, addresses(10));
    await time.advance(0);
    expect(ids(receiver.received)).toEqual(['acme:8', 'acme:9', 'acme:10']);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.context).toMatchObject({ cursor: 0, skippedTo: 7 });
  });

  test('two instances on one store never deliver at once, and together deliver every change', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const store = createMemoryStore({ changes: {} });
    // Seen first now, at the start of the feed; the lease already ended.
    const now = Date.now();
    await store.leaseOutbound('acme', 'crm', 'setup', now, now);
    // The receiver answers on a later turn, so a second request could overlap if the lease let it.
    receiver.answer = () => new Promise((resolve) => setImmediate(() => resolve({ status: 200 })));
    const deliveredBy: string[] = [];
    const instance = (owner: string) => {
      // Closing one instance must not close the shared store.
      const shared = new Proxy(store, { get: (target, key) => (key === 'close' ? async () => {} : Reflect.get(target, key)) });
      const mailwarden = createMailwarden({
        store: shared,
        outbound: {
          endpoints: { acme: [{ id: 'crm', url: receiver.url, secrets: [SECRET] }] },
          owner,
          pollMs: 1,
          fetch: async (input, init) => {
            deliveredBy.push(owner);
            return fetch(input, init);
          },
        },
      });
      cleanups.push(() => mailwarden.close());
      return mailwarden;
    };
    const instances = { a: instance('a'), b: instance('b') };
    await suppress(instances.a, addresses(20));
    await receiver.waitFor(8);
    // Stop whichever holds the lease: the other takes over from the cursor.
    await instances[deliveredBy.at(-1) as 'a' | 'b'].close();
    await suppress(instances.a, addresses(20, 21));
    await receiver.waitFor(40);
    expect(receiver.maxInFlight).toBe(1);
    expect(new Set(deliveredBy)).toEqual(new Set(['a', 'b']));
    const firstArrivals = [...new Set(ids(receiver.received))];
    expect(firstArrivals).toEqual(Array.from({ length: 40 }, (_, index) => `acme:${index + 1}`));
  });
});

describe('outbound metrics', () => {
  test('each attempt counts as delivered or failed, and the lag is reported in changes and seconds', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const time = new FakeTime(START);
    const store = createMemoryStore({ changes: {} });
    const calls: unknown[][] = [];
    const metrics = {
      outboundDelivery: (...args: unknown[]) => void calls.push(['delivery', ...args]),
      outboundLag: (...args: unknown[]) => void calls.push(['lag', ...args]),
    } as Partial<MailwardenMetrics> as MailwardenMetrics;
    const outbound = checkOutboundOptions({
      endpoints: { acme: [{ id: 'crm', url: receiver.url, secrets: [SECRET] }] },
      timers: time.timers,
      schedule: [5000],
    });
    const engine = startOutboundEngine(outbound, { store, now: time.now, logger: logSink().logger, metrics });
    cleanups.push(() => engine.close());
    await time.advance(0);
    const mailwarden = createMailwarden({ store, now: time.now });
    await suppress(mailwarden, addresses(2));
    const statuses = [200, 500];
    receiver.answer = () => ({ status: statuses.shift() ?? 200 });
    calls.length = 0;
    await time.advance(3000);
    // Change 1 delivered, change 2 failed (made at START, failed 1 s later); then two looks while waiting to retry.
    expect(calls).toEqual([
      ['delivery', 'crm', 'delivered'],
      ['delivery', 'crm', 'failed'],
      ['lag', 'acme', 'crm', 1, 1],
      ['lag', 'acme', 'crm', 1, 2],
      ['lag', 'acme', 'crm', 1, 3],
    ]);
  });
});

describe('outbound configuration', () => {
  const url = 'https://crm.example.com/hooks';
  const create = (endpoint: Partial<OutboundEndpoint>, outbound: Partial<OutboundOptions> = {}) =>
    createMailwarden({
      store: createMemoryStore({ changes: {} }),
      outbound: {
        endpoints: { acme: [{ id: 'crm', url, secrets: [SECRET], ...endpoint }] },
        timers: new FakeTime(START).timers,
        ...outbound,
      },
    });

  test.each([
    [{ id: 'CRM' }, {}, /endpoints\["acme"\]\[0\]\.id/],
    [{ url: 'ftp://crm.example.com/' }, {}, /\.url must be an http: or https: URL/],
    [{ url: 'https://user:pw@crm.example.com/' }, {}, /\.url must not hold credentials/],
    [{ secrets: [] }, {}, /\.secrets must be a non-empty array/],
    [{ secrets: ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }, {}, /\.secrets\[0\] must be "whsec_"/],
    [{ kinds: ['suppression.added', 'bounce'] }, {}, /\.kinds: .*"bounce"/],
    [{}, { leaseMs: 10_000 }, /outbound\.leaseMs must exceed outbound\.timeoutMs/],
    [{}, { schedule: [] }, /outbound\.schedule/],
    [{}, { pollMs: 0 }, /outbound\.pollMs/],
  ])('refuses %j %j with a RangeError naming the field', (endpoint, outbound, message) => {
    expect(() => create(endpoint, outbound)).toThrow(RangeError);
    expect(() => create(endpoint, outbound)).toThrow(message);
  });

  test('refuses two endpoints of one id in a project, and endpoints over a store without a feed', () => {
    const endpoint = { id: 'crm', url, secrets: [SECRET] };
    expect(() => createMailwarden({ outbound: { endpoints: { acme: [endpoint, endpoint] } } })).toThrow(/used twice/);
    expect(() => createMailwarden({ outbound: { endpoints: { acme: [endpoint] } } })).toThrow(/change feed/);
  });

  test('lists no endpoint for a project without one; resuming an unknown endpoint is endpoint_not_found', async () => {
    const mailwarden = create({});
    cleanups.push(() => mailwarden.close());
    expect(await mailwarden.outbound.list('other')).toEqual([]);
    await expectMailwardenError(() => mailwarden.outbound.resume('acme', 'nope'), 'endpoint_not_found');
    await expectMailwardenError(() => mailwarden.outbound.resume('other', 'crm'), 'endpoint_not_found');
    await expectMailwardenError(() => createMailwarden().outbound.resume('acme', 'crm'), 'endpoint_not_found');
  });

  test('shows the URL without its query, which may carry a token', async () => {
    const mailwarden = create({ url: 'https://crm.example.com/hooks?token=s3cret' });
    cleanups.push(() => mailwarden.close());
    expect(await mailwarden.outbound.list('acme')).toMatchObject([
      { url: 'https://crm.example.com/hooks?…', state: 'delivering', cursor: 0, lag: 0 },
    ]);
  });
});
