// Issue 25 in Redis, read through raw commands: the suppression value keeps its bytes without expiry
// and gains `\1<expiresAt>` with it; the expiry index and the registry feed purgeExpired across projects
// and lists; the soft-bounce history is one STRING per address with a TTL past its keep time; the
// allowlist is a HASH and an ordered ZSET; all in the project's slot, on Redis and on Redis Cluster.
import { randomUUID } from 'node:crypto';
import {
  createEmailHasher,
  packProvenance,
  packRuleBounce,
  storedSoftBounceRule,
  timelineEntryId,
  DAY_MS,
  type StoredEvent,
  type SuppressionProvenance,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { PURGE_PER_CALL } from '../src/redis-store.js';
import { clusterClient } from './cluster-client.js';

const T0 = Date.UTC(2025, 0, 1);
const HOUR = 3_600_000;
const hashEmail = createEmailHasher();
const raw = new Redis(inject('redisUrl'));
const client = new Redis(inject('redisUrl'));
const cluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([raw.quit(), client.quit(), cluster.quit()]));

const servers: [string, () => Redis | Cluster][] = [
  ['Redis', () => client],
  ['Redis Cluster', () => cluster],
];

function fresh(redis: Redis | Cluster) {
  const keyPrefix = `policies:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return { keyPrefix, projectId, tag: `${keyPrefix}{${projectId}}:`, store: createRedisStore({ client: redis, keyPrefix }) };
}

function address(i: number) {
  const email = `user-${i}@example.com`;
  return { email, hash: hashEmail(email) };
}

function record(i: number, createdAt: number, more: Partial<SuppressionRecord> = {}): SuppressionRecord {
  return { ...address(i), reason: 'hard_bounce', createdAt, ...more };
}

/** The HASH field of a hash: its first 30 bytes (written independently of src/layout.ts). */
const field = (hash: string) => Buffer.from(hash.slice(0, 60), 'hex');

/** A soft bounce as the service prepares it for the rule. */
function softBounce(i: number, at: number, messageId: string): StoredEvent {
  const key = `postmark:${randomUUID()}`;
  const cause = { provider: 'postmark' as const, messageId, eventId: timelineEntryId(key), diagnostic: '452 4.2.2 Mailbox full' };
  const { email, hash } = address(i);
  return {
    key,
    message: null,
    trackingIdSearchKey: null,
    suppression: null,
    ruleInput: {
      kind: 'soft_bounce',
      hash,
      email,
      at,
      message: `postmark:${messageId}\n`,
      cause,
      packed: packRuleBounce(cause, at),
      causeJson: JSON.stringify([cause.provider, cause.messageId, cause.diagnostic]),
    },
  };
}

describe('the suppression value', () => {
  test('without expiry it keeps the bytes of the release before; with it, \\1 and expiresAt follow', async () => {
    const { tag, projectId, store } = fresh(client);
    const provenance: SuppressionProvenance = { source: 'api', at: T0 };
    await store.addSuppression(projectId, record(1, T0, { provenance }), T0);
    await store.addSuppression(projectId, record(2, T0, { provenance, expiresAt: T0 + DAY_MS }), T0);
    // The previous release's packSuppression, written out.
    expect(await raw.hget(`${tag}s`, field(address(1).hash))).toBe(`2${T0}:user-1@example.com\0${packProvenance(provenance)}`);
    expect(await raw.hget(`${tag}s`, field(address(2).hash))).toBe(
      `2${T0}:user-2@example.com\0${packProvenance(provenance)}\x01${T0 + DAY_MS}`,
    );
    // Only the expiring one is indexed, and the project is listed for purgeExpired.
    expect(await raw.zrange(`${tag}x`, 0, -1, 'WITHSCORES')).toStrictEqual([address(2).hash, String(T0 + DAY_MS)]);
    expect(await raw.smembers(`${tag.slice(0, tag.indexOf('{'))}expiring-projects`)).toStrictEqual([projectId]);
  });

  test('a value the previous release wrote reads as it did; with no expiry anywhere no new key appears', async () => {
    const { keyPrefix, tag, projectId, store } = fresh(client);
    const { hash } = address(3);
    // Written by the previous release: no provenance, and with one.
    await raw.hset(`${tag}s`, field(hash), `3${T0}:user-3@example.com`);
    await raw.zadd(`${tag}sk`, 0, '');
    expect(await store.getSuppression(projectId, hash, undefined, T0)).toStrictEqual({
      hash,
      email: 'user-3@example.com',
      reason: 'complaint',
      createdAt: T0,
    });
    await store.mergeSuppressions(projectId, [record(4, T0)], T0);
    await store.applyEvents(projectId, [{ key: 'e1', message: null, trackingIdSearchKey: null, suppression: record(5, T0) }], { now: T0 });
    const keys = await raw.keys(`${keyPrefix}*`);
    expect(keys.filter((key) => /:(x|al|ao|sh:.*)$/.test(key) || key.endsWith('expiring-projects'))).toStrictEqual([]);
  });

  test('a check in a stream: an expired project-wide record does not hide the stream’s', async () => {
    const { projectId, store } = fresh(client);
    const { hash } = address(6);
    await store.addSuppression(projectId, record(6, T0, { expiresAt: T0 + HOUR }));
    await store.addSuppression(projectId, record(6, T0, { reason: 'manual', stream: 'news' }));
    expect((await store.getSuppression(projectId, hash, 'news', T0))?.stream).toBeUndefined();
    expect((await store.getSuppression(projectId, hash, 'news', T0 + HOUR))?.stream).toBe('news');
    expect(await store.getSuppressions(projectId, [hash, hash], 'news', T0 + HOUR)).toMatchObject([{ stream: 'news' }, { stream: 'news' }]);
    expect(await store.getSuppression(projectId, hash, undefined, T0 + HOUR)).toBeUndefined();
  });
});

describe.each(servers)('purgeExpired on %s', (_, redis) => {
  test('deletes the expired suppressions of every project and list, only those, and invalidates them', async () => {
    const { keyPrefix, store } = fresh(redis());
    const projects = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    // Subscribed before the merges, and their two invalidations heard before the purge: on a Cluster a
    // publish reaches a subscriber on another node later, so one subscribed after them could still hear them.
    let heard: string[] = [];
    let merges = 0;
    const stop = await store.subscribeInvalidations(({ projectId, hashes }) => {
      if (!projects.includes(projectId)) return;
      merges++;
      heard.push(...hashes);
    });
    for (const projectId of projects) {
      await store.mergeSuppressions(projectId, [
        record(1, T0, { expiresAt: T0 + HOUR }),
        record(2, T0, { expiresAt: T0 + 2 * HOUR }),
        record(3, T0),
        record(4, T0, { stream: 'news', reason: 'manual', expiresAt: T0 + HOUR }),
      ]);
    }
    await expect.poll(() => merges).toBe(2);
    heard = [];
    expect(await store.purgeExpired(T0 + HOUR - 1)).toBe(0);
    expect(await store.purgeExpired(T0 + HOUR)).toBe(4);
    for (const projectId of projects) {
      const left = (await store.listSuppressions(projectId, { limit: 10 })).map((r) => r.email);
      expect(left.sort()).toStrictEqual(['user-2@example.com', 'user-3@example.com']);
      expect(await store.listSuppressions(projectId, { stream: 'news', limit: 10 })).toStrictEqual([]);
      expect(await redis().zcard(`${keyPrefix}{${projectId}}:x`)).toBe(1);
      // A stream's list emptied by the purge leaves no keys behind.
      expect(await redis().exists(`${keyPrefix}{${projectId}}:s.news`, `${keyPrefix}{${projectId}}:sk.news`)).toBe(0);
    }
    await expect.poll(() => heard.length).toBeGreaterThanOrEqual(4);
    expect(new Set(heard)).toStrictEqual(new Set([address(1).hash, address(4).hash]));
    await stop();
  });

  test(`deletes at most ${PURGE_PER_CALL} a call; the next call deletes the rest`, async () => {
    const { projectId, store } = fresh(redis());
    const expiring = Array.from({ length: PURGE_PER_CALL + 5 }, (_, i) => record(i, T0, { expiresAt: T0 + 1 }));
    await store.mergeSuppressions(projectId, expiring);
    expect(await store.purgeExpired(T0 + 1)).toBe(PURGE_PER_CALL);
    expect(await store.purgeExpired(T0 + 1)).toBe(5);
    expect(await store.purgeExpired(T0 + 1)).toBe(0);
  });
});

describe.each(servers)('the soft-bounce rule on %s', (_, redis) => {
  test('the history is one STRING per address with a TTL; the suppression’s provenance is packProvenance’s bytes', async () => {
    const { tag, projectId, store } = fresh(redis());
    const rule = storedSoftBounceRule({ softBounces: { bounces: 2, days: 1 } })!;
    const now = T0 + 3 * HOUR;
    const [first, second] = [softBounce(7, T0, 'm1'), softBounce(7, T0 + 2 * HOUR, 'm2')];
    const { hash } = address(7);
    expect(await store.applyEvents(projectId, [first], { now, softBounces: rule })).toStrictEqual(['applied']);
    const history = await redis().get(`${tag}sh:${hash}`);
    // No delivery, then the bounce: its time, event ID, the message's length and text (a newline in it
    // is safe), and its packed form.
    const bounce = first.ruleInput as Extract<StoredEvent['ruleInput'], { kind: 'soft_bounce' }>;
    expect(history).toBe(`\n${T0},${bounce.cause.eventId},${bounce.message.length}:${bounce.message}${bounce.packed}`);
    const ttl = await redis().pttl(`${tag}sh:${hash}`);
    expect(ttl).toBeGreaterThan(T0 + rule.keepMs - now + DAY_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(T0 + rule.keepMs - now + DAY_MS);

    expect(await store.applyEvents(projectId, [second], { now, softBounces: rule })).toStrictEqual(['suppressed']);
    const made = await store.getSuppression(projectId, hash, undefined, now);
    const end = second.ruleInput as Extract<StoredEvent['ruleInput'], { kind: 'soft_bounce' }>;
    expect(made?.provenance?.rule?.events.map((event) => event.at)).toStrictEqual([T0, T0 + 2 * HOUR]);
    expect(made?.provenance?.event).toStrictEqual(end.cause);
    expect(await redis().hgetBuffer(`${tag}s`, field(hash))).toStrictEqual(
      Buffer.from(`2${T0 + 2 * HOUR}:user-7@example.com\0${packProvenance(made!.provenance!)}\x01${T0 + 2 * HOUR + 30 * DAY_MS}`),
    );
    // Removal from the project-wide list forgets the history.
    await store.removeSuppression(projectId, hash);
    expect(await redis().exists(`${tag}sh:${hash}`)).toBe(0);
  });

  test('an allowlisted address: its bounces are not counted, its webhook suppression not written, an unsubscribe is', async () => {
    const { tag, projectId, store } = fresh(redis());
    const rule = storedSoftBounceRule({ softBounces: { bounces: 1, days: 1 } })!;
    await store.addAllowlistEntry(projectId, { key: '@example.com', entry: '@example.com', createdAt: T0 });
    const webhook = record(8, T0, { provenance: { source: 'webhook', at: T0 } });
    const unsubscribe = record(9, T0, { reason: 'manual', provenance: { source: 'unsubscribe', at: T0 } });
    const events: StoredEvent[] = [
      softBounce(8, T0, 'm1'),
      { key: 'hard', message: null, trackingIdSearchKey: null, suppression: webhook },
      { key: 'unsubscribe', message: null, trackingIdSearchKey: null, suppression: unsubscribe },
    ];
    expect(await store.applyEvents(projectId, events, { now: T0, softBounces: rule })).toStrictEqual(['applied', 'applied', 'suppressed']);
    expect(await redis().exists(`${tag}sh:${address(8).hash}`)).toBe(0);
    expect((await store.listSuppressions(projectId, { limit: 10 })).map((r) => r.email)).toStrictEqual(['user-9@example.com']);
  });
});

describe.each(servers)('the allowlist on %s', (_, redis) => {
  test('a HASH by key and a ZSET in entry order, in the project’s slot; listing pages after an entry', async () => {
    const { tag, projectId, store } = fresh(redis());
    const entries = [
      { key: address(1).hash, entry: 'user-1@example.com', createdAt: T0 },
      { key: '@example.com', entry: '@example.com', createdAt: T0 + 1 },
      { key: '@example.co', entry: '@example.co', createdAt: T0 + 2 },
    ];
    for (const entry of entries) expect(await store.addAllowlistEntry(projectId, entry)).toStrictEqual({ entry, created: true });
    expect(await store.addAllowlistEntry(projectId, { ...entries[0]!, createdAt: T0 + 9 })).toStrictEqual({
      entry: entries[0],
      created: false,
    });
    expect(await redis().hget(`${tag}al`, '@example.com')).toBe(`${T0 + 1}:@example.com`);
    expect(await store.listAllowlist(projectId, { limit: 10 })).toStrictEqual([entries[2], entries[1], entries[0]]);
    expect(await store.listAllowlist(projectId, { limit: 1, after: '@example.co' })).toStrictEqual([entries[1]]);
    expect(
      await store.findAllowlisted(projectId, [address(1), address(2), { hash: address(3).hash, email: 'x@other.example' }]),
    ).toStrictEqual([true, true, false]);
    expect(await store.removeAllowlistEntry(projectId, '@example.com')).toStrictEqual(entries[1]);
    expect(await store.removeAllowlistEntry(projectId, '@example.com')).toBeUndefined();
    expect(await redis().zrange(`${tag}ao`, 0, -1)).toStrictEqual([
      `@example.co\0${T0 + 2},@example.co`,
      `user-1@example.com\0${T0},${address(1).hash}`,
    ]);
  });
});
