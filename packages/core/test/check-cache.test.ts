import { createMemoryStore, type Store } from '@mailwarden/core';
import { createCheckCache, createEmailHasher, type SuppressionInvalidation } from '@mailwarden/core/store';
import { describe, expect, it } from 'vitest';

const hashOf = createEmailHasher();
const project = 'acme';
const record = (email: string, createdAt = 1_000) => ({ hash: hashOf(email), email, reason: 'manual' as const, createdAt });

/**
 * A memory store that counts reads and lets the test publish invalidations as another instance would
 * (the Redis and Postgres suites test the real pub/sub and LISTEN/NOTIFY paths).
 */
function observedStore() {
  const inner = createMemoryStore();
  const listeners = new Set<(invalidation: SuppressionInvalidation) => void>();
  let reads = 0;
  let pause: Promise<void> | undefined;
  const store: Store = {
    ...inner,
    // Reads first, then waits: the answer may be stale by the time it arrives, as over a network.
    async getSuppression(projectId, hash) {
      reads++;
      const answer = await inner.getSuppression(projectId, hash);
      await pause;
      return answer;
    },
    async getSuppressions(projectId, hashes) {
      reads++;
      const answer = await inner.getSuppressions(projectId, hashes);
      await pause;
      return answer;
    },
    async subscribeInvalidations(listener) {
      listeners.add(listener);
      return async () => void listeners.delete(listener);
    },
  };
  return {
    store,
    inner,
    reads: () => reads,
    publish: (invalidation: SuppressionInvalidation) => listeners.forEach((listener) => listener(invalidation)),
    listeners,
    hold() {
      let release!: () => void;
      pause = new Promise<void>((resolve) => (release = resolve));
      return () => {
        pause = undefined;
        release();
      };
    },
  };
}

describe('createCheckCache', () => {
  it('answers repeated checks from the cache, positive and negative, in input order', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store });
    await observed.inner.addSuppression(project, record('a@example.com'));
    expect(await cache.getSuppression(project, hashOf('a@example.com'))).toEqual(record('a@example.com'));
    expect(await cache.getSuppression(project, hashOf('a@example.com'))).toEqual(record('a@example.com'));
    expect(await cache.getSuppression(project, hashOf('b@example.com'))).toBeUndefined();
    expect(await cache.getSuppression(project, hashOf('b@example.com'))).toBeUndefined();
    expect(observed.reads()).toBe(2);

    const hashes = ['b@example.com', 'c@example.com', 'a@example.com', 'c@example.com'].map(hashOf);
    expect(await cache.getSuppressions(project, hashes)).toEqual([undefined, undefined, record('a@example.com'), undefined]);
    expect(observed.reads()).toBe(3); // only c was asked for
    expect(await cache.getSuppressions(project, hashes)).toEqual([undefined, undefined, record('a@example.com'), undefined]);
    expect(observed.reads()).toBe(3);
  });

  it('drops entries on its own writes: add, remove, and events that suppress', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 60_000 });
    const hash = hashOf('a@example.com');
    expect(await cache.getSuppression(project, hash)).toBeUndefined();
    await cache.addSuppression(project, record('a@example.com'));
    expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
    await cache.removeSuppression(project, hash);
    expect(await cache.getSuppression(project, hash)).toBeUndefined();
    await cache.applyEvents(project, [
      { key: 'sendgrid:e1', message: null, trackingIdSearchKey: null, suppression: { ...record('a@example.com'), reason: 'complaint' } },
    ]);
    expect((await cache.getSuppression(project, hash))?.reason).toBe('complaint');
  });

  it('drops entries when another instance publishes an invalidation, and only those of that project', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 60_000 });
    const hash = hashOf('a@example.com');
    expect(await cache.getSuppression(project, hash)).toBeUndefined();
    expect(await cache.getSuppression('other', hash)).toBeUndefined();
    // Another instance adds the address in both projects, but only announces project "acme".
    await observed.inner.addSuppression(project, record('a@example.com'));
    await observed.inner.addSuppression('other', record('a@example.com'));
    observed.publish({ projectId: project, hashes: [hash] });
    expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
    expect(await cache.getSuppression('other', hash)).toBeUndefined(); // still the cached negative
  });

  it('never serves a "not suppressed" answer past negativeTtlMs, even when no invalidation arrives', async () => {
    const observed = observedStore();
    // Not 0: lru-cache reads a start time of 0 as "no TTL" (a real monotonic clock is never 0).
    let clock = 10_000;
    const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 500, now: () => clock });
    const hash = hashOf('a@example.com');
    expect(await cache.getSuppression(project, hash)).toBeUndefined();
    await observed.inner.addSuppression(project, record('a@example.com')); // elsewhere, announcement lost
    clock = 10_499;
    expect(await cache.getSuppression(project, hash)).toBeUndefined();
    clock = 10_501;
    expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
  });

  it('caches no negative answers with negativeTtlMs 0', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 0 });
    await cache.getSuppression(project, hashOf('a@example.com'));
    await cache.getSuppression(project, hashOf('a@example.com'));
    expect(observed.reads()).toBe(2);
  });

  it('does not cache a read that raced with an invalidation', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 60_000 });
    const hash = hashOf('a@example.com');
    const release = observed.hold();
    const read = cache.getSuppression(project, hash); // reads "not suppressed"…
    await Promise.resolve();
    await observed.inner.addSuppression(project, record('a@example.com'));
    observed.publish({ projectId: project, hashes: [hash] }); // …while another instance adds it
    release();
    expect(await read).toBeUndefined();
    expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
  });

  it('stops listening and closes the store on close', async () => {
    const observed = observedStore();
    const cache = await createCheckCache({ store: observed.store });
    expect(observed.listeners.size).toBe(1);
    await cache.close();
    expect(observed.listeners.size).toBe(0);
  });
});
