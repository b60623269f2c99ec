// The memory store's erasure, actors, key sync and rate counts, by example, and its dump: what the
// conformance suite cannot see (memory-store.conformance.test.ts runs the contract). docs/decisions.md,
// "Memory store: erasure and actors (issue 27)".
import { createHash } from 'node:crypto';
import {
  erasedEmail,
  messageKey,
  timelineEntryId,
  type AddressErasure,
  type Change,
  type StoredEvent,
  type StoredSoftBounceRule,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { createMemoryStore, type MemoryStore } from '../src/memory-store/memory-store.js';
import { dumpMemoryStore } from '../src/memory-store/dump.js';
import { describe, expect, test } from 'vitest';

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const P = 'acme';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const rule: StoredSoftBounceRule = {
  bounces: 2,
  windowMs: DAY,
  days: 1,
  resetOnDelivery: false,
  expiresAfterMs: null,
  keepMs: 2 * DAY,
  packed: '2,1,0',
};

/** A soft bounce of message `id` to `email`, counted by the rule, its diagnostic quoting the address. */
function softBounce(email: string, id: string, at: number, eventKey = `e-${id}-${sha(email).slice(0, 8)}`): StoredEvent {
  const key = `sparkpost:${eventKey}`;
  const eventId = timelineEntryId(key);
  const message = messageKey('sparkpost', id, email);
  const cause = { provider: 'sparkpost' as const, messageId: id, eventId, diagnostic: `452 mailbox ${email} full` };
  return {
    key,
    message: {
      key: message,
      provider: 'sparkpost',
      messageId: id,
      recipient: email,
      trackingId: 'spring',
      stream: null,
      facts: 0,
      firstEventAt: at,
      lastEventAt: at,
    },
    trackingIdSearchKey: 'spring',
    suppression: null,
    timelineEntry: { id: eventId, eventKey, type: 'bounced', provider: 'sparkpost', occurredAt: at, bounceClass: 'soft' },
    ruleInput: {
      kind: 'soft_bounce',
      hash: sha(email),
      email,
      at,
      message,
      cause,
      packed: `${at}`,
      causeJson: JSON.stringify(['sparkpost', id, cause.diagnostic]),
    },
    actor: 'webhook:sparkpost:bounced',
  };
}

/** What the service hands `eraseAddress` for `email` (as given: `given`). */
function erasure(given: string, now: number, actor?: string): AddressErasure {
  const email = given.trim().toLowerCase();
  const hash = sha(email);
  const forms = [...new Set([given, given.trim(), email, JSON.stringify(given).slice(1, -1)])].filter((form) => form !== '');
  return {
    hash,
    email,
    forms,
    suppression: { hash, email: erasedEmail(hash), reason: 'manual', createdAt: now, provenance: { source: 'api', at: now } },
    now,
    ...(actor !== undefined && { actor }),
  };
}

const suppression = (email: string, createdAt: number, overrides: Partial<SuppressionRecord> = {}): SuppressionRecord => ({
  hash: sha(email),
  email,
  reason: 'manual',
  createdAt,
  provenance: { source: 'api', at: createdAt },
  ...overrides,
});

const all = async (store: MemoryStore, projectId = P): Promise<Change[]> =>
  (await store.listChanges(projectId, { after: 0, limit: 1000 })).changes;

/** Fills every structure the store has with `email` (and with marker texts where an address never goes). */
async function fill(store: MemoryStore, email: string): Promise<void> {
  // Messages, timelines, tracking-ID rows, stats, dedup keys, soft-bounce history, the rule's suppression.
  await store.applyEvents(P, [softBounce(email, 'm1', T0), softBounce(email, 'm2', T0 + 1000, `e-m2-${email}`)], {
    now: T0 + 1000,
    softBounces: rule,
    alerts: {
      window: 10,
      minMessages: 1,
      bounce: { firePpm: 1, resolvePpm: 1 },
      complaint: { firePpm: 1, resolvePpm: 1 },
      trackingIds: true,
      pause: [],
    },
  });
  // A third bounce keeps a history (after the window's suppression, nothing more is kept: another message).
  await store.applyEvents(P, [softBounce(email, 'm3', T0 + 2000)], { now: T0 + 2000, softBounces: rule });
  // A stream's list with an expiry, an allowlist entry, an event key that embeds the address.
  await store.addSuppression(P, suppression(email, T0, { stream: 'news', expiresAt: T0 + 10 * DAY }), T0, 'key:ops');
  await store.addAllowlistEntry(P, { key: sha(email), entry: email, createdAt: T0 }, 'key:ops');
  await store.applyEvents(P, [
    { key: `mailgun:${JSON.stringify(email).slice(1, -1)}:x`, message: null, trackingIdSearchKey: null, suppression: null },
  ]);
  // The rest: tokens, rate counts, keys, outbound, markers only.
  await store.claimWebhookToken(P, 'marker-token', 'marker-digest', T0 + DAY);
  await store.pauseStream(P, 'marker-paused-stream', T0, 'key:ops');
  await store.hitRateLimits(['marker-bucket'], 60_000, T0);
  await store.syncApiKeys(P, [{ name: 'marker-key', scopes: ['read'], version: 'marker-version' }], T0, 'config');
  await store.leaseOutbound(P, 'marker-endpoint', 'marker-owner', T0, T0 + 1);
  await store.saveOutbound(
    P,
    'marker-endpoint',
    'marker-owner',
    {
      cursor: 0,
      failures: 1,
      failingSince: T0,
      nextAttemptAt: 0,
      pausedAt: T0,
      lastError: 'marker-error',
      lastSuccessAt: null,
    },
    T0 + 1,
  );
}

describe('memory store dump', () => {
  test('covers every structure: each filled one shows in it', async () => {
    const store = createMemoryStore({ changes: {}, retention: { messagesMs: 30 * DAY } });
    const email = 'marker-address@example.com';
    await fill(store, email);
    const dump = await dumpMemoryStore(store);
    for (const marker of [
      email,
      'e-m2-marker-address', // a dedup key and a timeline's event key
      '452 mailbox marker-address', // diagnostics: provenance, soft-bounce history
      'spring', // tracking-ID rows
      'marker-paused-stream',
      'marker-token',
      'marker-digest',
      'marker-bucket',
      'marker-key',
      'marker-version',
      'marker-endpoint',
      'marker-error',
      'key:ops', // actors in the feed
    ]) {
      expect(dump, marker).toContain(marker);
    }
    await expect(dumpMemoryStore({})).rejects.toThrow(TypeError);
  });
});

describe('memory store erasure', () => {
  test('forgets the address everywhere; its suppressions stay by hash; others are untouched', async () => {
    const store = createMemoryStore({ changes: {}, retention: { messagesMs: 30 * DAY } });
    const given = ' Gone.Person@Example.com';
    const email = 'gone.person@example.com';
    const other = 'kept.person@example.com';
    await fill(store, other);
    const otherBefore = await dumpMemoryStore(store);
    await fill(store, email);
    const hash = sha(email);
    const result = await store.eraseAddress(P, erasure(given, T0 + 3000, 'key:admin'));

    const dump = await dumpMemoryStore(store);
    for (const form of [given, given.trim(), email, 'gone.person', 'Gone.Person']) expect(dump).not.toContain(form);
    // The other address's traces are all there.
    expect(dump).toContain(other);
    expect(dump).toContain(`e-m2-${other}`);
    expect(otherBefore.length).toBeGreaterThan(0);

    const wide = { hash, email: erasedEmail(hash), reason: 'hard_bounce' as const, createdAt: T0 + 1000 };
    expect(result.messages).toBe(3);
    expect(result.changes).toBeGreaterThan(0);
    expect(result.records).toMatchObject([wide, { hash, email: erasedEmail(hash), stream: 'news', expiresAt: T0 + 10 * DAY }]);
    expect(result.records[0]!.expiresAt).toBeUndefined();
    expect(result.records[0]!.provenance!.event!.diagnostic).toBeNull();
    expect(result.records[0]!.provenance!.rule!.events.map((event) => event.diagnostic)).toEqual([null, null]);
    expect(await store.getSuppression(P, hash)).toEqual(result.records[0]);
    expect(await store.getSuppressions(P, [hash, hash], 'news', T0 + 3000)).toEqual([result.records[0], result.records[0]]);
    expect(await store.findAllowlisted(P, [{ hash, email }])).toEqual([false]);
    expect(await store.listMessages(P, { recipient: email, limit: 10 })).toEqual([]);
    // Its dedup keys went: the same events are new data again.
    expect(await store.applyEvents(P, [softBounce(email, 'm1', T0)])).toEqual(['applied']);

    // The feed: only the erasure names the hash; the other address's changes stay.
    const changes = await all(store);
    const about = changes.filter((change) => JSON.stringify(change).includes(hash));
    expect(about.map((change) => change.kind)).toEqual(['address.erased']);
    expect(about[0]).toMatchObject({ actor: 'key:admin', at: T0 + 3000, hash, messages: 3, records: result.records });
    expect(changes.some((change) => JSON.stringify(change).includes(other))).toBe(true);
  });

  test('again: nothing more, another address.erased; an unknown address gets the placeholder, for good', async () => {
    const store = createMemoryStore({ changes: {} });
    const email = 'nobody@example.com';
    const first = await store.eraseAddress(P, erasure(email, T0));
    const hash = sha(email);
    expect(first).toEqual({
      records: [{ hash, email: erasedEmail(hash), reason: 'manual', createdAt: T0, provenance: { source: 'api', at: T0 } }],
      messages: 0,
      changes: 0,
    });
    const second = await store.eraseAddress(P, erasure(email, T0 + 5));
    expect(second).toEqual(first);
    const changes = await all(store);
    expect(changes.map(({ seq, kind, at }) => ({ seq, kind, at }))).toEqual([
      { seq: 1, kind: 'address.erased', at: T0 },
      { seq: 2, kind: 'address.erased', at: T0 + 5 },
    ]);
    // No actor given: no `actor` key.
    expect(changes.every((change) => !('actor' in change))).toBe(true);
  });

  test('an expired project-wide entry is replaced by the placeholder, without a change of its own', async () => {
    const store = createMemoryStore({ changes: {} });
    const email = 'late@example.com';
    await store.addSuppression(P, suppression(email, T0, { expiresAt: T0 + 10 }), T0);
    const { records, changes } = await store.eraseAddress(P, erasure(email, T0 + 20));
    expect(records).toEqual([erasure(email, T0 + 20).suppression]);
    expect(changes).toBe(1);
    expect((await all(store)).map((change) => change.kind)).toEqual(['address.erased']);
  });

  test('without a feed: erases all the same', async () => {
    const store = createMemoryStore();
    const email = 'quiet@example.com';
    await fill(store, email);
    const result = await store.eraseAddress(P, erasure(email, T0 + 3000));
    expect(result.changes).toBe(0);
    expect(await dumpMemoryStore(store)).not.toContain(email);
  });

  test('a bad hash changes nothing', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addSuppression(P, suppression('a@example.com', T0), T0);
    await expect(store.eraseAddress(P, { ...erasure('a@example.com', T0), hash: 'NOPE' })).rejects.toThrow(TypeError);
    expect(await all(store)).toHaveLength(1);
  });
});

