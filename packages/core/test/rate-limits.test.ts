// Rate limits (docs/http.md, "Rate limits"): the limiter with an injected clock, counted in process and
// by a store's `hitRateLimits`, then through the handler: which bucket a request counts in, the 429.
import { describe, expect, test, vi } from 'vitest';
import {
  checkRateLimits,
  createHttpHandler,
  createMailwarden,
  createRateLimiter,
  type ApiKeys,
  type HttpRequest,
  type RateLimitBucket,
  type RateLimiter,
  type RateLimitOptions,
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

const hitOne = async (limiter: RateLimiter, kind: RateLimitBucket, id: string) => (await limiter.hit([[kind, id]]))[0];

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

test('the store counts one bucket per hit, named kind:id, in windows of windowSeconds', async () => {
  const hitRateLimits = vi.fn(async () => [7]);
  const limiter = createRateLimiter({ hitRateLimits }, { windowSeconds: 10, webhooks: 6 }, { now: () => T0, logger: silent });
  expect(await hitOne(limiter, 'webhook', '2001:db8::1')).toStrictEqual({ limit: 6, windowSeconds: 10, retryAfterSeconds: 10 });
  expect(hitRateLimits).toHaveBeenCalledWith(['webhook:2001:db8::1'], 10_000, T0);
});

test("a request's buckets are counted in one store call; one without a limit is not counted", async () => {
  const hitRateLimits = vi.fn(async (buckets: readonly string[]) => buckets.map(() => 3));
  const limiter = createRateLimiter({ hitRateLimits }, { perClient: 2, perKey: 5, unsubscribe: 0 }, { now: () => T0, logger: silent });
  const exceeded = { limit: 2, windowSeconds: 60, retryAfterSeconds: 60 };
  expect(
    await limiter.hit([
      ['client', 'a'],
      ['unsubscribe', 'a'],
      ['key', 'ops'],
    ]),
  ).toStrictEqual([exceeded, undefined, undefined]);
  expect(hitRateLimits.mock.calls).toStrictEqual([[['client:a', 'key:ops'], 60_000, T0]]);
});

test('a failing store lets every request through, logged at most once a minute', async () => {
  const time = clock();
  const logged: string[] = [];
  const limiter = createRateLimiter(
    { hitRateLimits: async () => Promise.reject(new Error('connection refused')) },
    { perClient: 1 },
    { now: time.now, logger: { error: (_context, message) => logged.push(message) } },
  );
  for (let i = 0; i < 3; i++) expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
  time.set(T0 + MINUTE - 1);
  expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
  expect(logged).toHaveLength(1);
  time.set(T0 + MINUTE);
  expect(await hitOne(limiter, 'client', 'a')).toBeUndefined();
  expect(logged).toHaveLength(2);
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
