import { LRUCache } from 'lru-cache';
import type { Store, SuppressionRecord } from './store.js';

export interface CheckCacheOptions {
  /** The store to put the cache in front of. */
  store: Store;
  /** Addresses (per project) kept at most, each with its answers for the project-wide list and the streams checked. Default 100 000. */
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

/** A cached "not suppressed" (a slot's answers are `undefined` when unknown). */
const NOT_SUPPRESSED = Symbol('not suppressed');
type Entry = SuppressionRecord | typeof NOT_SUPPRESSED;
const recordOf = (entry: Entry) => (entry === NOT_SUPPRESSED ? undefined : entry);

/**
 * What the cache knows of one address of one project: the project-wide list's answer, and per stream
 * the answer of a check for that stream made while the project-wide list held none (that stream's
 * entry, or not suppressed). Each answer has its own expiry (`until`, of the `now` clock). Any
 * invalidation of the hash drops the whole slot, whatever stream it was for (docs/storage.md, "Suppression lists").
 */
interface Slot {
  wide: Entry | undefined;
  wideUntil: number;
  streams: Map<string, { entry: Entry; until: number }> | undefined;
}

/**
 * Puts an in-process LRU cache in front of a store for `getSuppression` / `getSuppressions` (the check
 * and send-gate path), with or without a stream. Entries are dropped on this instance's writes and on
 * invalidations published by every other instance through the store (`subscribeInvalidations`: Redis
 * pub/sub, Postgres LISTEN/NOTIFY). A "not suppressed" answer is never served longer than
 * `negativeTtlMs`, even if invalidations are lost; a read that raced with a write is not cached at all.
 * A project-wide "suppressed" answers a check for every stream; a stream's answers are kept beside it,
 * per address, so dropping an address drops them all.
 *
 * @example
 * const store = await createCheckCache({ store: createRedisStore({ client, keyPrefix: 'mw:' }), negativeTtlMs: 500 });
 * const mailwarden = createMailwarden({ store });
 */
export async function createCheckCache(options: CheckCacheOptions): Promise<Store> {
  const { store } = options;
  const ttl = options.ttlMs ?? 60_000;
  const negativeTtl = options.negativeTtlMs ?? 1_000;
  // Read on every lookup: the TTLs are staleness bounds, not hints. Each answer keeps its own expiry,
  // so the LRU only bounds the number of addresses.
  const clock = options.now ?? (() => performance.now());
  const cache = new LRUCache<string, Slot>({ max: options.max ?? 100_000 });
  // Bumped by every invalidation: a store read that started before one may hold an older answer, so
  // its result is returned but not cached.
  let generation = 0;
  const keyOf = (projectId: string, hash: string) => `${projectId}\n${hash}`;
  const invalidate = (projectId: string, hashes: Iterable<string>) => {
    generation++;
    for (const hash of hashes) cache.delete(keyOf(projectId, hash));
  };
  /**
   * The cached answer of a check for `stream` (the project-wide list's without one); `undefined` when
   * unknown, or when the cached record has expired at the caller's `now` (the store then answers).
   */
  const lookup = (key: string, stream: string | undefined, now: number | undefined): Entry | undefined => {
    const slot = cache.get(key);
    if (slot === undefined) return undefined;
    const time = clock();
    const wide = slot.wideUntil > time ? slot.wide : undefined;
    // The project-wide entry answers for every stream.
    if (stream === undefined || (wide !== undefined && wide !== NOT_SUPPRESSED)) return unexpired(wide, now);
    const answer = slot.streams?.get(stream);
    return answer !== undefined && answer.until > time ? unexpired(answer.entry, now) : undefined;
  };
  /** Keeps what a store's check for `stream` answered, and what it implies about the project-wide list. */
  const remember = (key: string, stream: string | undefined, record: SuppressionRecord | undefined) => {
    const wideHeld = record !== undefined && record.stream === undefined;
    // Nothing to keep: a "not suppressed" when negative answers are not cached.
    if (!wideHeld && record === undefined && negativeTtl <= 0) return;
    const time = clock();
    let slot = cache.get(key);
    if (slot === undefined) {
      slot = { wide: undefined, wideUntil: -Infinity, streams: undefined };
      cache.set(key, slot);
    }
    if (wideHeld) {
      slot.wide = record;
      slot.wideUntil = time + ttl;
      return;
    }
    // The project-wide list held none: with a stream, the store answered with that stream's entry or none.
    if (negativeTtl > 0) {
      slot.wide = NOT_SUPPRESSED;
      slot.wideUntil = time + negativeTtl;
    }
    if (stream === undefined) return;
    if (record !== undefined) (slot.streams ??= new Map()).set(stream, { entry: record, until: time + ttl });
    else if (negativeTtl > 0) (slot.streams ??= new Map()).set(stream, { entry: NOT_SUPPRESSED, until: time + negativeTtl });
  };
  /** A cached record that has expired at the caller's `now` is no answer (docs/core.md, "Expiry"). */
  const unexpired = (entry: Entry | undefined, now: number | undefined): Entry | undefined =>
    entry === undefined || entry === NOT_SUPPRESSED || entry.expiresAt === undefined || now === undefined || entry.expiresAt > now
      ? entry
      : undefined;
  /** `[stream]` when one is named: without one the store is called exactly as before streams. */
  // Optional trailing arguments as given: a store sees the call the cache was given, not added `undefined`s.
  const given = <T extends unknown[]>(...args: T): T => {
    let end = args.length;
    while (end > 0 && args[end - 1] === undefined) end--;
    return args.slice(0, end) as T;
  };

  const unsubscribe = await store.subscribeInvalidations?.(({ projectId, hashes }) => invalidate(projectId, hashes));

  const cached: Store = {
    async getSuppression(projectId, hash, stream, now) {
      const key = keyOf(projectId, hash);
      const hit = lookup(key, stream, now);
      if (hit !== undefined) return recordOf(hit);
      const started = generation;
      const record = await (now !== undefined
        ? store.getSuppression(projectId, hash, stream, now)
        : stream === undefined
          ? store.getSuppression(projectId, hash)
          : store.getSuppression(projectId, hash, stream));
      if (generation === started) remember(key, stream, record);
      return record;
    },

    async getSuppressions(projectId, hashes, stream, now) {
      const results: (SuppressionRecord | undefined)[] = new Array(hashes.length);
      const missing: number[] = [];
      hashes.forEach((hash, index) => {
        const hit = lookup(keyOf(projectId, hash), stream, now);
        if (hit === undefined) missing.push(index);
        else results[index] = recordOf(hit);
      });
      if (missing.length === 0) return results;
      const started = generation;
      const asked = missing.map((index) => hashes[index]!);
      const records = await store.getSuppressions(projectId, asked, ...given(stream, now));
      missing.forEach((index, i) => {
        results[index] = records[i];
        if (generation === started) remember(keyOf(projectId, hashes[index]!), stream, records[i]);
      });
      return results;
    },

    async addSuppression(projectId, record, now, actor) {
      try {
        return await store.addSuppression(projectId, record, ...given(now, actor));
      } finally {
        invalidate(projectId, [record.hash]);
      }
    },

    async removeSuppression(projectId, hash, stream, now, actor) {
      try {
        return await store.removeSuppression(projectId, hash, ...given(stream, now, actor));
      } finally {
        invalidate(projectId, [hash]);
      }
    },

    async mergeSuppressions(projectId, records, now, actor) {
      try {
        return await store.mergeSuppressions(projectId, records, ...given(now, actor));
      } finally {
        if (records.length > 0)
          invalidate(
            projectId,
            records.map((record) => record.hash),
          );
      }
    },

    async removeSuppressions(projectId, hashes, stream, now, actor) {
      try {
        return await store.removeSuppressions(projectId, hashes, ...given(stream, now, actor));
      } finally {
        if (hashes.length > 0) invalidate(projectId, hashes);
      }
    },

    async applyEvents(projectId, events, options) {
      try {
        return await (options === undefined ? store.applyEvents(projectId, events) : store.applyEvents(projectId, events, options));
      } finally {
        // A soft bounce may complete the rule's window: its recipient's answer may change too.
        const hashes = events.flatMap((event) =>
          event.suppression !== null ? [event.suppression.hash] : event.ruleInput?.kind === 'soft_bounce' ? [event.ruleInput.hash] : [],
        );
        if (hashes.length > 0) invalidate(projectId, hashes);
      }
    },

    listSuppressions: (projectId, page) => store.listSuppressions(projectId, page),
    listMessages: (projectId, query) => store.listMessages(projectId, query),
    getMessage: (projectId, key) => store.getMessage(projectId, key),
    listTrackingIds: (projectId, query) => store.listTrackingIds(projectId, query),
    getTrackingId: (projectId, trackingId) => store.getTrackingId(projectId, trackingId),
    getStats: (projectId, query) => store.getStats(projectId, query),
    // The allowlist is not cached: it is read on writes (adds, imports), never on the check path.
    listAllowlist: (projectId, query) => store.listAllowlist(projectId, query),
    addAllowlistEntry: (projectId, entry, actor) => store.addAllowlistEntry(projectId, entry, ...given(actor)),
    removeAllowlistEntry: (projectId, key, now, actor) => store.removeAllowlistEntry(projectId, key, ...given(now, actor)),
    findAllowlisted: (projectId, recipients) => store.findAllowlisted(projectId, recipients),
    // The feed, alerts, paused streams and outbound state: never cached (the send gate reads paused
    // streams itself; a pause must block at once).
    ...(store.changes === undefined ? {} : { changes: store.changes }),
    listChanges: (projectId, query) => store.listChanges(projectId, query),
    getAlertWindows: (projectId, scopes) => store.getAlertWindows(projectId, scopes),
    listPausedStreams: (projectId) => store.listPausedStreams(projectId),
    pauseStream: (projectId, stream, now, actor) => store.pauseStream(projectId, stream, now, ...given(actor)),
    resumeStream: (projectId, stream, now, actor) => store.resumeStream(projectId, stream, now, ...given(actor)),
    leaseOutbound: (projectId, endpoint, owner, now, until) => store.leaseOutbound(projectId, endpoint, owner, now, until),
    saveOutbound: (projectId, endpoint, owner, progress, until) => store.saveOutbound(projectId, endpoint, owner, progress, until),
    getOutbound: (projectId, endpoints) => store.getOutbound(projectId, endpoints),
    resumeOutbound: (projectId, endpoint, now, actor) => store.resumeOutbound(projectId, endpoint, now, ...given(actor)),

    async eraseAddress(projectId, erasure) {
      try {
        return await store.eraseAddress(projectId, erasure);
      } finally {
        // The erased hash's answers go at once, not when the store's invalidation comes back (docs/decisions.md, "Erasure").
        invalidate(projectId, [erasure.hash]);
      }
    },
    // Keys and rate counters are not suppressions: nothing cached changes.
    syncApiKeys: (projectId, keys, now, actor) => store.syncApiKeys(projectId, keys, now, actor),
    ...(store.hitRateLimits === undefined
      ? {}
      : { hitRateLimits: (buckets, windowMs, now, counts) => store.hitRateLimits!(buckets, windowMs, now, counts) }),
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