describe('memory store feed with erased changes', () => {
  test('pages step over the holes; next moves past them; retention drops them with the rest', async () => {
    const store = createMemoryStore({ changes: { maxLength: 3 } });
    const gone = 'gone@example.com';
    await store.addSuppression(P, suppression('a@example.com', T0), T0 + 1, 'key:a');
    await store.addSuppression(P, suppression(gone, T0), T0 + 2);
    await store.removeSuppression(P, sha(gone), undefined, T0 + 3);
    await store.eraseAddress(P, erasure(gone, T0 + 4));
    // 2 and 3 erased: holes a page steps over, its cursor moving past them.
    const page = await store.listChanges(P, { after: 1, limit: 1 });
    expect(page.changes.map((change) => change.seq)).toEqual([4]);
    expect(page).toMatchObject({ next: 4, last: 4 });
    expect(store.retained().changes).toBe(2);
    const seqs = async (after: number) => (await store.listChanges(P, { after, limit: 5 })).changes.map((change) => change.seq);
    expect(await seqs(0)).toEqual([1, 4]);
    // Past maxLength (holes do not count): the oldest change goes, and a cursor before it missed it.
    await store.addSuppression(P, suppression('b@example.com', T0), T0 + 5);
    await store.addSuppression(P, suppression('c@example.com', T0), T0 + 6);
    await expect(store.listChanges(P, { after: 0, limit: 5 })).rejects.toMatchObject({ code: 'change_cursor_expired' });
    expect(await seqs(1)).toEqual([4, 5, 6]);
    // A cursor inside the holes missed nothing; the next drop takes the holes with change 4.
    expect(await seqs(2)).toEqual([4, 5, 6]);
    await store.addSuppression(P, suppression('d@example.com', T0), T0 + 7);
    await expect(store.listChanges(P, { after: 3, limit: 5 })).rejects.toMatchObject({ code: 'change_cursor_expired' });
    expect(await seqs(4)).toEqual([5, 6, 7]);
    expect(store.retained().changes).toBe(3);
  });

  test('filters: actors (whole segments) and hash, AND-combined with kinds', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addSuppression(P, suppression('a@example.com', T0), T0, 'key:ops');
    await store.addSuppression(P, suppression('b@example.com', T0), T0, 'key:opsx');
    await store.removeSuppression(P, sha('a@example.com'), undefined, T0 + 1, 'webhook:ses:complained');
    await store.addAllowlistEntry(P, { key: sha('a@example.com'), entry: 'a@example.com', createdAt: T0 });
    const seqs = async (query: object) =>
      (await store.listChanges(P, { after: 0, limit: 10, ...query })).changes.map((change) => change.seq);
    expect(await seqs({ actors: ['key:ops'] })).toEqual([1]);
    expect(await seqs({ actors: ['key'] })).toEqual([1, 2]);
    expect(await seqs({ actors: ['webhook:ses', 'key:opsx'] })).toEqual([2, 3]);
    expect(await seqs({ actors: [] })).toEqual([1, 2, 3, 4]);
    expect(await seqs({ hash: sha('a@example.com') })).toEqual([1, 3, 4]);
    expect(await seqs({ hash: sha('a@example.com'), kinds: ['suppression.removed'] })).toEqual([3]);
    expect(await seqs({ hash: sha('a@example.com'), actors: ['key'] })).toEqual([1]);
    // A filtered page that finds nothing moves its cursor past what it looked at.
    expect(await store.listChanges(P, { after: 0, limit: 10, actors: ['config'] })).toEqual({ changes: [], next: 4, last: 4 });
  });
});

