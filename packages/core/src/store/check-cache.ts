import { LRUCache } from 'lru-cache';
import type { Store, SuppressionRecord } from './store.js';

export interface CheckCacheOptions {
  /** The store to put the cache in front of. */
  store: Store;
  /** Entries kept at most. Default 100 000. */
  max?: number;
  /**
   * How long a "suppressed" answer may be served without asking the store. Invalidations drop it
   * sooner; the TTL only bounds how long a removal is missed if an invalidation is lost. Default 60 s.
   */
  ttlMs?: number;
  /**
   * How long a "not suppressed" answer may be served, at most, whatever happens to invalidations: the
   * staleness bound of the send gate. 0 caches no negative answers. Default 1 000 ms.
   */
  negativeTtlMs?: number;
  /** Milliseconds of a monotonic clock, for the TTLs. Default `performance.now`. */
  now?: () => number;
}

/** Caches "not suppressed" (lru-cache stores no undefined or null). */
const NOT_SUPPRESSED = Symbol('not suppressed');
type Entry = SuppressionRecord | typeof NOT_SUPPRESSED;
const recordOf = (entry: Entry) => (entry === NOT_SUPPRESSED ? undefined : entry);

/**
 * Puts an in-process LRU cache in front of a store for `getSuppression` / `getSuppressions` (the check
 * and send-gate path). Entries are dropped on this instance's writes and on invalidations published by
 * every other instance through the store (`subscribeInvalidations`: Redis pub/sub, Postgres
 * LISTEN/NOTIFY). A "not suppressed" answer is never served longer than `negativeTtlMs`, even if
 * invalidations are lost; a read that raced with a write is not cached at all.
 *
 * @example
 * const store = await createCheckCache({ store: createRedisStore({ client, keyPrefix: 'mw:' }), negativeTtlMs: 500 });
 * const mailwarden = createMailwarden({ store });
 */
export async function createCheckCache(options: CheckCacheOptions): Promise<Store> {
  const { store } = options;
  const ttl = options.ttlMs ?? 60_000;
  const negativeTtl = options.negativeTtlMs ?? 1_000;
  const cache = new LRUCache<string, Entry>({
    max: options.max ?? 100_000,
    ttl,
    // Read the clock on every lookup: the TTL is a staleness bound, not a hint.
    ttlResolution: 0,
    ...(options.now === undefined ? {} : { perf: { now: options.now } }),
  });
  // Bumped by every invalidation: a store read that started before one may hold an older answer, so
  // its result is returned but not cached.
  let generation = 0;
  const keyOf = (projectId: string, hash: string) => `${projectId}\n${hash}`;
  const invalidate = (projectId: string, hashes: Iterable<string>) => {
    generation++;
    for (const hash of hashes) cache.delete(keyOf(projectId, hash));
  };
  const remember = (key: string, record: SuppressionRecord | undefined) => {
    if (record !== undefined) cache.set(key, record);
    else if (negativeTtl > 0) cache.set(key, NOT_SUPPRESSED, { ttl: negativeTtl });
  };

  const unsubscribe = await store.subscribeInvalidations?.(({ projectId, hashes }) => invalidate(projectId, hashes));

  const cached: Store = {
    async getSuppression(projectId, hash) {
      const key = keyOf(projectId, hash);
      const hit = cache.get(key);
      if (hit !== undefined) return recordOf(hit);
      const started = generation;
      const record = await store.getSuppression(projectId, hash);
      if (generation === started) remember(key, record);
      return record;
    },

    async getSuppressions(projectId, hashes) {
      const results: (SuppressionRecord | undefined)[] = new Array(hashes.length);
      const missing: number[] = [];
      hashes.forEach((hash, index) => {
        const hit = cache.get(keyOf(projectId, hash));
        if (hit === undefined) missing.push(index);
        else results[index] = recordOf(hit);
      });
      if (missing.length === 0) return results;
      const started = generation;
      const records = await store.getSuppressions(
        projectId,
        missing.map((index) => hashes[index]!),
      );
      missing.forEach((index, i) => {
        results[index] = records[i];
        if (generation === started) remember(keyOf(projectId, hashes[index]!), records[i]);
      });
      return results;
    },

    async addSuppression(projectId, record) {
      try {
        return await store.addSuppression(projectId, record);
      } finally {
        invalidate(projectId, [record.hash]);
      }
    },

    async removeSuppression(projectId, hash) {
      try {
        return await store.removeSuppression(projectId, hash);
      } finally {
        invalidate(projectId, [hash]);
      }
    },

    async mergeSuppressions(projectId, records) {
      try {
        return await store.mergeSuppressions(projectId, records);
      } finally {
        if (records.length > 0)
          invalidate(
            projectId,
            records.map((record) => record.hash),
          );
      }
    },

    async removeSuppressions(projectId, hashes) {
      try {
        return await store.removeSuppressions(projectId, hashes);
      } finally {
        if (hashes.length > 0) invalidate(projectId, hashes);
      }
    },

    async applyEvents(projectId, events) {
      try {
        return await store.applyEvents(projectId, events);
      } finally {
        const hashes = events.flatMap((event) => (event.suppression === null ? [] : [event.suppression.hash]));
        if (hashes.length > 0) invalidate(projectId, hashes);
      }
    },

    listSuppressions: (projectId, page) => store.listSuppressions(projectId, page),
    listMessages: (projectId, query) => store.listMessages(projectId, query),
    getMessage: (projectId, key) => store.getMessage(projectId, key),
    listTrackingIds: (projectId, query) => store.listTrackingIds(projectId, query),
    getTrackingId: (projectId, trackingId) => store.getTrackingId(projectId, trackingId),
    getStats: (projectId, query) => store.getStats(projectId, query),
    ...(store.subscribeInvalidations === undefined
      ? {}
      : { subscribeInvalidations: (listener) => store.subscribeInvalidations!(listener) }),
    ...(store.purgeExpired === undefined ? {} : { purgeExpired: (now) => store.purgeExpired!(now) }),

    ...(store.claimWebhookToken === undefined
      ? {}
      : { claimWebhookToken: (projectId, token, digest, expiresAt) => store.claimWebhookToken!(projectId, token, digest, expiresAt) }),

    async close() {
      await unsubscribe?.();
      cache.clear();
      await store.close();
    },
  };
  return cached;
}
