// The memory store's change feed, alert windows, paused streams and outbound leases, by example. The
// contract itself is the conformance suite's (memory-store.conformance.test.ts); these pin what the
// memory store does while it is built, and its own limits (retention by length on append, copies).
import { createHash } from 'node:crypto';
import {
  Fact,
  messageKey,
  timelineEntryId,
  type Change,
  type MessageStatus,
  type StoredAlertRule,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { isMailwardenError } from '../src/errors.js';
// From its module, not the package's index: these tests need the store alone.
import { createMemoryStore } from '../src/memory-store/memory-store.js';
import { describe, expect, test } from 'vitest';

const T0 = Date.UTC(2026, 0, 1);
const P = 'acme';
const emailOf = (i: number) => `user${i}@example.com`;
const hashOf = (i: number) => createHash('sha256').update(emailOf(i)).digest('hex');

const suppression = (i: number, createdAt: number, overrides: Partial<SuppressionRecord> = {}): SuppressionRecord => ({
  hash: hashOf(i),
  email: emailOf(i),
  reason: 'manual',
  createdAt,
  provenance: { source: 'api', at: createdAt },
  ...overrides,
});

const typeOf = { sent: 'sent', delivered: 'delivered', hard: 'bounced', complained: 'complained', opened: 'opened' } as const;
const factOf = {
  sent: Fact.sent,
  delivered: Fact.delivered,
  hard: Fact.hard_bounced,
  complained: Fact.complained,
  opened: Fact.opened | Fact.delivered,
};

let eventNumber = 0;
/** One event of message `id` (recipient `id@example.com`), as the service hands it to a store. */
function event(id: string, what: keyof typeof typeOf, at: number, trackingId: string | null = null): StoredEvent {
  const key = `sparkpost:e${++eventNumber}`;
  const recipient = `${id}@example.com`;
  return {
    key,
    message: {
      key: messageKey('sparkpost', id, recipient),
      provider: 'sparkpost',
      messageId: id,
      recipient,
      trackingId,
      stream: null,
      facts: factOf[what],
      firstEventAt: at,
      lastEventAt: at,
    },
    trackingIdSearchKey: trackingId,
    suppression: null,
    timelineEntry: {
      id: timelineEntryId(key),
      eventKey: key,
      type: typeOf[what],
      provider: 'sparkpost',
      occurredAt: at,
    },
  };
}

const all = async (store: ReturnType<typeof createMemoryStore>, projectId = P): Promise<Change[]> =>
  (await store.listChanges(projectId, { after: 0, limit: 1000 })).changes;
const kinds = async (store: ReturnType<typeof createMemoryStore>) => (await all(store)).map((change) => change.kind);

describe('memory store change feed', () => {
  test('off: nothing kept, an empty page, no `changes`', async () => {
    const store = createMemoryStore();
    expect(store.changes).toBeUndefined();
    await store.addSuppression(P, suppression(1, T0), T0);
    expect(await store.listChanges(P, { after: 7, limit: 10 })).toEqual({ changes: [], next: 7, last: 0 });
    expect(store.retained().changes).toBe(0);
  });

  test('on: the retention with its defaults', () => {
    expect(createMemoryStore({ changes: {} }).changes).toEqual({ maxAgeMs: 7 * 86_400_000, maxLength: 100_000 });
    expect(() => createMemoryStore({ changes: { maxLength: 0 } })).toThrow(RangeError);
  });

  test('suppressions: added, upgraded, updated only when a field moved, removed; seq per project', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addSuppression(P, suppression(1, T0), T0 + 1);
    // Already there: nothing.
    await store.addSuppression(P, suppression(1, T0 + 5), T0 + 2);
    await store.mergeSuppressions(P, [suppression(1, T0, { reason: 'complaint' })], T0 + 3);
    // The same bytes again: nothing.
    await store.mergeSuppressions(P, [suppression(1, T0, { reason: 'complaint' })], T0 + 4);
    // An earlier time, same reason: updated.
    await store.mergeSuppressions(P, [suppression(1, T0 - 10, { reason: 'complaint' })], T0 + 5);
    await store.removeSuppression(P, hashOf(1), undefined, T0 + 6);
    await store.removeSuppression(P, hashOf(1), undefined, T0 + 7);
    await store.addSuppression('other', suppression(2, T0));

    const changes = await all(store);
    expect(changes.map(({ seq, kind, at }) => ({ seq, kind, at }))).toEqual([
      { seq: 1, kind: 'suppression.added', at: T0 + 1 },
      { seq: 2, kind: 'suppression.upgraded', at: T0 + 3 },
      { seq: 3, kind: 'suppression.updated', at: T0 + 5 },
      { seq: 4, kind: 'suppression.removed', at: T0 + 6 },
    ]);
    expect(changes[0]).toEqual({ seq: 1, kind: 'suppression.added', at: T0 + 1, record: suppression(1, T0) });
    expect(changes[1]).toMatchObject({
      record: { reason: 'complaint', createdAt: T0 },
      previous: suppression(1, T0),
    });
    expect(changes[2]).toMatchObject({ record: { createdAt: T0 - 10 }, previous: { createdAt: T0 } });
    // Without `now`: the record's own time.
    expect(await all(store, 'other')).toEqual([{ seq: 1, kind: 'suppression.added', at: T0, record: suppression(2, T0) }]);
  });

  test('an expired entry a write replaces: expired, then added; the sweep appends expired at its now', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addSuppression(P, suppression(1, T0, { expiresAt: T0 + 10 }), T0);
    await store.mergeSuppressions(P, [suppression(1, T0 + 20)], T0 + 20);
    await store.addSuppression(P, suppression(2, T0, { expiresAt: T0 + 10, stream: 'news' }), T0);
    await store.addSuppression(P, suppression(2, T0 + 30, { stream: 'news' }), T0 + 30);
    await store.addSuppression(P, suppression(3, T0, { expiresAt: T0 + 10 }), T0);
    await store.purgeExpired(T0 + 40);
    expect(await all(store)).toEqual([
      { seq: 1, kind: 'suppression.added', at: T0, record: suppression(1, T0, { expiresAt: T0 + 10 }) },
      { seq: 2, kind: 'suppression.expired', at: T0 + 20, actor: 'rule:expiry', record: suppression(1, T0, { expiresAt: T0 + 10 }) },
      { seq: 3, kind: 'suppression.added', at: T0 + 20, record: suppression(1, T0 + 20) },
      { seq: 4, kind: 'suppression.added', at: T0, record: suppression(2, T0, { expiresAt: T0 + 10, stream: 'news' }) },
      {
        seq: 5,
        kind: 'suppression.expired',
        at: T0 + 30,
        actor: 'rule:expiry',
        record: suppression(2, T0, { expiresAt: T0 + 10, stream: 'news' }),
      },
      { seq: 6, kind: 'suppression.added', at: T0 + 30, record: suppression(2, T0 + 30, { stream: 'news' }) },
      { seq: 7, kind: 'suppression.added', at: T0, record: suppression(3, T0, { expiresAt: T0 + 10 }) },
      { seq: 8, kind: 'suppression.expired', at: T0 + 40, actor: 'rule:expiry', record: suppression(3, T0, { expiresAt: T0 + 10 }) },
    ]);
  });

  test('events: the suppression, then the status change (from null on creation); duplicates and opens append nothing', async () => {
    const store = createMemoryStore({ changes: {} });
    const sent = event('m1', 'sent', T0);
    const bounce = { ...event('m1', 'hard', T0 + 1), suppression: suppression(1, T0 + 1, { reason: 'hard_bounce' }) };
    await store.applyEvents(P, [sent, sent, bounce, event('m1', 'opened', T0 + 2)], { now: T0 + 5 });
    const changes = await all(store);
    expect(changes.map((change) => change.kind)).toEqual(['message.status_changed', 'suppression.added', 'message.status_changed']);
    const statuses = changes.flatMap((change) => (change.kind === 'message.status_changed' ? [[change.from, change.to]] : []));
    expect(statuses).toEqual<[MessageStatus | null, MessageStatus][]>([
      [null, 'sent'],
      ['sent', 'bounced'],
    ]);
    expect(changes[2]).toEqual({
      seq: 3,
      kind: 'message.status_changed',
      at: T0 + 5,
      message: { ...sent.message, facts: Fact.sent | Fact.hard_bounced, lastEventAt: T0 + 1 },
      from: 'sent',
      to: 'bounced',
      event: { id: bounce.timelineEntry!.id, type: 'bounced', occurredAt: T0 + 1 },
    });
  });

  test('allowlist: added when created, removed when something was removed', async () => {
    const store = createMemoryStore({ changes: {} });
    const entry = { key: '@example.com', entry: '@example.com', createdAt: T0 };
    await store.addAllowlistEntry(P, entry);
    await store.addAllowlistEntry(P, { ...entry, createdAt: T0 + 1 });
    await store.removeAllowlistEntry(P, entry.key, T0 + 2);
    await store.removeAllowlistEntry(P, entry.key, T0 + 3);
    expect(await all(store)).toEqual([
      { seq: 1, kind: 'allowlist.added', at: T0, entry },
      { seq: 2, kind: 'allowlist.removed', at: T0 + 2, entry },
    ]);
  });

  test('changes are copies: a later write or a reader never moves one', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.applyEvents(P, [event('m1', 'sent', T0)], { now: T0 });
    const first = await all(store);
    (first[0] as { at: number }).at = 0;
    await store.applyEvents(P, [event('m1', 'hard', T0 + 1)], { now: T0 + 1 });
    const [created] = await all(store);
    expect(created).toMatchObject({ at: T0, message: { facts: Fact.sent } });
  });

  test('retention by length on append, by age in the sweep; a cursor before what is kept expires', async () => {
    const store = createMemoryStore({ changes: { maxLength: 3, maxAgeMs: 100 } });
    for (let i = 1; i <= 5; i++) await store.addSuppression(P, suppression(i, T0 + i), T0 + i * 10);
    await expect(all(store)).rejects.toMatchObject({ code: 'change_cursor_expired', status: 410 });
    const kept = await store.listChanges(P, { after: 2, limit: 10 });
    expect(kept.changes.map((change) => change.seq)).toEqual([3, 4, 5]);
    expect(kept).toMatchObject({ next: 5, last: 5 });
    // Ages 30, 40, 50 at T0: older than 100 at T0 + 145 are those before T0 + 45.
    await store.purgeExpired(T0 + 145);
    const error = await store.listChanges(P, { after: 3, limit: 10 }).catch((caught: unknown) => caught);
    expect(isMailwardenError(error) && error.code).toBe('change_cursor_expired');
    expect((await store.listChanges(P, { after: 4, limit: 10 })).changes.map((change) => change.seq)).toEqual([5]);
    // At or past the latest: an empty page, never an error.
    expect(await store.listChanges(P, { after: 9, limit: 10 })).toEqual({ changes: [], next: 9, last: 5 });
    expect(store.retained().changes).toBe(1);
  });

  test('kinds: matching changes only, with next past what was looked at, at most 1 000 for a small page', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addAllowlistEntry(P, { key: '@a.example', entry: '@a.example', createdAt: T0 });
    for (let i = 0; i < 1_500; i++) await store.pauseStream(P, `s${i}`, T0);
    await store.addAllowlistEntry(P, { key: '@b.example', entry: '@b.example', createdAt: T0 });
    const first = await store.listChanges(P, { after: 0, limit: 5, kinds: ['allowlist.added'] });
    expect(first.changes.map((change) => change.seq)).toEqual([1]);
    expect(first).toMatchObject({ next: 1_000, last: 1_502 });
    const second = await store.listChanges(P, { after: first.next, limit: 5, kinds: ['allowlist.added'] });
    expect(second.changes.map((change) => change.seq)).toEqual([1_502]);
    expect(second.next).toBe(1_502);
    // A full page ends at its last change.
    const page = await store.listChanges(P, { after: 0, limit: 2, kinds: ['stream.paused'] });
    expect(page.changes.map((change) => change.seq)).toEqual([2, 3]);
    expect(page.next).toBe(3);
  });
});

