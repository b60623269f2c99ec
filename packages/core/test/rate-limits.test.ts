// Rate limits (docs/http.md, "Rate limits"): the limiter with an injected clock, counted in process and
// by a store's `hitRateLimits` (a double that answers when told: a request never waits for it), then
// through the handler: which bucket a request counts in, the 429.
import { describe, expect, test, vi } from 'vitest';
import {
  checkRateLimits,
  createHttpHandler,
  createMailwarden,
  createRateLimiter,
  RATE_SYNC_INTERVAL_MS,
  rateSyncSize,
  type ApiKeys,
  type HttpRequest,
  type RateLimitBucket,
  type RateLimiter,
  type RateLimitOptions,
  type Store,
} from '../src/index.js';
import { createMemoryStore } from '../src/memory-store/memory-store.js';

const MINUTE = 60_000;
/** A window start far from 0, so a window index of 0 hides nothing. */
const T0 = 1_800_000 * MINUTE;

function clock(start = T0) {
  let time = start;
  return { now: () => time, set: (at: number) => (time = at) };
}

const silent = { error: () => {} };

/** One hit's answer, after which the store's answer (if any) lands, as between a process's requests. */
async function hitOne(limiter: RateLimiter, kind: RateLimitBucket, id: string) {
  const [exceeded] = limiter.hit([[kind, id]]);
  await new Promise(setImmediate);
  return exceeded;
}

describe.each([
  ['in process (a store without hitRateLimits)', () => ({})],
  ['by the memory store', () => createMemoryStore()],
])('the limiter, counted %s', (_name, store) => {
  test('each bucket has its limit; another address or kind counts apart', async () => {
    const time = clock();
    const limiter = createRateLimiter(store(), { perClient: 3, perKey: 2 }, { now: time.now, logger: silent });
    const hits = async (kind: 'client' | 'key', id: string, n: number) => {
      const answers = [];
      for (let i = 0; i < n; i++) answers.push((await hitOne(limiter, kind, id)) === undefined);
      return answers;
    };
    expect(await hits('client', '10.0.0.1', 5)).toStrictEqual([true, true, true, false, false]);
    expect(await hits('client', '10.0.0.2', 3)).toStrictEqual([true, true, true]);
    // `key:10.0.0.1` is another bucket than `client:10.0.0.1`, with its own limit.
    expect(await hits('key', '10.0.0.1', 3)).toStrictEqual([true, true, false]);
  });

  test('a new window starts from zero; Retry-After is the whole seconds left, at least 1', async () => {
    const time = clock();
    const limiter = createRateLimiter(store(), { perClient: 1, windowSeconds: 60 }, { now: time.now, logger: silent });
    expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
    expect(await hitOne(limiter, 'client', 'a')).toStrictEqual({ limit: 1, windowSeconds: 60, retryAfterSeconds: 60 });
    time.set(T0 + 58_001);
    expect((await hitOne(limiter, 'client', 'a'))?.retryAfterSeconds).toBe(2);
    time.set(T0 + 59_999);
    expect((await hitOne(limiter, 'client', 'a'))?.retryAfterSeconds).toBe(1);
    time.set(T0 + MINUTE);
    expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
    expect((await hitOne(limiter, 'client', 'a'))?.retryAfterSeconds).toBe(60);
  });
});

test('a bucket with limit 0 is not counted at all', async () => {
  const hitRateLimits = vi.fn(async () => [1]);
  const limiter = createRateLimiter({ hitRateLimits }, { unsubscribe: 0 }, { now: Date.now, logger: silent });
  expect(await hitOne(limiter, 'unsubscribe', 'a')).toBeUndefined();
  expect(hitRateLimits).not.toHaveBeenCalled();
});

/** A store double that records each `hitRateLimits` call and answers it only when the test says. */
function recordingStore() {
  const calls: { buckets: readonly string[]; windowMs: number; now: number; counts: readonly number[] | undefined }[] = [];
  const answers: { resolve: (totals: number[]) => void; reject: (error: Error) => void }[] = [];
  const store: Pick<Store, 'hitRateLimits'> = {
    hitRateLimits: (buckets, windowMs, now, counts) =>
      new Promise((resolve, reject) => {
        calls.push({ buckets, windowMs, now, counts });
        answers.push({ resolve, reject });
      }),
  };
  /** Answers call `index` with the store's totals, and lets the limiter take them in. */
  const answer = async (index: number, totals: number[] | Error) => {
    if (totals instanceof Error) answers[index]!.reject(totals);
    else answers[index]!.resolve(totals);
    await new Promise(setImmediate);
  };
  return { store, calls, answer };
}

