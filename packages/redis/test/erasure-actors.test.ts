// Issue 27 in Redis, read through raw commands as well as the store: the dump the conformance suite
// searches holds every kind of key; an erasure leaves no form of the address under the prefix while
// its suppressions stay by hash; a change's actor is a field `by`, absent without one; the key list
// is a HASH; rate counts are keys of their window that expire after it. On Redis and Redis Cluster.
import { randomUUID } from 'node:crypto';
import { erasedEmail, messageKey, timelineEntryId, type StoredEvent, type SuppressionRecord } from '@mailwarden/core/store';
import { erasureOf } from '@mailwarden/store-test-suite';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { clusterClient } from './cluster-client.js';
import { dumpRedis } from './dump.js';

const T0 = Date.UTC(2026, 0, 1);
const client = new Redis(inject('redisUrl'));
const cluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([client.quit(), cluster.quit()]));

const servers: [string, () => Redis | Cluster][] = [
  ['Redis', () => client],
  ['Redis Cluster', () => cluster],
];

function fresh(redis: Redis | Cluster) {
  const keyPrefix = `erasure:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return {
    keyPrefix,
    projectId,
    tag: `${keyPrefix}{${projectId}}:`,
    store: createRedisStore({ client: redis, keyPrefix, changes: {} }),
  };
}

/** A bounce of a message to `recipient` whose event key and diagnostic quote the address as given. */
function bounce(recipient: string, given: string, at: number, stream: string | null = null): StoredEvent {
  const messageId = `m-${randomUUID()}`;
  const key = messageKey('postmark', messageId, recipient);
  const eventKey = `bounce-${given}`;
  const eventId = timelineEntryId(`postmark:${eventKey}`);
  const diagnostic = `550 5.1.1 <${given}>: no such user`;
  const erasure = erasureOf(given, at);
  return {
    key: `postmark:${eventKey}`,
    message: {
      key,
      provider: 'postmark',
      messageId,
      recipient,
      trackingId: 'welcome',
      facts: 4,
      firstEventAt: at,
      lastEventAt: at,
      stream,
    },
    trackingIdSearchKey: 'welcome',
    suppression: {
      hash: erasure.hash,
      email: recipient,
      reason: 'hard_bounce',
      createdAt: at,
      provenance: { source: 'webhook', at, event: { provider: 'postmark', messageId, eventId, diagnostic } },
    },
    timelineEntry: {
      id: eventId,
      eventKey,
      type: 'bounced',
      provider: 'postmark',
      occurredAt: at,
      diagnostic,
    } as StoredEvent['timelineEntry'],
    actor: 'webhook:postmark:bounced',
  };
}

describe('the dump', () => {
  test.each(servers)('%s: every kind of key with its values, scores and stream fields', async (_, redis) => {
    const { keyPrefix, tag } = fresh(redis());
    const r = redis();
    await r.set(`${tag}string`, 'marker-string');
    await r.hset(`${tag}hash`, 'marker-field', 'marker-value');
    await r.sadd(`${tag}set`, 'marker-member');
    await r.zadd(`${tag}zset`, 42, 'marker-zmember');
    await r.rpush(`${tag}list`, 'marker-item');
    await r.xadd(`${tag}stream`, '7-0', 'marker-name', 'marker-entry');
    // Binary bytes (as the suppression fields are) do not hide the text around them.
    await r.hset(`${tag}binary`, Buffer.from([0xff, 0xfe, 0x00]), Buffer.concat([Buffer.from([0xff]), Buffer.from('marker-binary')]));
    const text = await dumpRedis(r, keyPrefix);
    for (const marker of ['string', 'field', 'value', 'member', 'zmember', 'item', 'name', 'entry', 'binary']) {
      expect(text).toContain(`marker-${marker}`);
    }
    expect(text).toContain(`${tag}zset zset\n  marker-zmember\n  42`);
    expect(text).toContain(`${tag}stream stream\n  7-0\n  marker-name\n  marker-entry`);
    expect(text).toContain(`${tag}list list`);
    expect(text).toContain(`${tag}set set`);
  });
});

describe('erasure', () => {
  test.each(servers)('%s: no form of the address under the prefix, its suppressions kept by hash', async (_, redis) => {
    const { keyPrefix, projectId, tag, store } = fresh(redis());
    const given = ` Zoë.${randomUUID()}@Example.COM `;
    const erasure = erasureOf(given, T0 + 100, 'key:ops');
    const other = erasureOf(`other-${randomUUID()}@example.com`, T0);
    // Everywhere the address lives: messages with timelines, dedup keys, both lists (the project-wide
    // one expiring), the allowlist, the soft-bounce history, and the feed.
    await store.applyEvents(projectId, [bounce(erasure.email, given, T0), bounce(other.email, other.email, T0)], { now: T0 });
    await store.mergeSuppressions(
      projectId,
      [{ ...bounce(erasure.email, given, T0 + 1).suppression!, stream: 'news', reason: 'manual' }],
      T0 + 1,
    );
    const expiring: SuppressionRecord = {
      hash: erasure.hash,
      email: erasure.email,
      reason: 'complaint',
      createdAt: T0 + 2,
      expiresAt: T0 + 10_000,
    };
    await store.mergeSuppressions(projectId, [expiring], T0 + 2);
    await store.addAllowlistEntry(projectId, { key: erasure.hash, entry: erasure.email, createdAt: T0 + 3 });
    await redis().set(`${tag}sh:${erasure.hash}`, `history of ${erasure.email}`);
    const before = await dumpRedis(redis(), keyPrefix);
    expect(before).toContain(erasure.email);

    const result = await store.eraseAddress(projectId, erasure);

    const text = await dumpRedis(redis(), keyPrefix);
    for (const form of erasure.forms) expect(text.includes(form), JSON.stringify(form)).toBe(false);
    // The other address is untouched: its message, suppression and feed entries.
    expect(text).toContain(other.email);
    expect(result.messages).toBe(1);
    const placeholder = erasedEmail(erasure.hash);
    expect(result.records.map(({ email, stream, expiresAt, reason }) => ({ email, stream, expiresAt, reason }))).toEqual([
      { email: placeholder, stream: undefined, expiresAt: undefined, reason: 'complaint' },
      { email: placeholder, stream: 'news', expiresAt: undefined, reason: 'manual' },
    ]);
    expect(await store.getSuppression(projectId, erasure.hash, undefined, T0 + 1_000_000)).toMatchObject({
      email: placeholder,
      reason: 'complaint',
    });
    // The project-wide record lost its expiry, so it left the expiry index.
    expect(await redis().zscore(`${tag}x`, erasure.hash)).toBeNull();
    expect(await redis().exists(`${tag}sh:${erasure.hash}`)).toBe(0);
    const { changes, last } = await store.listChanges(projectId, { after: 0, limit: 100, hash: erasure.hash });
    expect(changes).toEqual([
      {
        seq: last,
        at: T0 + 100,
        actor: 'key:ops',
        kind: 'address.erased',
        hash: erasure.hash,
        records: result.records,
        messages: 1,
        changes: result.changes,
      },
    ]);
    // Again: nothing more to erase, another erasure change.
    const again = await store.eraseAddress(projectId, erasure);
    expect(again).toEqual({ records: result.records, messages: 0, changes: 0 });
  });
});

describe('actors', () => {
  test.each(servers)('%s: a field `by` after the kind and time, only when the write names one', async (_, redis) => {
    const { projectId, tag, store } = fresh(redis());
    const record = erasureOf(`a-${randomUUID()}@example.com`, T0).suppression;
    await store.addSuppression(projectId, record, T0);
    await store.removeSuppression(projectId, record.hash, undefined, T0 + 1, 'key:ops');
    const entries = await redis().xrange(`${tag}changes`, '-', '+');
    expect(entries.map(([, fields]) => fields.slice(0, 6))).toEqual([
      ['k', 'suppression.added', 'a', String(T0), 'h', record.hash],
      ['k', 'suppression.removed', 'a', String(T0 + 1), 'by', 'key:ops'],
    ]);
    const page = await store.listChanges(projectId, { after: 0, limit: 10, actors: ['key'] });
    expect(page.changes.map((change) => [change.kind, change.actor])).toEqual([['suppression.removed', 'key:ops']]);
    // An actor that only starts like the filter does not match (`key` is not `keys:`).
    expect((await store.listChanges(projectId, { after: 0, limit: 10, actors: ['key:op'] })).changes).toEqual([]);
  });
});

describe('API keys and rate counts', () => {
  test.each(servers)('%s: the key list is a HASH of version and scopes', async (_, redis) => {
    const { projectId, tag, store } = fresh(redis());
    await store.syncApiKeys(projectId, [{ name: 'sender', scopes: ['check'], version: '0123456789abcdef' }], T0, 'config');
    expect(await redis().hgetall(`${tag}keys`)).toEqual({ sender: '0123456789abcdef|check' });
    const changes = await store.syncApiKeys(
      projectId,
      [{ name: 'sender', scopes: ['check', 'read'], version: '0123456789abcdef' }],
      T0 + 1,
      'config',
    );
    expect(changes).toEqual([
      {
        seq: 2,
        at: T0 + 1,
        actor: 'config',
        kind: 'key.updated',
        key: { name: 'sender', scopes: ['check', 'read'] },
        previous: { name: 'sender', scopes: ['check'] },
      },
    ]);
  });

  test.each(servers)('%s: a count per bucket and window, kept a little past the window', async (_, redis) => {
    const { keyPrefix, store } = fresh(redis());
    const windowMs = 60_000;
    const now = 100 * windowMs + 15_000;
    // Buckets that land in different Cluster slots.
    const buckets = ['client:10.0.0.1', 'key:ops', 'client:10.0.0.2', 'client:10.0.0.1'];
    expect(await store.hitRateLimits(buckets, windowMs, now)).toEqual([1, 1, 1, 2]);
    expect(await store.hitRateLimits(buckets.slice(0, 1), windowMs, now + 1)).toEqual([3]);
    // The next window counts afresh.
    expect(await store.hitRateLimits(buckets.slice(0, 1), windowMs, 101 * windowMs)).toEqual([1]);
    const ttl = await redis().pttl(`${keyPrefix}rl:client:10.0.0.1:100`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(windowMs - 15_000 + 1000);
  });
});