const rule: StoredAlertRule = {
  window: 10,
  minMessages: 4,
  bounce: { firePpm: 200_000, resolvePpm: 160_000 },
  complaint: { firePpm: 1_000_000, resolvePpm: 800_000 },
  trackingIds: true,
  pause: ['news'],
};

describe('memory store alert windows', () => {
  test('a bounce rate crossing up and down: one change each, the stream paused once, resumed by an operator', async () => {
    const store = createMemoryStore({ changes: {} });
    const apply = (events: StoredEvent[], now: number) => store.applyEvents(P, events, { now, alerts: rule });
    // 3 messages, one bounced: 33 % but fewer than 4 messages.
    await apply([event('a', 'sent', T0, 'camp'), event('b', 'sent', T0), event('c', 'hard', T0, 'camp')], T0);
    expect(await store.getAlertWindows(P, [null, 'camp', 'none'])).toEqual([
      { trackingId: null, messages: 3, bounced: 1, complained: 0, bounceFiring: false, complaintFiring: false },
      { trackingId: 'camp', messages: 2, bounced: 1, complained: 0, bounceFiring: false, complaintFiring: false },
      undefined,
    ]);
    // A 4th message: 1 of 4 = 25 % ≥ 20 % in the project's window (camp's has 2 < 4 messages).
    await apply([event('d', 'delivered', T0 + 1)], T0 + 1);
    const up = (await all(store)).filter((change) => !change.kind.startsWith('message.'));
    expect(up).toEqual([
      {
        seq: 5,
        kind: 'alert.bounce_rate',
        at: T0 + 1,
        actor: 'rule:alerts',
        trackingId: null,
        firing: true,
        messages: 4,
        count: 1,
        thresholdPpm: 200_000,
      },
      { seq: 6, kind: 'stream.paused', at: T0 + 1, actor: 'rule:alerts', stream: 'news', cause: 'alert.bounce_rate' },
    ]);
    expect(await store.listPausedStreams(P)).toEqual([{ stream: 'news', pausedAt: T0 + 1, cause: 'alert.bounce_rate' }]);
    // 1 of 6 = 16.7 %: not below 16 %; 1 of 7 = 14.3 % is.
    await apply([event('e', 'sent', T0 + 2), event('f', 'sent', T0 + 2)], T0 + 2);
    expect((await store.getAlertWindows(P, [null]))[0]).toMatchObject({ bounceFiring: true });
    await apply([event('g', 'sent', T0 + 3)], T0 + 3);
    const down = (await all(store)).filter((change) => change.kind.startsWith('alert.'));
    expect(down.at(-1)).toEqual({
      seq: 10,
      kind: 'alert.bounce_rate',
      at: T0 + 3,
      actor: 'rule:alerts',
      trackingId: null,
      firing: false,
      messages: 7,
      count: 1,
      thresholdPpm: 160_000,
    });
    // Going down resumes nothing; an operator does.
    expect(await store.listPausedStreams(P)).toHaveLength(1);
    expect(await store.resumeStream(P, 'news', T0 + 4)).toEqual({ stream: 'news', pausedAt: T0 + 1, cause: 'alert.bounce_rate' });
    expect(await store.resumeStream(P, 'news', T0 + 5)).toBeUndefined();
    expect((await all(store)).at(-1)).toEqual({ seq: 11, kind: 'stream.resumed', at: T0 + 4, stream: 'news', cause: 'alert.bounce_rate' });
  });

  test('the oldest message leaves a full window with its counts; a fact counts once; without the feed windows still move', async () => {
    const store = createMemoryStore();
    const small = { ...rule, window: 3, minMessages: 100 };
    const apply = (events: StoredEvent[]) => store.applyEvents(P, events, { now: T0, alerts: small });
    await apply([event('a', 'hard', T0), event('b', 'sent', T0), event('c', 'sent', T0)]);
    await apply([event('b', 'complained', T0 + 1), event('b', 'complained', T0 + 2)]);
    expect((await store.getAlertWindows(P, [null]))[0]).toMatchObject({ messages: 3, bounced: 1, complained: 1 });
    await apply([event('d', 'sent', T0 + 3)]);
    expect((await store.getAlertWindows(P, [null]))[0]).toMatchObject({ messages: 3, bounced: 0, complained: 1 });
    // Without `alerts`, no window moves.
    await store.applyEvents(P, [event('e', 'hard', T0 + 4)], { now: T0 });
    expect((await store.getAlertWindows(P, [null]))[0]).toMatchObject({ messages: 3, bounced: 0 });
  });
});

