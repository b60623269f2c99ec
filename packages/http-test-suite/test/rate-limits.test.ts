// Rate limits through every binding (docs/http.md, "Rate limits"): the binding passes the client's
// address (`req.ip`, `request.ip`) and `rateLimits`; without the option nothing is limited.
import { createMailwarden, createMemoryStore, type Store } from '@mailwarden/core';
import { describe, expect, onTestFinished, test } from 'vitest';
import { bindings } from '../src/servers.js';

describe.each(Object.entries(bindings))('%s', (_name, start) => {
  async function serve(rateLimits?: { perClient: number }) {
    const counted: string[] = [];
    const memory = createMemoryStore();
    const store: Store = {
      ...memory,
      hitRateLimits: (buckets, windowMs, now, counts) => {
        counted.push(...buckets);
        return memory.hitRateLimits(buckets, windowMs, now, counts);
      },
    };
    const server = await start({
      mailwarden: createMailwarden({ store }),
      apiKeys: { 'acme-key': 'acme' },
      ...(rateLimits === undefined ? {} : { rateLimits }),
    });
    onTestFinished(() => server.close());
    const list = () => fetch(`${server.baseUrl}/projects/acme/suppressions`, { headers: { 'x-api-key': 'acme-key' } });
    return { list, counted };
  }

  test("counts by the client's address and answers 429 over the limit", async () => {
    const { list, counted } = await serve({ perClient: 2 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await list());
    expect(answers.map((answer) => answer.status)).toStrictEqual([200, 200, 429]);
    expect(Number(answers[2]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(answers[0]!.headers.get('retry-after')).toBeNull();
    expect(((await answers[2]!.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // The loopback address as the framework gives it (`::ffff:127.0.0.1` on a dual-stack socket).
    expect(counted[0]).toMatch(/^client:(::ffff:)?127\.0\.0\.1$/);
  });

  test('limits nothing without rateLimits', async () => {
    const { list, counted } = await serve();
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);
    expect(counted).toStrictEqual([]);
  });
});