describe('memory store key sync', () => {
  test('diffs in name order; equal lists append nothing; without a feed the list is kept, changes have seq 0', async () => {
    for (const changes of [{}, undefined]) {
      const store = createMemoryStore(changes === undefined ? {} : { changes });
      const seq = (n: number) => (changes === undefined ? 0 : n);
      const keys = [
        { name: 'b', scopes: ['check'], version: 'v1' },
        { name: 'a', scopes: ['read', 'write'], version: 'v1' },
      ];
      expect(await store.syncApiKeys(P, keys, T0, 'config')).toEqual([
        { seq: seq(1), kind: 'key.added', at: T0, actor: 'config', key: { name: 'a', scopes: ['read', 'write'] } },
        { seq: seq(2), kind: 'key.added', at: T0, actor: 'config', key: { name: 'b', scopes: ['check'] } },
      ]);
      expect(await store.syncApiKeys(P, [...keys].reverse(), T0 + 1, 'config')).toEqual([]);
      expect(
        await store.syncApiKeys(
          P,
          [
            { name: 'b', scopes: ['check'], version: 'v2' },
            { name: 'c', scopes: ['admin'], version: 'v1' },
          ],
          T0 + 2,
          'config',
        ),
      ).toEqual([
        { seq: seq(3), kind: 'key.removed', at: T0 + 2, actor: 'config', key: { name: 'a', scopes: ['read', 'write'] } },
        {
          seq: seq(4),
          kind: 'key.updated',
          at: T0 + 2,
          actor: 'config',
          key: { name: 'b', scopes: ['check'] },
          previous: { name: 'b', scopes: ['check'] },
        },
        { seq: seq(5), kind: 'key.added', at: T0 + 2, actor: 'config', key: { name: 'c', scopes: ['admin'] } },
      ]);
      // Never the version in the feed.
      expect(JSON.stringify(await all(store))).not.toContain('v2');
    }
  });
});

describe('memory store rate counts', () => {
  test('counts per bucket and window; a new window starts at 1; ended windows are dropped on the way', async () => {
    const store = createMemoryStore();
    expect(await store.hitRateLimits(['client:1', 'key:a'], 1000, T0)).toEqual([1, 1]);
    expect(await store.hitRateLimits(['client:1', 'client:1'], 1000, T0 + 999)).toEqual([2, 3]);
    expect(await store.hitRateLimits(['client:1'], 1000, T0 + 1000)).toEqual([1]);
    // Another window length is another count.
    expect(await store.hitRateLimits(['client:1'], 60_000, T0 + 1000)).toEqual([1]);
    for (let i = 0; i < 200; i++) await store.hitRateLimits([`client:${i}`], 1000, T0 + 2000 + i * 1000);
    // Each call drops ended windows: what is left is about the live ones, not 200.
    const held = (await dumpMemoryStore(store)).match(/client:\d+\\u0000/g) ?? [];
    expect(held.length).toBeLessThan(10);
    await expect(store.hitRateLimits(['x'], 0, T0)).rejects.toThrow(RangeError);
  });
});
