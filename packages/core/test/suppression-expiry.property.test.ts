// Laws of expiry in process (docs/core.md, "Expiry"): `ttl` and `expires_at` are two spellings of one
// record, and a check answers "suppressed" exactly while the clock is before `expires_at`, with or
// without a check cache in front of the store.
import { createMailwarden, createMemoryStore } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

const T0 = Date.UTC(2026, 10, 24, 12);

describe('expiry laws', () => {
  test('an add with ttl and one with the same expires_at store the same suppression', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 1, max: 10 ** 8 }), async (offset, ttl) => {
        const now = T0 + offset;
        const byTtl = createMailwarden({ now: () => now });
        const byTime = createMailwarden({ now: () => now });
        const a = await byTtl.suppressions.add('acme', 'a@example.com', { ttl });
        const b = await byTime.suppressions.add('acme', 'a@example.com', { expiresAt: new Date(now + ttl * 1000).toISOString() });
        expect(a).toEqual(b);
        expect(await byTtl.suppressions.list('acme')).toEqual(await byTime.suppressions.list('acme'));
      }),
      { numRuns: 30 },
    );
  });

  test('a check is suppressed exactly while now < expires_at, as the clock moves on', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5000 }),
        // A clock only moves forward.
        fc.array(fc.integer({ min: -10, max: 6000 }), { minLength: 1, maxLength: 8 }).map((reads) => reads.sort((a, b) => a - b)),
        fc.boolean(),
        async (ttlMs, reads, cached) => {
          let now = T0;
          const memory = createMemoryStore();
          const store = cached ? await createCheckCache({ store: memory, now: () => 0 }) : memory;
          const mailwarden = createMailwarden({ store, now: () => now });
          const expiresAt = T0 + ttlMs;
          await mailwarden.suppressions.add('acme', 'a@example.com', { expiresAt: new Date(expiresAt) });
          for (const read of reads) {
            now = T0 + read;
            const { suppressed } = await mailwarden.suppressions.check('acme', 'a@example.com');
            expect(suppressed).toBe(now < expiresAt);
          }
          await mailwarden.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  test('a check for a stream answers the project-wide entry while it lasts, then the stream’s while that lasts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5000 }),
        fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
        fc.array(fc.integer({ min: -10, max: 6000 }), { minLength: 1, maxLength: 8 }).map((reads) => reads.sort((a, b) => a - b)),
        fc.boolean(),
        async (wideTtl, streamTtl, reads, cached) => {
          let now = T0;
          const memory = createMemoryStore();
          const store = cached ? await createCheckCache({ store: memory, now: () => 0 }) : memory;
          const mailwarden = createMailwarden({ store, now: () => now });
          await mailwarden.suppressions.add('acme', 'a@example.com', { expiresAt: new Date(T0 + wideTtl) });
          // The stream's entry expires too, or never.
          await mailwarden.suppressions.add('acme', 'a@example.com', {
            stream: 'marketing',
            ...(streamTtl === undefined ? {} : { expiresAt: new Date(T0 + streamTtl) }),
          });
          for (const read of reads) {
            now = T0 + read;
            const check = await mailwarden.suppressions.check('acme', 'a@example.com', { stream: 'marketing' });
            const wide = now < T0 + wideTtl;
            const inStream = streamTtl === undefined || now < T0 + streamTtl;
            expect(check.suppressed).toBe(wide || inStream);
            if (check.suppressed) expect(check.stream).toBe(wide ? null : 'marketing');
          }
          await mailwarden.close();
        },
      ),
      { numRuns: 40 },
    );
  });
});
