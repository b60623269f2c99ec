import { createMailwarden, type Store } from '@mailwarden/core';
import { createCheckCache } from '@mailwarden/core/store';
import type * as vitest from 'vitest';
import { randomProjectId, type TestFunction } from './harness.js';

export interface CheckCacheSuiteOptions {
  /** Names the store in the test's title. */
  name: string;
  /** The runner's `test` and `expect` (vitest's fit). */
  test: TestFunction;
  expect: typeof vitest.expect;
  /**
   * Two stores on one server and one namespace, as two app instances would hold them, each with its
   * own `subscribeInvalidations`. Closed through the services after the test.
   */
  createStores: () => Promise<[Store, Store]>;
}

/** Waits until `check` holds, failing after `attempts` tries 20 ms apart: waits for an event, asserts no time. */
async function eventually(check: () => Promise<boolean>, attempts = 250): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/**
 * For a store that implements `subscribeInvalidations`: two service instances, each with a check cache
 * over its own store, sharing one server; writes on one reach the other's cache through the store's
 * invalidations (pub/sub, LISTEN/NOTIFY). The negative TTL is an hour here, so only an invalidation can
 * make the other instance see a change.
 *
 * @example
 * import { describe, expect, test } from 'vitest';
 * import { runCheckCacheSuite } from '@mailwarden/store-test-suite';
 * import { createMyStore } from '../src/index.js';
 *
 * runCheckCacheSuite({ name: 'my store', test, expect, createStores: async () => [createMyStore(), createMyStore()] });
 */
export function runCheckCacheSuite(options: CheckCacheSuiteOptions): void {
  const { test, expect } = options;

  test(`${options.name}: an add on one instance is seen by the other, whose cache said "not suppressed"`, async () => {
    const [storeA, storeB] = await options.createStores();
    const a = createMailwarden({ store: await createCheckCache({ store: storeA, negativeTtlMs: 3_600_000 }) });
    const b = createMailwarden({ store: await createCheckCache({ store: storeB, negativeTtlMs: 3_600_000 }) });
    const project = randomProjectId();
    try {
      expect((await a.suppressions.check(project, 'jane@example.com')).suppressed).toBe(false); // now cached
      await b.suppressions.add(project, 'jane@example.com');
      expect(await eventually(async () => (await a.suppressions.check(project, 'jane@example.com')).suppressed)).toBe(true);

      // And back: a removal on A reaches B's positive entry.
      expect((await b.suppressions.check(project, 'jane@example.com')).suppressed).toBe(true);
      await a.suppressions.remove(project, b.suppressions.hashOf('jane@example.com'));
      expect(await eventually(async () => !(await b.suppressions.check(project, 'jane@example.com')).suppressed)).toBe(true);

      // Event-driven suppressions invalidate too, in batch checks.
      expect((await a.suppressions.checkMany(project, ['bob@example.com'])).results[0]!.suppressed).toBe(false);
      await b.applyEvents(project, [
        {
          provider: 'sendgrid',
          type: 'bounced',
          bounceClass: 'hard',
          messageId: 'm-1',
          recipient: 'bob@example.com',
          trackingId: null,
          occurredAt: new Date('2026-11-22T10:00:00Z'),
          eventKey: 'check-cache-1',
        },
      ]);
      expect(await eventually(async () => (await a.suppressions.checkMany(project, ['bob@example.com'])).results[0]!.suppressed)).toBe(
        true,
      );

      // Bulk adds and removes invalidate every hash of their batch.
      const bulk = ['kim@example.com', 'lee@example.com'];
      expect((await a.suppressions.checkMany(project, bulk)).results.map((result) => result.suppressed)).toStrictEqual([false, false]);
      await b.suppressions.addMany(
        project,
        bulk.map((email) => ({ email, reason: 'hard_bounce' as const })),
      );
      const suppressed = async () => (await a.suppressions.checkMany(project, bulk)).results.map((result) => result.suppressed);
      expect(await eventually(async () => (await suppressed()).every(Boolean))).toBe(true);
      await b.suppressions.removeMany(
        project,
        bulk.map((email) => ({ email })),
      );
      expect(await eventually(async () => (await suppressed()).every((value) => !value))).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test(`${options.name}: writes to a stream's list reach the other instance's checks for that stream`, async () => {
    const [storeA, storeB] = await options.createStores();
    const a = createMailwarden({ store: await createCheckCache({ store: storeA, negativeTtlMs: 3_600_000 }) });
    const b = createMailwarden({ store: await createCheckCache({ store: storeB, negativeTtlMs: 3_600_000 }) });
    const project = randomProjectId();
    const stream = { stream: 'marketing' };
    const checked = async (options?: { stream: string }) => (await a.suppressions.check(project, 'jane@example.com', options)).suppressed;
    try {
      expect(await checked(stream)).toBe(false); // cached, with the project-wide "not suppressed"
      expect(await checked()).toBe(false);
      await b.suppressions.add(project, 'jane@example.com', { stream: 'marketing', source: 'unsubscribe' });
      expect(await eventually(() => checked(stream))).toBe(true);
      expect(await checked()).toBe(false);

      // A project-wide add reaches a check for another stream, cached as "not suppressed".
      expect(await checked({ stream: 'weekly-digest' })).toBe(false);
      await b.suppressions.addMany(project, [{ email: 'jane@example.com', reason: 'hard_bounce' }]);
      expect(await eventually(() => checked({ stream: 'weekly-digest' }))).toBe(true);

      // Removing from the stream's list alone leaves the project-wide entry answering.
      const hash = b.suppressions.hashOf('jane@example.com');
      await b.suppressions.remove(project, hash, stream);
      await b.suppressions.remove(project, hash);
      expect(await eventually(async () => !(await checked(stream)) && !(await checked({ stream: 'weekly-digest' })))).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
}
