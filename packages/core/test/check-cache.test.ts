import { createMemoryStore, type Store } from '@mailwarden/core';
import { createCheckCache, createEmailHasher, type SuppressionInvalidation } from '@mailwarden/core/store';
import fc from 'fast-check';
import { describe, expect, it, test } from 'vitest';
import { runCheckCacheSuite } from '@mailwarden/store-test-suite';

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
    async getSuppression(projectId, hash, stream) {
      reads++;
      const answer = await inner.getSuppression(projectId, hash, stream);
      await pause;
      return answer;
    },
    async getSuppressions(projectId, hashes, stream) {
      reads++;
      const answer = await inner.getSuppressions(projectId, hashes, stream);
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

  it("passes a rate limiter's counts on to the store", async () => {
    const cache = await createCheckCache({ store: createMemoryStore() });
    expect(await cache.hitRateLimits!(['client:a', 'key:ops'], 60_000, 0, [5, 2])).toStrictEqual([5, 2]);
    expect(await cache.hitRateLimits!(['client:a'], 60_000, 1)).toStrictEqual([6]);
  });

  describe('with streams', () => {
    const inStream = (email: string, stream: string, createdAt = 1_000) => ({ ...record(email, createdAt), stream });

    it("a project-wide hit answers a check for every stream; a stream's answer is kept per stream", async () => {
      const observed = observedStore();
      const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 60_000 });
      const hash = hashOf('a@example.com');
      await observed.inner.addSuppression(project, inStream('a@example.com', 'marketing'));
      expect(await cache.getSuppression(project, hash, 'marketing')).toEqual(inStream('a@example.com', 'marketing'));
      expect(await cache.getSuppression(project, hash, 'marketing')).toEqual(inStream('a@example.com', 'marketing'));
      expect(observed.reads()).toBe(1);
      // The stream's answer said the project-wide list held none: a check without a stream is cached too.
      expect(await cache.getSuppression(project, hash)).toBeUndefined();
      expect(observed.reads()).toBe(1);
      // Another stream is asked once.
      expect(await cache.getSuppressions(project, [hash, hash], 'weekly-digest')).toEqual([undefined, undefined]);
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toBeUndefined();
      expect(observed.reads()).toBe(2);

      // Project-wide now: the write drops every answer about the address, and the project-wide one answers every stream.
      await cache.addSuppression(project, record('a@example.com'));
      expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
      expect(observed.reads()).toBe(3);
      for (const stream of ['marketing', 'weekly-digest', 'x-1']) {
        expect(await cache.getSuppression(project, hash, stream)).toEqual(record('a@example.com'));
      }
      expect(await cache.getSuppressions(project, [hash], 'a')).toEqual([record('a@example.com')]);
      expect(observed.reads()).toBe(3);
    });

    it('an invalidation of a hash drops its answers for every stream, whichever list changed', async () => {
      const observed = observedStore();
      const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 60_000 });
      const hash = hashOf('a@example.com');
      expect(await cache.getSuppression(project, hash, 'marketing')).toBeUndefined();
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toBeUndefined();
      // Another instance adds it to one stream and announces the hash alone.
      await observed.inner.addSuppression(project, inStream('a@example.com', 'weekly-digest'));
      observed.publish({ projectId: project, hashes: [hash] });
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toEqual(inStream('a@example.com', 'weekly-digest'));
      expect(await cache.getSuppression(project, hash, 'marketing')).toBeUndefined();
      // This instance's own removal from a stream's list drops them too.
      await cache.removeSuppression(project, hash, 'weekly-digest');
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toBeUndefined();
      // And a merge into a stream's list.
      await cache.mergeSuppressions(project, [{ ...inStream('a@example.com', 'marketing'), reason: 'complaint' }]);
      expect((await cache.getSuppression(project, hash, 'marketing'))?.reason).toBe('complaint');
      await cache.removeSuppressions(project, [hash], 'marketing');
      expect(await cache.getSuppression(project, hash, 'marketing')).toBeUndefined();
    });

    it('never serves a "not suppressed" of the project-wide list past negativeTtlMs, whichever check cached it', async () => {
      const observed = observedStore();
      let clock = 10_000;
      const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 500, now: () => clock });
      const hash = hashOf('a@example.com');
      await observed.inner.addSuppression(project, inStream('a@example.com', 'marketing'));
      expect(await cache.getSuppression(project, hash, 'marketing')).toEqual(inStream('a@example.com', 'marketing'));
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toBeUndefined();
      await observed.inner.addSuppression(project, record('a@example.com')); // elsewhere, announcement lost
      clock = 10_499;
      expect(await cache.getSuppression(project, hash)).toBeUndefined();
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toBeUndefined();
      clock = 10_501;
      expect(await cache.getSuppression(project, hash)).toEqual(record('a@example.com'));
      expect(await cache.getSuppression(project, hash, 'weekly-digest')).toEqual(record('a@example.com'));
      // A stream's "suppressed" is a positive answer: it was served until the project-wide one replaced it.
      expect(await cache.getSuppression(project, hash, 'marketing')).toEqual(record('a@example.com'));
    });

    it('answers as the store does, after any writes of any list, through its own writes or announced ones', async () => {
      const emails = ['a@example.com', 'b@example.com', 'c@example.com'];
      const lists = [undefined, 'marketing', 'weekly-digest'];
      const write = fc.record({
        kind: fc.constantFrom('add', 'remove'),
        email: fc.constantFrom(...emails),
        stream: fc.constantFrom(...lists),
        elsewhere: fc.boolean(),
        at: fc.integer({ min: 1, max: 5 }),
      });
      const check = fc.record({
        kind: fc.constant('check' as const),
        emails: fc.subarray(emails, { minLength: 1 }),
        stream: fc.constantFrom(...lists),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(write, check), { maxLength: 30 }), async (steps) => {
          const observed = observedStore();
          const cache = await createCheckCache({ store: observed.store, negativeTtlMs: 3_600_000 });
          for (const step of steps) {
            if (step.kind === 'check') {
              const hashes = step.emails.map(hashOf);
              expect(await cache.getSuppressions(project, hashes, step.stream)).toEqual(
                await observed.inner.getSuppressions(project, hashes, step.stream),
              );
              expect(await cache.getSuppression(project, hashes[0]!, step.stream)).toEqual(
                await observed.inner.getSuppression(project, hashes[0]!, step.stream),
              );
              continue;
            }
            const target = step.elsewhere ? observed.inner : cache;
            const hash = hashOf(step.email);
            if (step.kind === 'add') {
              const added = { ...record(step.email, step.at), ...(step.stream === undefined ? {} : { stream: step.stream }) };
              await target.addSuppression(project, added);
            } else await target.removeSuppression(project, hash, step.stream);
            if (step.elsewhere) observed.publish({ projectId: project, hashes: [hash] });
          }
        }),
      );
    });
  });
});