describe('memory store paused streams and outbound state', () => {
  test('pause once, list by name', async () => {
    const store = createMemoryStore({ changes: {} });
    expect(await store.pauseStream(P, 'news', T0)).toEqual({ paused: { stream: 'news', pausedAt: T0, cause: 'operator' }, created: true });
    expect(await store.pauseStream(P, 'news', T0 + 1)).toEqual({
      paused: { stream: 'news', pausedAt: T0, cause: 'operator' },
      created: false,
    });
    await store.pauseStream(P, 'alerts', T0 + 2);
    expect((await store.listPausedStreams(P)).map((paused) => paused.stream)).toEqual(['alerts', 'news']);
    expect(await kinds(store)).toEqual(['stream.paused', 'stream.paused']);
  });

  test('a lease: held against others until it ends, then taken over; saves by its holder only', async () => {
    const store = createMemoryStore({ changes: {} });
    await store.addSuppression(P, suppression(1, T0), T0);
    const state = await store.leaseOutbound(P, 'crm', 'one', T0, T0 + 30);
    // A new endpoint starts at the latest change.
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
    expect(await store.leaseOutbound(P, 'crm', 'two', T0 + 29, T0 + 60)).toBeUndefined();
    expect(await store.leaseOutbound(P, 'crm', 'one', T0 + 29, T0 + 60)).toMatchObject({ cursor: 1 });
    const failed = { ...state!, failures: 1, failingSince: T0 + 40, lastError: 'HTTP 503', nextAttemptAt: T0 + 45 };
    const { endpoint: _endpoint, ...progress } = failed;
    expect(await store.saveOutbound(P, 'crm', 'one', progress, T0 + 70)).toBe(true);
    // Taken over once it ended: the old holder's save is refused.
    expect(await store.leaseOutbound(P, 'crm', 'two', T0 + 70, T0 + 100)).toEqual(failed);
    expect(await store.saveOutbound(P, 'crm', 'one', { ...progress, failures: 0 }, T0 + 100)).toBe(false);
    // Paused by its holder: endpoint.paused with the last error; resumed: cleared, cursor kept.
    expect(await store.saveOutbound(P, 'crm', 'two', { ...progress, pausedAt: T0 + 80 }, T0 + 100)).toBe(true);
    expect(await store.saveOutbound(P, 'crm', 'two', { ...progress, pausedAt: T0 + 80 }, T0 + 100)).toBe(true);
    expect(await store.resumeOutbound(P, 'crm', T0 + 90)).toEqual(state);
    expect(await store.resumeOutbound(P, 'crm', T0 + 91)).toEqual(state);
    expect(await store.resumeOutbound(P, 'none', T0 + 91)).toBeUndefined();
    expect(await store.getOutbound(P, ['crm', 'none'])).toEqual([state, undefined]);
    expect((await all(store)).slice(1)).toEqual([
      { seq: 2, kind: 'endpoint.paused', at: T0 + 80, actor: 'rule:outbound', endpoint: 'crm', error: 'HTTP 503' },
      { seq: 3, kind: 'endpoint.resumed', at: T0 + 90, endpoint: 'crm' },
    ]);
  });
});
