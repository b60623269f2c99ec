import type { OutboundProgress } from '@mailwarden/core/store';
import { storeTest, type StoreConformanceOptions } from './harness.js';
import { readFeed } from './feed.js';
import { addresses, suppression, T0 } from './records.js';

/** A new endpoint's state at a given cursor. */
const fresh = (endpoint: string, cursor: number) => ({
  endpoint,
  cursor,
  failures: 0,
  failingSince: null,
  nextAttemptAt: 0,
  pausedAt: null,
  lastError: null,
  lastSuccessAt: null,
});

export function describeOutboundTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const withoutFeed = storeTest(options);

  describe('outbound delivery state', () => {
    test('one owner holds a lease until it ends; then another takes it over, and the first may no longer save', async ({
      store,
      projectId,
    }) => {
      expect(await store.getOutbound(projectId, ['crm'])).toStrictEqual([undefined]);
      expect(await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 30_000)).toStrictEqual(fresh('crm', 0));
      expect(await store.leaseOutbound(projectId, 'crm', 'b', T0 + 10_000, T0 + 40_000)).toBeUndefined();
      // The holder renews, and saves its progress.
      expect(await store.leaseOutbound(projectId, 'crm', 'a', T0 + 20_000, T0 + 50_000)).toStrictEqual(fresh('crm', 0));
      const { endpoint: _endpoint, ...saved } = fresh('crm', 3);
      const progress: OutboundProgress = { ...saved, lastSuccessAt: T0 + 21_000 };
      expect(await store.saveOutbound(projectId, 'crm', 'a', progress, T0 + 50_000)).toBe(true);
      expect(await store.leaseOutbound(projectId, 'crm', 'b', T0 + 49_999, T0 + 80_000)).toBeUndefined();
      // The lease ended: another owner takes it, with the progress saved; the first's save is refused.
      expect(await store.leaseOutbound(projectId, 'crm', 'b', T0 + 50_000, T0 + 80_000)).toStrictEqual({ endpoint: 'crm', ...progress });
      expect(await store.saveOutbound(projectId, 'crm', 'a', { ...progress, cursor: 9 }, T0 + 90_000)).toBe(false);
      expect(await store.saveOutbound(projectId, 'crm', 'b', { ...progress, cursor: 4 }, T0 + 80_000)).toBe(true);
      expect(await store.getOutbound(projectId, ['crm', 'other'])).toStrictEqual([{ endpoint: 'crm', ...progress, cursor: 4 }, undefined]);
      // Given up (`until` at or before the next caller's now): anyone may take it at once.
      expect(await store.saveOutbound(projectId, 'crm', 'b', { ...progress, cursor: 5 }, T0 + 60_000)).toBe(true);
      expect(await store.leaseOutbound(projectId, 'crm', 'c', T0 + 60_000, T0 + 90_000)).toMatchObject({ cursor: 5 });
      expect(await store.saveOutbound(projectId, 'never', 'a', progress, T0 + 90_000)).toBe(false);
    });

    test('three owners asking at once: exactly one is granted', async ({ store, projectId }) => {
      for (const endpoint of ['e1', 'e2', 'e3', 'e4', 'e5']) {
        const granted = await Promise.all(['a', 'b', 'c'].map((owner) => store.leaseOutbound(projectId, endpoint, owner, T0, T0 + 30_000)));
        expect(granted.filter((state) => state !== undefined)).toHaveLength(1);
      }
    });

    test('a new endpoint starts at the project’s latest change', async ({ store, projectId }) => {
      const pool = addresses(3);
      await store.mergeSuppressions(
        projectId,
        pool.map((address) => suppression(address, 'manual', T0)),
        T0,
      );
      expect(await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 30_000)).toStrictEqual(fresh('crm', 3));
    });

    test('an endpoint paused appends endpoint.paused; resumed, it keeps its cursor and appends endpoint.resumed', async ({
      store,
      projectId,
    }) => {
      await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 30_000);
      const failing: OutboundProgress = {
        cursor: 0,
        failures: 7,
        failingSince: T0 - 99_000_000,
        nextAttemptAt: T0 + 36_000_000,
        pausedAt: null,
        lastError: 'HTTP 503',
        lastSuccessAt: null,
      };
      expect(await store.saveOutbound(projectId, 'crm', 'a', failing, T0 + 30_000)).toBe(true);
      expect(await store.resumeOutbound(projectId, 'crm', T0 + 1)).toStrictEqual({ endpoint: 'crm', ...failing }); // running: unchanged
      const paused = { ...failing, failures: 8, pausedAt: T0 + 2, lastError: 'timeout' };
      expect(await store.saveOutbound(projectId, 'crm', 'a', paused, T0 + 30_000)).toBe(true);
      expect(await store.saveOutbound(projectId, 'crm', 'a', paused, T0 + 30_000)).toBe(true); // already paused: nothing more
      expect(await store.resumeOutbound(projectId, 'crm', T0 + 3)).toStrictEqual({
        ...fresh('crm', 0),
        lastSuccessAt: null,
      });
      expect(await store.resumeOutbound(projectId, 'other', T0 + 4)).toBeUndefined();
      expect(await readFeed(store, projectId)).toEqual([
        { seq: 1, kind: 'endpoint.paused', at: T0 + 2, actor: 'rule:outbound', endpoint: 'crm', error: 'timeout' },
        { seq: 2, kind: 'endpoint.resumed', at: T0 + 3, endpoint: 'crm' },
      ]);
    });

    withoutFeed('without a feed, leases work and a new endpoint starts at 0', async ({ store, projectId }) => {
      const [a] = addresses(1);
      await store.addSuppression(projectId, suppression(a, 'manual', T0), T0);
      expect(await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 30_000)).toStrictEqual(fresh('crm', 0));
      expect(await store.leaseOutbound(projectId, 'crm', 'b', T0, T0 + 30_000)).toBeUndefined();
    });
  });
}