/**
 * Two instances' stores over one memory store, whose writes announce their hashes to both at once, as
 * Redis pub/sub and LISTEN/NOTIFY do: runs the suite's check-cache scenarios without a server.
 */
function sharedStores(): [Store, Store] {
  const inner = createMemoryStore();
  const listeners = new Set<(invalidation: SuppressionInvalidation) => void>();
  const announce = (projectId: string, hashes: string[]) => {
    if (hashes.length > 0) for (const listener of listeners) listener({ projectId, hashes });
  };
  const instance = (): Store => ({
    ...inner,
    async addSuppression(projectId, record) {
      const result = await inner.addSuppression(projectId, record);
      announce(projectId, [record.hash]);
      return result;
    },
    async removeSuppression(projectId, hash, stream) {
      const result = await inner.removeSuppression(projectId, hash, stream);
      announce(projectId, [hash]);
      return result;
    },
    async mergeSuppressions(projectId, records) {
      const result = await inner.mergeSuppressions(projectId, records);
      announce(
        projectId,
        records.map((record) => record.hash),
      );
      return result;
    },
    async removeSuppressions(projectId, hashes, stream) {
      const result = await inner.removeSuppressions(projectId, hashes, stream);
      announce(projectId, [...hashes]);
      return result;
    },
    async applyEvents(projectId, events) {
      const result = await inner.applyEvents(projectId, events);
      announce(
        projectId,
        events.flatMap((event) => (event.suppression === null ? [] : [event.suppression.hash])),
      );
      return result;
    },
    async subscribeInvalidations(listener) {
      listeners.add(listener);
      return async () => void listeners.delete(listener);
    },
    async close() {},
  });
  return [instance(), instance()];
}

runCheckCacheSuite({ name: 'memory store with announced writes', test, expect, createStores: async () => sharedStores() });