/** Whether each of `n` hits of one bucket passed. */
function hits(limiter: RateLimiter, kind: RateLimitBucket, id: string, n: number): boolean[] {
  return Array.from({ length: n }, () => limiter.hit([[kind, id]])[0] === undefined);
}

describe('off the request path, over a shared store', () => {
  test('a request is answered before the store answers: the store is told in the background', () => {
    const { store, calls } = recordingStore();
    const limiter = createRateLimiter(store, { windowSeconds: 10, webhooks: 6 }, { now: () => T0, logger: silent });
    // The store never answers here, yet every hit is decided: 6 pass, the 7th is over by this instance's own count.
    expect(hits(limiter, 'webhook', '2001:db8::1', 7)).toStrictEqual([true, true, true, true, true, true, false]);
    expect(limiter.hit([['webhook', '2001:db8::1']])).toStrictEqual([{ limit: 6, windowSeconds: 10, retryAfterSeconds: 10 }]);
    // Named kind:id, in windows of windowSeconds: the first hit asked at once, and one call at a time per bucket.
    expect(calls).toStrictEqual([{ buckets: ['webhook:2001:db8::1'], windowMs: 10_000, now: T0, counts: [1] }]);
  });

  test(`a bucket's hits are sent at its first hit, then every ${rateSyncSize(500)} when its limit is 500`, async () => {
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 500 }, { now: () => T0, logger: silent });
    expect(rateSyncSize(500)).toBe(10);
    hits(limiter, 'client', 'a', 1);
    await answer(0, [1]);
    hits(limiter, 'client', 'a', 9);
    expect(calls).toHaveLength(1);
    hits(limiter, 'client', 'a', 1);
    expect(calls.map(({ counts }) => counts)).toStrictEqual([[1], [10]]);
    // A limit under 50 sends every hit; 0 none (not counted at all).
    expect([rateSyncSize(1), rateSyncSize(50), rateSyncSize(51), rateSyncSize(6000)]).toStrictEqual([1, 1, 2, 120]);
  });

  test(`hits waiting ${RATE_SYNC_INTERVAL_MS} ms go with the next request, every due bucket in one call`, async () => {
    const time = clock();
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 500, perKey: 500 }, { now: time.now, logger: silent });
    limiter.hit([
      ['client', 'a'],
      ['key', 'ops'],
    ]);
    expect(calls[0]?.buckets).toStrictEqual(['client:a', 'key:ops']);
    await answer(0, [1, 1]);
    time.set(T0 + 10);
    limiter.hit([['client', 'a']]);
    time.set(T0 + 20);
    limiter.hit([['key', 'ops']]);
    time.set(T0 + 10 + RATE_SYNC_INTERVAL_MS - 1);
    limiter.hit([['client', 'a']]);
    expect(calls).toHaveLength(1);
    // Another client's first hit, and client:a's oldest unsent hit is due; key:ops's is 10 ms younger.
    time.set(T0 + 10 + RATE_SYNC_INTERVAL_MS);
    limiter.hit([['client', 'b']]);
    expect(calls[1]).toMatchObject({ buckets: ['client:b', 'client:a'], counts: [1, 2], now: T0 + 10 + RATE_SYNC_INTERVAL_MS });
  });

  test('one call under way per bucket: hits meanwhile wait for its answer, then go together', async () => {
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 5 }, { now: () => T0, logger: silent });
    hits(limiter, 'client', 'a', 3);
    expect(calls.map(({ counts }) => counts)).toStrictEqual([[1]]);
    await answer(0, [1]);
    hits(limiter, 'client', 'a', 1);
    expect(calls.map(({ counts }) => counts)).toStrictEqual([[1], [3]]);
  });

  test('hits that came during a slow call wait from its answer on; other buckets go meanwhile', async () => {
    const time = clock();
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 500 }, { now: time.now, logger: silent });
    limiter.hit([['client', 'a']]);
    time.set(T0 + 10);
    hits(limiter, 'client', 'a', 2);
    time.set(T0 + 300);
    limiter.hit([['client', 'b']]);
    expect(calls.map(({ buckets }) => buckets)).toStrictEqual([['client:a'], ['client:b']]);
    await answer(0, [1]);
    time.set(T0 + 300 + RATE_SYNC_INTERVAL_MS - 1);
    limiter.hit([['client', 'c']]);
    time.set(T0 + 300 + RATE_SYNC_INTERVAL_MS);
    limiter.hit([['client', 'd']]);
    expect(calls.slice(2).map(({ buckets, counts }) => [buckets, counts])).toStrictEqual([
      [['client:c'], [1]],
      [
        ['client:d', 'client:a'],
        [1, 2],
      ],
    ]);
  });

  test("other instances' hits count once the store's answer shows them", async () => {
    const { store, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 50 }, { now: () => T0, logger: silent });
    expect(hits(limiter, 'client', 'a', 1)).toStrictEqual([true]);
    // The store's count is 48: the other instances counted 47.
    await answer(0, [48]);
    expect(hits(limiter, 'client', 'a', 3)).toStrictEqual([true, true, false]);
  });

  test("once the store's count is over, hits are refused without another call", async () => {
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 50 }, { now: () => T0, logger: silent });
    hits(limiter, 'client', 'a', 1);
    await answer(0, [120]);
    expect(hits(limiter, 'client', 'a', 100)).toStrictEqual(Array.from({ length: 100 }, () => false));
    expect(calls).toHaveLength(1);
  });

  test("a new window starts from zero; an ended window's late answer changes nothing", async () => {
    const time = clock();
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(store, { perClient: 2 }, { now: time.now, logger: silent });
    expect(hits(limiter, 'client', 'a', 3)).toStrictEqual([true, true, false]);
    time.set(T0 + MINUTE);
    expect(hits(limiter, 'client', 'a', 1)).toStrictEqual([true]);
    expect(calls.map(({ now, counts }) => [now, counts])).toStrictEqual([
      [T0, [1]],
      [T0 + MINUTE, [1]],
    ]);
    await answer(0, [3]);
    expect(hits(limiter, 'client', 'a', 2)).toStrictEqual([true, false]);
  });

  test('a failing store lets requests through, its hits dropped, logged at most once a minute', async () => {
    const time = clock();
    const logged: string[] = [];
    const { store, calls, answer } = recordingStore();
    const limiter = createRateLimiter(
      store,
      { perClient: 1 },
      { now: time.now, logger: { error: (_context, message) => logged.push(message) } },
    );
    for (let i = 0; i < 3; i++) {
      expect(hits(limiter, 'client', 'a', 1)).toStrictEqual([true]);
      await answer(i, new Error('connection refused'));
    }
    expect(calls.map(({ counts }) => counts)).toStrictEqual([[1], [1], [1]]);
    expect(logged).toHaveLength(1);
    time.set(T0 + MINUTE);
    hits(limiter, 'client', 'a', 1);
    await answer(3, new Error('connection refused'));
    expect(logged).toHaveLength(2);
  });

  test('a store that throws at once is a failing store too', async () => {
    const limiter = createRateLimiter(
      {
        hitRateLimits: () => {
          throw new Error('not connected');
        },
      },
      { perClient: 1 },
      { now: () => T0, logger: silent },
    );
    for (let i = 0; i < 2; i++) expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
  });
});

