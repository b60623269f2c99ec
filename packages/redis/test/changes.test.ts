// Issue 26 in Redis, read through raw commands as well as the store: the feed is a STREAM with IDs
// `<seq>-0` and a HASH counter, written by the same script as each write and trimmed exactly; without
// the feed option the scripts write no feed key; alert windows, paused streams and outbound state are
// HASHes in the project's slot, on Redis and on Redis Cluster.
import { randomUUID } from 'node:crypto';
import { MailwardenError, type DeliveryEventType } from '@mailwarden/core';
import {
  Fact,
  createEmailHasher,
  messageKey,
  timelineEntryId,
  type StoredAlertRule,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { EVENTS_PER_SCRIPT } from '../src/redis-store.js';
import { clusterClient } from './cluster-client.js';

const T0 = Date.UTC(2026, 0, 1);
const hashEmail = createEmailHasher();
const client = new Redis(inject('redisUrl'));
const cluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([client.quit(), cluster.quit()]));

const servers: [string, () => Redis | Cluster][] = [
  ['Redis', () => client],
  ['Redis Cluster', () => cluster],
];

/** A store of a fresh key prefix, with a feed of this retention (`null`: none). */
function fresh(redis: Redis | Cluster, changes: { maxLength?: number; maxAgeMs?: number } | null = {}) {
  const keyPrefix = `changes:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return {
    keyPrefix,
    projectId,
    tag: `${keyPrefix}{${projectId}}:`,
    store: createRedisStore({ client: redis, keyPrefix, ...(changes !== null && { changes }) }),
  };
}

function record(i: number, createdAt: number, more: Partial<SuppressionRecord> = {}): SuppressionRecord {
  const email = `user-${i}@example.com`;
  return { hash: hashEmail(email), email, reason: 'hard_bounce', createdAt, ...more };
}

const FACTS: Record<string, number> = {
  sent: Fact.sent,
  delivered: Fact.delivered,
  bounced: Fact.hard_bounced,
  complained: Fact.complained,
};

/** An event of message `i` (its own message ID), as the service prepares it. */
function event(
  i: number,
  type: 'sent' | 'delivered' | 'bounced' | 'complained',
  at: number,
  trackingId: string | null = null,
): StoredEvent {
  const key = `postmark:${randomUUID()}`;
  const recipient = `user-${i}@example.com`;
  const messageId = `message-${i}`;
  return {
    key,
    message: {
      key: messageKey('postmark', messageId, recipient),
      provider: 'postmark',
      messageId,
      recipient,
      trackingId,
      facts: FACTS[type]!,
      firstEventAt: at,
      lastEventAt: at,
      stream: null,
    },
    trackingIdSearchKey: trackingId,
    suppression: null,
    timelineEntry: {
      id: timelineEntryId(key),
      eventKey: key,
      type: type as DeliveryEventType,
      provider: 'postmark',
      occurredAt: at,
      ...(type === 'bounced' && { bounceClass: 'hard' as const }),
    },
  };
}

const rule = (more: Partial<StoredAlertRule> = {}): StoredAlertRule => ({
  window: 10,
  minMessages: 4,
  bounce: { firePpm: 250_000, resolvePpm: 200_000 },
  complaint: { firePpm: 1_000_000, resolvePpm: 800_000 },
  trackingIds: false,
  pause: [],
  ...more,
});

describe('without the feed option', () => {
  test.each(servers)('%s: no script writes a feed key, and listChanges answers an empty page', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis(), null);
    expect(store.changes).toBeUndefined();
    await store.addSuppression(projectId, record(1, T0), T0);
    await store.mergeSuppressions(projectId, [record(1, T0, { reason: 'complaint' }), record(2, T0)], T0);
    await store.removeSuppression(projectId, record(2, T0).hash, undefined, T0);
    await store.removeSuppressions(projectId, [record(1, T0).hash], undefined, T0);
    await store.applyEvents(projectId, [event(1, 'sent', T0), event(1, 'bounced', T0 + 1)], { now: T0 });
    await store.addAllowlistEntry(projectId, { key: '@example.org', entry: '@example.org', createdAt: T0 });
    await store.removeAllowlistEntry(projectId, '@example.org', T0);
    await store.pauseStream(projectId, 'marketing', T0);
    await store.resumeStream(projectId, 'marketing', T0);
    await store.purgeExpired(T0);
    expect(await redis().exists(`${tag}feed`, `${tag}changes`)).toBe(0);
    expect(await store.listChanges(projectId, { after: 3, limit: 10 })).toEqual({ changes: [], next: 3, last: 0 });
  });
});

describe('the feed', () => {
  test.each(servers)('%s: each write appends its changes to a STREAM of IDs <seq>-0 in the same script', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis());
    const first = record(1, T0, { expiresAt: T0 + 10 });
    await store.addSuppression(projectId, first, T0);
    // Expired at T0 + 10: the add replaces it, after saying so.
    const second = record(1, T0 + 20);
    await store.addSuppression(projectId, second, T0 + 20);
    const complaint = record(1, T0 + 30, { reason: 'complaint' });
    await store.mergeSuppressions(projectId, [complaint], T0 + 30);
    // The same bytes again: nothing.
    await store.mergeSuppressions(projectId, [complaint], T0 + 31);
    await store.removeSuppression(projectId, first.hash, undefined, T0 + 40);
    const { changes, next, last } = await store.listChanges(projectId, { after: 0, limit: 10 });
    expect(changes).toEqual([
      { seq: 1, at: T0, kind: 'suppression.added', record: first },
      // Replaced after it expired: the expiry rule's change (core ruleActors).
      { seq: 2, at: T0 + 20, actor: 'rule:expiry', kind: 'suppression.expired', record: first },
      { seq: 3, at: T0 + 20, kind: 'suppression.added', record: second },
      { seq: 4, at: T0 + 30, kind: 'suppression.upgraded', record: { ...second, reason: 'complaint' }, previous: second },
      { seq: 5, at: T0 + 40, kind: 'suppression.removed', record: { ...second, reason: 'complaint' } },
    ]);
    expect([next, last]).toEqual([5, 5]);
    expect(await redis().xlen(`${tag}changes`)).toBe(5);
    expect((await redis().xrange(`${tag}changes`, '-', '+')).map(([id]) => id)).toEqual(['1-0', '2-0', '3-0', '4-0', '5-0']);
    expect(await redis().hget(`${tag}feed`, 'seq')).toBe('5');
  });

  test.each(servers)('%s: status changes, allowlist, streams and endpoints decode as the store wrote them', async (_, redis) => {
    const { projectId, store } = fresh(redis());
    const sent = event(1, 'sent', T0, 'welcome');
    const delivered = event(1, 'delivered', T0 + 1);
    const opened = { ...event(1, 'delivered', T0 + 2), key: `postmark:${randomUUID()}` };
    await store.applyEvents(projectId, [sent, delivered, opened], { now: T0 + 5 });
    await store.addAllowlistEntry(projectId, { key: '@example.org', entry: '@example.org', createdAt: T0 + 6 });
    await store.removeAllowlistEntry(projectId, '@example.org', T0 + 7);
    await store.pauseStream(projectId, 'marketing', T0 + 8);
    await store.resumeStream(projectId, 'marketing', T0 + 9);
    await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 1000);
    const progress = {
      cursor: 0,
      failures: 8,
      failingSince: T0,
      nextAttemptAt: 0,
      pausedAt: T0 + 10,
      lastError: 'HTTP 503',
      lastSuccessAt: null,
    };
    expect(await store.saveOutbound(projectId, 'crm', 'a', progress, T0 + 1000)).toBe(true);
    await store.resumeOutbound(projectId, 'crm', T0 + 11);
    const message = { ...sent.message!, facts: Fact.sent | Fact.delivered, lastEventAt: T0 + 1 };
    const { changes } = await store.listChanges(projectId, { after: 0, limit: 20 });
    expect(changes).toEqual([
      {
        seq: 1,
        at: T0 + 5,
        kind: 'message.status_changed',
        message: sent.message,
        from: null,
        to: 'sent',
        event: { id: sent.timelineEntry!.id, type: 'sent', occurredAt: T0 },
      },
      {
        seq: 2,
        at: T0 + 5,
        kind: 'message.status_changed',
        message,
        from: 'sent',
        to: 'delivered',
        event: { id: delivered.timelineEntry!.id, type: 'delivered', occurredAt: T0 + 1 },
      },
      { seq: 3, at: T0 + 6, kind: 'allowlist.added', entry: { key: '@example.org', entry: '@example.org', createdAt: T0 + 6 } },
      { seq: 4, at: T0 + 7, kind: 'allowlist.removed', entry: { key: '@example.org', entry: '@example.org', createdAt: T0 + 6 } },
      { seq: 5, at: T0 + 8, kind: 'stream.paused', stream: 'marketing', cause: 'operator' },
      { seq: 6, at: T0 + 9, kind: 'stream.resumed', stream: 'marketing', cause: 'operator' },
      { seq: 7, at: T0 + 10, actor: 'rule:outbound', kind: 'endpoint.paused', endpoint: 'crm', error: 'HTTP 503' },
      { seq: 8, at: T0 + 11, kind: 'endpoint.resumed', endpoint: 'crm' },
    ]);
    // Filtered: only the kinds asked, and next past what was looked at.
    expect(await store.listChanges(projectId, { after: 0, limit: 20, kinds: ['stream.paused', 'endpoint.resumed'] })).toEqual({
      changes: [changes[4], changes[7]],
      next: 8,
      last: 8,
    });
    expect(await store.listChanges(projectId, { after: 0, limit: 1, kinds: ['stream.paused', 'endpoint.resumed'] })).toEqual({
      changes: [changes[4]],
      next: 5,
      last: 8,
    });
  });

  test.each(servers)('%s: maxLength trims exactly, and a cursor before what is kept is refused', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis(), { maxLength: 3 });
    for (let i = 0; i < 5; i++) await store.addSuppression(projectId, record(i, T0 + i), T0 + i);
    // Five in one script: trimmed once, at its end, to exactly 3.
    await store.mergeSuppressions(
      projectId,
      Array.from({ length: 5 }, (_, i) => record(10 + i, T0)),
      T0,
    );
    expect(await redis().xlen(`${tag}changes`)).toBe(3);
    expect(await redis().hmget(`${tag}feed`, 'seq', 'trimmed')).toEqual(['10', '7']);
    const error = await store.listChanges(projectId, { after: 6, limit: 10 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MailwardenError);
    expect((error as MailwardenError).code).toBe('change_cursor_expired');
    // Even asking for nothing: the cursor is checked first.
    await expect(store.listChanges(projectId, { after: 6, limit: 0 })).rejects.toThrow(MailwardenError);
    expect(await store.listChanges(projectId, { after: 7, limit: 0 })).toEqual({ changes: [], next: 7, last: 10 });
    expect((await store.listChanges(projectId, { after: 7, limit: 10 })).changes.map((change) => change.seq)).toEqual([8, 9, 10]);
  });

  test.each(servers)(
    '%s: purgeExpired deletes changes older than maxAgeMs from the front, and expired suppressions append',
    async (_, redis) => {
      const { tag, projectId, store } = fresh(redis(), { maxAgeMs: 120 });
      await store.addSuppression(projectId, record(1, T0), T0);
      await store.addSuppression(projectId, record(2, T0, { expiresAt: T0 + 150 }), T0 + 50);
      await store.addSuppression(projectId, record(3, T0), T0 + 200);
      // At T0 + 160: the first is older than 120 ms (T0 < T0 + 40), the second not; the expired one goes.
      await store.purgeExpired(T0 + 160);
      expect(await redis().hget(`${tag}feed`, 'trimmed')).toBe('1');
      const { changes } = await store.listChanges(projectId, { after: 1, limit: 10 });
      expect(changes.map((change) => [change.seq, change.kind, change.at])).toEqual([
        [2, 'suppression.added', T0 + 50],
        [3, 'suppression.added', T0 + 200],
        [4, 'suppression.expired', T0 + 160],
      ]);
    },
  );

  test('a malformed event anywhere in a batch fails it before anything, feed included, is written', async () => {
    const { tag, projectId, store } = fresh(client);
    const events = Array.from({ length: EVENTS_PER_SCRIPT + 1 }, (_, i) => event(i, 'sent', T0));
    events[EVENTS_PER_SCRIPT] = { ...events[EVENTS_PER_SCRIPT]!, timelineEntry: { ...events[0]!.timelineEntry!, id: 'not an id' } };
    await expect(store.applyEvents(projectId, events, { now: T0 })).rejects.toThrow(TypeError);
    expect(await client.exists(`${tag}feed`, `${tag}changes`)).toBe(0);
    expect(await client.zcard(`${tag}mo`)).toBe(0);
  });
});

describe('alert windows', () => {
  test.each(servers)('%s: a crossing up pauses streams, one down resumes none; the window is a HASH', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis());
    const alerts = rule({ pause: ['marketing'], trackingIds: true });
    // 4 messages, 1 of them bounced: 25 % ≥ 25 % with 4 messages → up.
    await store.applyEvents(
      projectId,
      [0, 1, 2, 3].map((i) => event(i, 'sent', T0 + i, 'welcome')),
      { now: T0, alerts },
    );
    await store.applyEvents(projectId, [event(0, 'bounced', T0 + 10)], { now: T0 + 10, alerts });
    // A fifth message: 1 of 5 = 20 %, not below 20 % → still up; a sixth: 1 of 6 → down.
    await store.applyEvents(projectId, [event(4, 'sent', T0 + 20, 'welcome')], { now: T0 + 20, alerts });
    await store.applyEvents(projectId, [event(5, 'sent', T0 + 30, 'welcome')], { now: T0 + 30, alerts });
    const { changes } = await store.listChanges(projectId, { after: 0, limit: 50, kinds: ['alert.bounce_rate', 'stream.paused'] });
    // Crossings and the streams they pause are the alert rule's (core ruleActors).
    expect(changes.map((change) => change.actor)).toEqual(changes.map(() => 'rule:alerts'));
    expect(changes.map(({ seq: _seq, actor: _actor, ...change }) => change)).toEqual([
      { at: T0 + 10, kind: 'alert.bounce_rate', trackingId: null, firing: true, messages: 4, count: 1, thresholdPpm: 250_000 },
      { at: T0 + 10, kind: 'alert.bounce_rate', trackingId: 'welcome', firing: true, messages: 4, count: 1, thresholdPpm: 250_000 },
      { at: T0 + 10, kind: 'stream.paused', stream: 'marketing', cause: 'alert.bounce_rate' },
      { at: T0 + 30, kind: 'alert.bounce_rate', trackingId: null, firing: false, messages: 6, count: 1, thresholdPpm: 200_000 },
      { at: T0 + 30, kind: 'alert.bounce_rate', trackingId: 'welcome', firing: false, messages: 6, count: 1, thresholdPpm: 200_000 },
    ]);
    expect(await store.listPausedStreams(projectId)).toEqual([{ stream: 'marketing', pausedAt: T0 + 10, cause: 'alert.bounce_rate' }]);
    expect(await store.getAlertWindows(projectId, [null, 'welcome', 'other'])).toEqual([
      { trackingId: null, messages: 6, bounced: 1, complained: 0, bounceFiring: false, complaintFiring: false },
      { trackingId: 'welcome', messages: 6, bounced: 1, complained: 0, bounceFiring: false, complaintFiring: false },
      undefined,
    ]);
    expect(await redis().hmget(`${tag}aw`, 'n', 'b', 'c', 'i')).toEqual(['6', '1', '0', '6']);
  });

  test.each(servers)('%s: the oldest message leaves a full window with its counts', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis(), null);
    const alerts = rule({ window: 3, minMessages: 1 });
    await store.applyEvents(projectId, [event(0, 'bounced', T0), event(1, 'sent', T0), event(2, 'sent', T0)], { now: T0, alerts });
    expect((await store.getAlertWindows(projectId, [null]))[0]).toMatchObject({ messages: 3, bounced: 1, bounceFiring: true });
    await store.applyEvents(projectId, [event(3, 'sent', T0)], { now: T0, alerts });
    expect((await store.getAlertWindows(projectId, [null]))[0]).toMatchObject({ messages: 3, bounced: 0, bounceFiring: false });
    // Slots 2 to 4 are left, and no key of the message that left.
    expect((await redis().hkeys(`${tag}aw`)).filter((field) => /^[sk]/.test(field)).length).toBe(6);
    // Without alerts, no window is read or written.
    await store.applyEvents(projectId, [event(9, 'bounced', T0)], { now: T0 });
    expect(await redis().hget(`${tag}aw`, 'i')).toBe('4');
  });

  // A script reads a window once and writes it once at its end (docs/storage.md): messages that enter
  // and leave within one batch, a mark of one entered in it, and a shrunk rule leave the same HASH.
  test.each(servers)('%s: a window moved many times in one script is stored as event by event', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis(), null);
    const events = [event(0, 'bounced', T0), event(1, 'complained', T0), ...[2, 3, 4, 5].map((i) => event(i, 'sent', T0))];
    await store.applyEvents(
      projectId,
      [...events, { ...event(5, 'complained', T0 + 1), message: { ...events[5]!.message!, facts: Fact.complained } }],
      {
        now: T0,
        alerts: rule({ window: 3, minMessages: 1 }),
      },
    );
    const keyOf = (i: number) => events[i]?.message?.key ?? messageKey('postmark', `message-${i}`, `user-${i}@example.com`);
    expect(await redis().hgetall(`${tag}aw`)).toEqual({
      n: '3',
      b: '0',
      c: '1',
      i: '6',
      s4: `0${keyOf(3)}`,
      s5: `0${keyOf(4)}`,
      s6: `2${keyOf(5)}`,
      [`k${keyOf(3)}`]: '4',
      [`k${keyOf(4)}`]: '5',
      [`k${keyOf(5)}`]: '6',
    });
    // A rule shrunk to one message pushes out every older one, its counts with it.
    await store.applyEvents(projectId, [event(6, 'sent', T0)], { now: T0, alerts: rule({ window: 1, minMessages: 1 }) });
    expect(await redis().hgetall(`${tag}aw`)).toEqual({ n: '1', b: '0', c: '0', i: '7', s7: `0${keyOf(6)}`, [`k${keyOf(6)}`]: '7' });
  });
});

describe('Redis Cluster slots', () => {
  test("every key a project's writes make, feed, windows, paused streams and endpoints included, is in its slot", async () => {
    const { keyPrefix, tag, projectId, store } = fresh(cluster);
    const alerts = rule({ window: 2, minMessages: 1, trackingIds: true, pause: ['marketing'] });
    await store.applyEvents(projectId, [event(0, 'bounced', T0, 'welcome'), event(1, 'sent', T0, 'welcome')], { now: T0, alerts });
    await store.addSuppression(projectId, record(1, T0, { expiresAt: T0 + 1 }), T0);
    await store.pauseStream(projectId, 'news', T0);
    await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 10);
    await store.purgeExpired(T0 + 2);
    const keys = (await Promise.all(cluster.nodes('master').map((node) => node.keys(`${keyPrefix}*`)))).flat();
    const outside = keys.filter((key) => !key.startsWith(tag)).sort();
    expect(outside).toEqual([`${keyPrefix}expiring-projects`, `${keyPrefix}feed-projects`]);
    const inside = keys.filter((key) => key.startsWith(tag));
    for (const suffix of ['feed', 'changes', 'aw', 'aw:welcome', 'paused', 'ob:crm']) expect(inside).toContain(`${tag}${suffix}`);
    const slots = new Set(await Promise.all(inside.map((key) => cluster.cluster('KEYSLOT', key))));
    expect(slots.size).toBe(1);
  });
});

describe('outbound state', () => {
  test.each(servers)('%s: one lease at a time, a new endpoint starts at the latest seq, saves need the lease', async (_, redis) => {
    const { tag, projectId, store } = fresh(redis());
    await store.addSuppression(projectId, record(1, T0), T0);
    const state = await store.leaseOutbound(projectId, 'crm', 'a', T0, T0 + 100);
    expect(state).toEqual({
      endpoint: 'crm',
      cursor: 1,
      failures: 0,
      failingSince: null,
      nextAttemptAt: 0,
      pausedAt: null,
      lastError: null,
      lastSuccessAt: null,
    });
    expect(await store.leaseOutbound(projectId, 'crm', 'b', T0 + 99, T0 + 200)).toBeUndefined();
    const progress = {
      cursor: 1,
      failures: 1,
      failingSince: T0,
      nextAttemptAt: T0 + 5000,
      pausedAt: null,
      lastError: 'timeout',
      lastSuccessAt: null,
    };
    expect(await store.saveOutbound(projectId, 'crm', 'b', progress, T0 + 200)).toBe(false);
    expect(await store.saveOutbound(projectId, 'crm', 'a', progress, T0 + 100)).toBe(true);
    // a's lease ended: b takes it, and a can no longer save.
    expect(await store.leaseOutbound(projectId, 'crm', 'b', T0 + 100, T0 + 200)).toEqual({ endpoint: 'crm', ...progress });
    expect(await store.saveOutbound(projectId, 'crm', 'a', { ...progress, failures: 0 }, T0 + 300)).toBe(false);
    expect(await store.getOutbound(projectId, ['crm', 'other'])).toEqual([{ endpoint: 'crm', ...progress }, undefined]);
    // A running endpoint resumes unchanged, appending nothing.
    expect(await store.resumeOutbound(projectId, 'crm', T0 + 150)).toEqual({ endpoint: 'crm', ...progress });
    expect(await store.resumeOutbound(projectId, 'other', T0 + 150)).toBeUndefined();
    expect(await redis().hget(`${tag}feed`, 'seq')).toBe('1');
    expect(await redis().hmget(`${tag}ob:crm`, 'o', 'u')).toEqual(['b', String(T0 + 200)]);
  });
});
