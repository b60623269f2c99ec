import { randomUUID } from 'node:crypto';
import { storeTest, type StoreConformanceOptions } from './harness.js';

const MINUTE = 60_000;
/** The start of a window: windows are `Math.floor(now / windowMs)`. */
const start = 1_000 * MINUTE;

/** Bucket names of this test alone (a store may be shared). */
const buckets = (count: number) => Array.from({ length: count }, (_, index) => `client:conformance-${randomUUID()}-${index}`);

export function describeRateLimitTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('rate limits (optional hitRateLimits)', () => {
    test('counts each bucket in its window, in the order given; an ended window starts again', async ({ store }) => {
      if (store.hitRateLimits === undefined) return;
      const [a, b] = buckets(2);
      expect(await store.hitRateLimits([a!, b!], MINUTE, start)).toStrictEqual([1, 1]);
      expect(await store.hitRateLimits([a!], MINUTE, start + 1)).toStrictEqual([2]);
      expect(await store.hitRateLimits([b!, a!], MINUTE, start + MINUTE - 1)).toStrictEqual([2, 3]);
      expect(await store.hitRateLimits([], MINUTE, start)).toStrictEqual([]);
      // The next window, at its first millisecond.
      expect(await store.hitRateLimits([a!], MINUTE, start + MINUTE)).toStrictEqual([1]);
      expect(await store.hitRateLimits([a!, b!], MINUTE, start + MINUTE + 5)).toStrictEqual([2, 1]);
      // A window of its own length: 10 seconds.
      const [c] = buckets(1);
      expect(await store.hitRateLimits([c!], 10_000, start + 9_999)).toStrictEqual([1]);
      expect(await store.hitRateLimits([c!], 10_000, start + 10_000)).toStrictEqual([1]);
    });

    // A limiter sends the hits it gathered locally as one count per bucket (docs/http.md, "Rate limits").
    test('counts adds each count to its bucket; a bucket without one counts 1', async ({ store }) => {
      if (store.hitRateLimits === undefined) return;
      const [a, b] = buckets(2);
      expect(await store.hitRateLimits([a!, b!], MINUTE, start, [5, 1])).toStrictEqual([5, 1]);
      expect(await store.hitRateLimits([b!, a!], MINUTE, start + 1, [40, 2])).toStrictEqual([41, 7]);
      expect(await store.hitRateLimits([a!], MINUTE, start + 2)).toStrictEqual([8]);
      expect(await store.hitRateLimits([a!], MINUTE, start + MINUTE, [3])).toStrictEqual([3]);
    });

    // Three callers hitting at once, as instances sharing the store do: every count is returned exactly once.
    test('three concurrent callers count exactly: each count of a shared bucket answered once', async ({ store }) => {
      if (store.hitRateLimits === undefined) return;
      const [shared, ...own] = buckets(4);
      const hits = 20;
      const answers = await Promise.all(
        [0, 1, 2].map(async (caller) => {
          const counts: number[][] = [];
          for (let hit = 0; hit < hits; hit++) counts.push(await store.hitRateLimits!([shared!, own[caller]!], MINUTE, start + hit));
          return counts;
        }),
      );
      const sharedCounts = answers.flatMap((counts) => counts.map((pair) => pair[0]!)).sort((x, y) => x - y);
      expect(sharedCounts).toStrictEqual(Array.from({ length: 3 * hits }, (_, index) => index + 1));
      for (const counts of answers)
        expect(counts.map((pair) => pair[1])).toStrictEqual(Array.from({ length: hits }, (_, index) => index + 1));
    });
  });
}