test.each([
  [{ windowSeconds: 0 }, 'rateLimits.windowSeconds'],
  [{ perClient: -1 }, 'rateLimits.perClient'],
  [{ perKey: 1.5 }, 'rateLimits.perKey'],
] as const)('%o is refused', (options, name) => {
  expect(() => checkRateLimits(options)).toThrow(name);
});

describe('through the handler', () => {
  const acme = (remoteAddress: string | undefined, overrides: Partial<HttpRequest> = {}): HttpRequest => ({
    method: 'GET',
    path: '/projects/acme/suppressions',
    query: '',
    headers: { 'x-api-key': 'acme-key' },
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
    ...overrides,
  });

  function handler(rateLimits?: RateLimitOptions | false, apiKeys: ApiKeys = { 'acme-key': 'acme', 'other-key': 'acme' }) {
    const time = clock();
    const mailwarden = createMailwarden({
      now: time.now,
      unsubscribeLinks: { secrets: ['a-secret-of-at-least-32-characters!!'], baseUrl: 'https://mail.example.com' },
      webhooks: { auth: { acme: { mailgun: { signingKey: 'k' } } } },
    });
    const http = createHttpHandler(mailwarden, {
      apiKeys,
      logger: silent,
      ...(rateLimits === undefined ? {} : { rateLimits }),
    });
    return { http, time, mailwarden };
  }

  test('a burst from one client gets 429s while another client is served', async () => {
    const { http, time } = handler({ perClient: 3 });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await http.handle(acme('10.0.0.1'))).status);
    expect(statuses).toStrictEqual([200, 200, 200, 429, 429]);
    expect((await http.handle(acme('10.0.0.2'))).status).toBe(200);

    time.set(T0 + 45_500);
    const limited = await http.handle(acme('10.0.0.1'));
    expect(limited.headers).toMatchObject({
      'retry-after': '15',
      'ratelimit-limit': '3',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '15',
    });
    expect(JSON.parse(String(limited.body))).toStrictEqual({
      error: { code: 'rate_limited', message: expect.any(String), details: { limit: 3, windowSeconds: 60 } },
    });
    // Wrong keys count too: the client's bucket is counted before the key is looked at.
    expect((await http.handle(acme('10.0.0.1', { headers: { 'x-api-key': 'wrong' } }))).status).toBe(429);
    time.set(T0 + MINUTE);
    expect((await http.handle(acme('10.0.0.1'))).status).toBe(200);
  });

  test('a success carries no rate-limit headers: its bytes are what they are without limits', async () => {
    const limited = await handler({}).http.handle(acme('10.0.0.1'));
    const unlimited = await handler().http.handle(acme('10.0.0.1'));
    expect(limited).toStrictEqual(unlimited);
  });

  test("a key's bucket counts its requests from every address, after the key check", async () => {
    const { http } = handler({ perKey: 2 });
    expect((await http.handle(acme('10.0.0.1'))).status).toBe(200);
    expect((await http.handle(acme('10.0.0.2'))).status).toBe(200);
    expect((await http.handle(acme('10.0.0.3'))).status).toBe(429);
    // Another key of the project, and an unknown key (401, never counted in a key's bucket), are apart.
    expect((await http.handle(acme('10.0.0.3', { headers: { 'x-api-key': 'other-key' } }))).status).toBe(200);
    expect((await http.handle(acme('10.0.0.3', { headers: { 'x-api-key': 'wrong' } }))).status).toBe(401);
  });

  test("a key's missing scope is answered before its limit", async () => {
    const { http } = handler({ perKey: 1 }, [{ name: 'checker', key: 'acme-key', projects: ['acme'], scopes: ['check'] }]);
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await http.handle(acme('10.0.0.1'))).status);
    expect(statuses).toStrictEqual([403, 403]);
    const check = acme('10.0.0.1', { path: '/projects/acme/suppressions/check', query: 'email=a%40example.com' });
    expect((await http.handle(check)).status).toBe(429);
  });

  test('webhook intake is limited per address before its signature is verified', async () => {
    const { http } = handler({ webhooks: 2 });
    const post = (remoteAddress: string) =>
      http.handle({
        method: 'POST',
        path: '/projects/acme/webhooks/mailgun',
        query: '',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{}'),
        remoteAddress,
      });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post('10.0.0.1')).status);
    expect(statuses).toStrictEqual([401, 401, 429]);
    expect((await post('10.0.0.2')).status).toBe(401);
  });

  test('unsubscribe pages are limited per address; a missing address is one unknown client', async () => {
    const { http, mailwarden } = handler({ unsubscribe: 1 });
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'reader@example.com' });
    const path = new URL(url).pathname;
    expect((await http.handle(acme(undefined, { path, headers: {} }))).status).toBe(200);
    expect((await http.handle(acme(undefined, { method: 'POST', path, headers: {} }))).status).toBe(429);
    expect((await http.handle(acme('10.0.0.2', { method: 'POST', path, headers: {} }))).status).toBe(200);
  });

  test('/openapi.json is never limited; without rateLimits nothing is', async () => {
    const { http } = handler({ perClient: 1, perKey: 1 });
    for (let i = 0; i < 3; i++) expect((await http.handle(acme('10.0.0.1', { path: '/openapi.json', headers: {} }))).status).toBe(200);
    for (const rateLimits of [undefined, false] as const) {
      const off = handler(rateLimits).http;
      for (let i = 0; i < 3; i++) expect((await off.handle(acme('10.0.0.1'))).status).toBe(200);
    }
  });
});
