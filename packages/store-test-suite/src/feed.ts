import type { DeliveryEventType, Store } from '@mailwarden/core';
import {
  compareCodePoints,
  createEmailHasher,
  Fact,
  messageKey,
  messageStatus,
  timelineEntryId,
  trackingIdSearchKey,
  type AllowlistEntry,
  type Change,
  type ChangeKind,
  type ChangeQuery,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import fc from 'fast-check';
import * as arbitrary from './arbitraries.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { type Address, addresses, HOUR, message, suppression, T0, type MessageIdentity } from './records.js';
import { ruleCalls, storedRule } from './rule-steps.js';

const hashEmail = createEmailHasher();

/** Every kind of each family, as the service expands them. */
const suppressionKinds = ['suppression.added', 'suppression.upgraded', 'suppression.updated', 'suppression.removed', 'suppression.expired'];

/** What each event type says about its message (a hard bounce; a complaint implies delivery). */
const factOf: Partial<Record<DeliveryEventType, number>> = {
  sent: Fact.sent,
  delivered: Fact.delivered,
  bounced: Fact.hard_bounced,
  complained: Fact.complained | Fact.delivered,
  opened: Fact.opened | Fact.delivered,
};

/** A message to `address`, so an event of it may suppress its recipient. */
export function messageTo(address: Address): MessageIdentity {
  const messageId = `m-${address.hash.slice(0, 16)}-${Math.random().toString(36).slice(2)}`;
  return { key: messageKey('postmark', messageId, address.email), provider: 'postmark', messageId, recipient: address.email };
}

/**
 * An event of `identity` at `time`, as the service prepares it: its timeline entry, and for `suppress`
 * (a hard bounce or complaint) the suppression of its recipient.
 */
export function feedEvent(
  identity: MessageIdentity,
  type: DeliveryEventType,
  time: number,
  parts: { trackingId?: string | null; suppress?: 'hard_bounce' | 'complaint'; key?: string } = {},
): StoredEvent {
  const key = parts.key ?? `${identity.provider}:${Math.random().toString(36).slice(2)}-${time}`;
  const trackingId = parts.trackingId ?? null;
  return {
    key,
    message: message(identity, factOf[type] ?? Fact.sent, time, trackingId),
    trackingIdSearchKey: trackingId === null ? null : trackingIdSearchKey(trackingId),
    timelineEntry: { id: timelineEntryId(key), eventKey: key, type, provider: identity.provider, occurredAt: time },
    suppression:
      parts.suppress === undefined
        ? null
        : {
            hash: hashEmail(identity.recipient),
            email: identity.recipient,
            reason: parts.suppress,
            createdAt: time,
            provenance: {
              source: 'webhook',
              at: time,
              event: { provider: identity.provider, messageId: identity.messageId, eventId: timelineEntryId(key), diagnostic: null },
            },
          },
  };
}

/** The whole feed of a project (`after` onwards), read `limit` at a time as a reader would; fails on a page that makes no progress. */
export async function readFeed(store: Store, projectId: string, limit = 3, kinds?: readonly ChangeKind[], after = 0): Promise<Change[]> {
  const changes: Change[] = [];
  for (let count = 0; count < 100_000; count++) {
    const page = await store.listChanges(projectId, { after, limit, ...(kinds === undefined ? {} : { kinds }) });
    changes.push(...page.changes);
    if (page.next >= page.last && page.changes.length < limit) return changes;
    if (page.next <= after) throw new Error(`listChanges after ${after} made no progress: next ${page.next}, last ${page.last}`);
    after = page.next;
  }
  throw new Error('listChanges never caught up');
}

/** The feed read `limit` at a time with filters (`actors`, `hash`, `kinds`), as a reader pages it; fails on a page that makes no progress. */
export async function readFiltered(
  store: Store,
  projectId: string,
  limit: number,
  filters: Omit<ChangeQuery, 'after' | 'limit'>,
): Promise<Change[]> {
  const changes: Change[] = [];
  let after = 0;
  for (let count = 0; count < 100_000; count++) {
    const page = await store.listChanges(projectId, { after, limit, ...filters });
    changes.push(...page.changes);
    if (page.next >= page.last && page.changes.length < limit) return changes;
    if (page.next <= after) throw new Error(`listChanges after ${after} made no progress: next ${page.next}, last ${page.last}`);
    after = page.next;
  }
  throw new Error('listChanges never caught up');
}

/** The project's latest seq (asked after the end, which retention never refuses). */
export async function lastSeq(store: Store, projectId: string): Promise<number> {
  return (await store.listChanges(projectId, { after: Number.MAX_SAFE_INTEGER, limit: 1 })).last;
}

/** Newest first: `createdAt` descending, then `hash` ascending (the listing order). */
const newestFirst = (a: SuppressionRecord, b: SuppressionRecord) => b.createdAt - a.createdAt || compareCodePoints(a.hash, b.hash);

/**
 * The replay law: a project's suppression changes, in order, onto empty lists, give its stored lists,
 * and its allowlist changes its allowlist; each removal or expiry removes what the replay holds.
 */
export async function expectReplayed(
  options: StoreConformanceOptions,
  store: Store,
  projectId: string,
  changes: readonly Change[],
  lists: readonly (string | undefined)[],
): Promise<void> {
  const { expect } = options;
  const replayed = new Map<string, Map<string, SuppressionRecord>>();
  const allowlist = new Map<string, AllowlistEntry>();
  for (const change of changes) {
    if (change.kind === 'allowlist.added') allowlist.set(change.entry.key, change.entry);
    if (change.kind === 'allowlist.removed') expect(allowlist.delete(change.entry.key), `seq ${change.seq}`).toBe(true);
    // An erasure deleted the changes about its hash before it: it sets what blocks the address, and no allowlist entry.
    if (change.kind === 'address.erased') {
      allowlist.delete(change.hash);
      for (const record of change.records) {
        const list = replayed.get(record.stream ?? '') ?? new Map<string, SuppressionRecord>();
        replayed.set(record.stream ?? '', list);
        list.set(record.hash, record);
      }
    }
    if (!('record' in change)) continue;
    const list = replayed.get(change.record.stream ?? '') ?? new Map<string, SuppressionRecord>();
    replayed.set(change.record.stream ?? '', list);
    if (change.kind === 'suppression.removed' || change.kind === 'suppression.expired')
      expect(list.delete(change.record.hash), `seq ${change.seq}: ${change.kind} of what the replay does not hold`).toBe(true);
    else {
      if (change.kind === 'suppression.added') expect(list.has(change.record.hash), `seq ${change.seq}: added twice`).toBe(false);
      else expect(list.get(change.record.hash), `seq ${change.seq}: previous`).toEqual(change.previous);
      list.set(change.record.hash, change.record);
    }
  }
  for (const stream of lists) {
    const stored = await store.listSuppressions(projectId, { limit: 10_000, ...(stream === undefined ? {} : { stream }) });
    expect(stored, `the list of ${stream ?? 'the project'}`).toEqual([...(replayed.get(stream ?? '')?.values() ?? [])].sort(newestFirst));
  }
  expect(await store.listAllowlist(projectId, { limit: 10_000 })).toEqual(
    [...allowlist.values()].sort((a, b) => compareCodePoints(a.entry, b.entry)),
  );
}

/**
 * Whether a store reports a cursor older than its retention: `change_cursor_expired`, a MailwardenError
 * (checked by name and code, so a second copy of core still matches).
 */
export async function expectCursorExpired(options: StoreConformanceOptions, store: Store, projectId: string, after: number): Promise<void> {
  await options.expect(store.listChanges(projectId, { after, limit: 10 })).rejects.toMatchObject({
    name: 'MailwardenError',
    code: 'change_cursor_expired',
  });
}

/** A feed compared as a whole, with each purge's run of `suppression.expired` (in whatever order the store sweeps) sorted by list and hash. */
function canonical(changes: readonly Change[], purges: readonly [number, number][]): Change[] {
  const result = [...changes];
  for (const [from, to] of purges) {
    const start = result.findIndex((change) => change.seq > from);
    if (start === -1) continue;
    const run = result.slice(start, start + (to - from));
    const key = (change: Change) => ('record' in change ? `${change.record.stream ?? ''}/${change.record.hash}` : '');
    run.sort((a, b) => compareCodePoints(key(a), key(b)));
    result.splice(start, run.length, ...run.map((change, index) => ({ ...change, seq: from + 1 + index })));
  }
  return result;
}

/**
 * An event moved `by` milliseconds later: the arbitraries' events lie seconds after T0, and a store with
 * message retention would forget their messages at the rule's clock, days later, which the model keeps.
 */
function later(event: StoredEvent, by: number): StoredEvent {
  const { message, timelineEntry, suppression: own } = event;
  return {
    ...event,
    message: message === null ? null : { ...message, firstEventAt: message.firstEventAt + by, lastEventAt: message.lastEventAt + by },
    ...(timelineEntry === undefined ? {} : { timelineEntry: { ...timelineEntry, occurredAt: timelineEntry.occurredAt + by } }),
    suppression:
      own === null
        ? null
        : {
            ...own,
            createdAt: own.createdAt + by,
            ...(own.provenance === undefined ? {} : { provenance: { ...own.provenance, at: own.provenance.at + by } }),
            ...(own.expiresAt === undefined ? {} : { expiresAt: own.expiresAt + by }),
          },
  };
}

type FeedStep =
  | { kind: 'rule'; step: arbitrary.RuleStep }
  | { kind: 'events'; events: StoredEvent[] }
  | { kind: 'remove'; hashes: string[]; stream: string | undefined };

const feedStep: fc.Arbitrary<FeedStep> = fc.oneof(
  { weight: 4, arbitrary: arbitrary.ruleStep.map((step) => ({ kind: 'rule' as const, step })) },
  {
    weight: 3,
    arbitrary: arbitrary.eventBatch.map((events) => ({
      kind: 'events' as const,
      events: events.map((event) => later(event, arbitrary.RULE_HOURS * HOUR - 10_000)),
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.array(arbitrary.hash, { maxLength: 3 }), arbitrary.suppressionList)
      .map(([hashes, stream]) => ({ kind: 'remove' as const, hashes, stream })),
  },
);

export function describeChangeFeedTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const withoutFeed = storeTest(options);
  // Allowlist entries date from T0 and sweeps run days later: a month's retention keeps every change.
  const lasting = { changes: { maxAgeMs: 30 * 24 * HOUR } };
  const testLasting = storeTest(options, lasting);
  const runs = Math.ceil((options.numRuns ?? 50) / 2);
  const now = T0 + 100 * HOUR;

  describe('the change feed', () => {
    test('each write appends what it changed, in order, once; a write that changes nothing appends nothing', async ({
      store,
      projectId,
    }) => {
      const model = createStoreModel({ changes: {} });
      const [a, b] = addresses(2);
      const identity = messageTo(a);
      const entry = { key: b.hash, entry: b.email, createdAt: now };
      const calls: ((target: Store) => Promise<unknown>)[] = [
        (target) => target.addSuppression(projectId, suppression(a, 'manual', T0), now),
        (target) => target.addSuppression(projectId, suppression(a, 'complaint', T0), now), // there already: nothing
        (target) => target.mergeSuppressions(projectId, [suppression(a, 'hard_bounce', T0 + 5)], now), // upgraded
        (target) => target.mergeSuppressions(projectId, [suppression(a, 'manual', T0 - 5)], now), // updated: earlier
        (target) => target.mergeSuppressions(projectId, [suppression(a, 'manual', T0 + 9)], now), // the same bytes: nothing
        (target) => target.addAllowlistEntry(projectId, entry),
        (target) => target.addAllowlistEntry(projectId, entry), // there already: nothing
        (target) =>
          target.applyEvents(
            projectId,
            [feedEvent(identity, 'sent', T0, { key: 'feed:1' }), feedEvent(identity, 'delivered', T0 + 1, { key: 'feed:2' })],
            { now },
          ),
        (target) => target.applyEvents(projectId, [feedEvent(identity, 'opened', T0 + 2, { key: 'feed:3' })], { now }), // no new status
        (target) => target.applyEvents(projectId, [feedEvent(identity, 'delivered', T0 + 1, { key: 'feed:2' })], { now }), // duplicate
        (target) =>
          target.applyEvents(projectId, [feedEvent(identity, 'complained', T0 + 3, { key: 'feed:4', suppress: 'complaint' })], { now }),
        (target) => target.removeSuppression(projectId, a.hash, undefined, now + 1),
        (target) => target.removeSuppression(projectId, a.hash, undefined, now + 2), // none: nothing
        (target) => target.removeAllowlistEntry(projectId, b.hash, now + 3),
        (target) => target.removeAllowlistEntry(projectId, b.hash, now + 4), // none: nothing
      ];
      for (const call of calls) expect(await call(store)).toStrictEqual(await call(model));
      const changes = await readFeed(store, projectId, 2);
      expect(changes.map((change) => [change.seq, change.kind])).toStrictEqual([
        [1, 'suppression.added'],
        [2, 'suppression.upgraded'],
        [3, 'suppression.updated'],
        [4, 'allowlist.added'],
        [5, 'message.status_changed'],
        [6, 'message.status_changed'],
        [7, 'suppression.upgraded'],
        [8, 'message.status_changed'],
        [9, 'suppression.removed'],
        [10, 'allowlist.removed'],
      ]);
      expect(changes).toEqual(await readFeed(model, projectId));
      expect(changes[4]).toMatchObject({ from: null, to: 'sent', event: { type: 'sent', occurredAt: T0 } });
      expect(changes[7]).toMatchObject({ from: 'delivered', to: 'complained', at: now });
      expect(changes[8]).toMatchObject({ at: now + 1, record: { reason: 'complaint' } });
      expect(await store.listChanges(projectId, { after: 10, limit: 5 })).toStrictEqual({ changes: [], next: 10, last: 10 });
      expect(await store.listChanges(projectId, { after: 3, limit: 1 })).toEqual({ changes: [changes[3]], next: 4, last: 10 });
    });

    test('a write that finds its record expired appends suppression.expired, then suppression.added', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const expiring = { ...suppression(a, 'hard_bounce', T0), expiresAt: T0 + HOUR };
      await store.addSuppression(projectId, expiring, T0);
      await store.mergeSuppressions(projectId, [suppression(a, 'manual', T0 + 2 * HOUR)], T0 + 2 * HOUR);
      expect(await readFeed(store, projectId)).toEqual([
        { seq: 1, kind: 'suppression.added', at: T0, record: expiring },
        { seq: 2, kind: 'suppression.expired', at: T0 + 2 * HOUR, actor: 'rule:expiry', record: expiring },
        { seq: 3, kind: 'suppression.added', at: T0 + 2 * HOUR, record: suppression(a, 'manual', T0 + 2 * HOUR) },
      ]);
    });

    test('the sweep appends suppression.expired at its now for each expired record it deletes', async ({ store, projectId }) => {
      if (store.purgeExpired === undefined) return;
      const [a, b] = addresses(2);
      const expiring = { ...suppression(a, 'hard_bounce', T0), expiresAt: T0 + HOUR };
      const lasting = { ...suppression(b, 'hard_bounce', T0), expiresAt: T0 + 3 * HOUR };
      await store.mergeSuppressions(projectId, [expiring, lasting], T0);
      await store.purgeExpired(T0 + 2 * HOUR);
      expect((await readFeed(store, projectId)).slice(2)).toEqual([
        { seq: 3, kind: 'suppression.expired', at: T0 + 2 * HOUR, actor: 'rule:expiry', record: expiring },
      ]);
    });

    withoutFeed('a store made without a feed appends nothing, and says so', async ({ store, projectId }) => {
      const [a] = addresses(1);
      await store.addSuppression(projectId, suppression(a, 'manual', T0), now);
      await store.applyEvents(projectId, [feedEvent(messageTo(a), 'bounced', T0, { suppress: 'hard_bounce' })], { now });
      await store.addAllowlistEntry(projectId, { key: a.hash, entry: a.email, createdAt: now });
      expect(store.changes).toBeUndefined();
      expect(await store.listChanges(projectId, { after: 0, limit: 10 })).toStrictEqual({ changes: [], next: 0, last: 0 });
      expect(await store.listChanges(projectId, { after: 7, limit: 10 })).toStrictEqual({ changes: [], next: 7, last: 0 });
    });

    // Random steps of every kind (adds, merges, removals, events with the rule and expiry, the allowlist),
    // then a sweep, then the whole feed, read in small pages, equals the model's change for change;
    // replayed, it gives the store's lists and allowlist. One clock for every run and the sweep last: a
    // store with message retention forgets messages by it, which the model keeps.
    testLasting('random writes append exactly the model’s changes, and replaying them gives the store’s lists', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(
          arbitrary.ruleConfig,
          fc.array(feedStep, { minLength: 4, maxLength: 24 }),
          arbitrary.limit,
          fc.boolean(),
          async (config, steps, limit, sweep) => {
            const rule = storedRule(config);
            const writeNow = T0 + arbitrary.RULE_HOURS * HOUR;
            const model = createStoreModel(lasting);
            const projectId = randomProjectId();
            for (const [index, step] of steps.entries()) {
              const calls =
                step.kind === 'rule'
                  ? ruleCalls([step.step], [], rule, writeNow, [index])
                  : step.kind === 'events'
                    ? [
                        {
                          describe: 'events',
                          run: (target: Store, project: string) =>
                            target.applyEvents(project, step.events, { now: writeNow, softBounces: rule }),
                        },
                      ]
                    : [
                        {
                          describe: 'remove',
                          run: (target: Store, project: string) => target.removeSuppressions(project, step.hashes, step.stream, writeNow),
                        },
                      ];
              for (const call of calls)
                expect(await call.run(store, projectId), call.describe).toStrictEqual(await call.run(model, projectId));
            }
            const purges: [number, number][] = [];
            if (sweep && store.purgeExpired !== undefined) {
              const before = await lastSeq(model, projectId);
              // Other projects' records expire too: only this project's feed is compared.
              await model.purgeExpired!(writeNow);
              await store.purgeExpired(writeNow);
              purges.push([before, await lastSeq(model, projectId)]);
            }
            const expected = await readFeed(model, projectId);
            const actual = await readFeed(store, projectId, limit);
            expect(canonical(actual, purges)).toEqual(canonical(expected, purges));
            expect(await lastSeq(store, projectId)).toBe(expected.length);
            await expectReplayed(options, store, projectId, actual, arbitrary.everySuppressionList);
          },
        ),
        { numRuns: runs },
      );
    });

    // Three writers at once and a reader paging while they write: each change is seen once, in seq
    // order, without a gap. No store-neutral way makes a step fail half-way, so atomicity is checked as
    // its consequence: every change has its state in the store and every state its change.
    test('a reader paging during three concurrent writers sees every change once, in order; the feed matches the state', async ({
      store,
      projectId,
    }) => {
      const writer = async (share: number) => {
        const pool = addresses(6);
        for (const [index, address] of pool.entries()) {
          const identity = messageTo(address);
          const time = T0 + share * 1000 + index;
          await store.applyEvents(
            projectId,
            [feedEvent(identity, 'sent', time), feedEvent(identity, 'bounced', time + 1, { suppress: 'hard_bounce' })],
            { now },
          );
          if (index % 2 === 0) await store.removeSuppression(projectId, address.hash, undefined, now);
          if (index % 3 === 0) await store.addAllowlistEntry(projectId, { key: address.hash, entry: address.email, createdAt: now });
        }
      };
      let writing = true;
      const seen: Change[] = [];
      const reader = async () => {
        let after = 0;
        for (;;) {
          const done = !writing;
          const page = await store.listChanges(projectId, { after, limit: 4 });
          seen.push(...page.changes);
          after = page.next;
          if (done && page.next === page.last) return;
        }
      };
      const reading = reader();
      await Promise.all([0, 1, 2].map(writer));
      writing = false;
      await reading;
      const last = await lastSeq(store, projectId);
      expect(seen.map((change) => change.seq)).toStrictEqual(Array.from({ length: last }, (_, index) => index + 1));
      expect(seen).toEqual(await readFeed(store, projectId, 10));
      await expectReplayed(options, store, projectId, seen, [undefined]);
      // Each stored message's latest status change says its status now.
      const latest = new Map(seen.flatMap((change) => (change.kind === 'message.status_changed' ? [[change.message.key, change.to]] : [])));
      const messages = await store.listMessages(projectId, { limit: 100 });
      expect(messages).toHaveLength(18);
      for (const stored of messages) expect(latest.get(stored.key)).toBe(messageStatus(stored.facts));
    });

    test('retention by length: after the sweep, a cursor before the kept changes is refused, one at or after them works', async () => {
      const store = await options.createStore({ changes: { maxLength: 5 } });
      const projectId = randomProjectId();
      try {
        if (store.purgeExpired === undefined) return;
        const pool = addresses(12);
        for (const [index, address] of pool.entries())
          await store.addAllowlistEntry(projectId, { key: address.hash, entry: address.email, createdAt: 1000 * (index + 1) });
        await store.purgeExpired(13_000);
        for (const after of [0, 1, 6]) await expectCursorExpired(options, store, projectId, after);
        for (const after of [7, 8, 12]) {
          const changes = await readFeed(store, projectId, 2, undefined, after);
          expect(changes.map((change) => change.seq)).toStrictEqual(Array.from({ length: 12 - after }, (_, index) => after + 1 + index));
        }
      } finally {
        await store.close();
      }
    });

    test('retention by age: the sweep deletes changes older than maxAgeMs before its now', async () => {
      const store = await options.createStore({ changes: { maxAgeMs: 5_000 } });
      const projectId = randomProjectId();
      try {
        if (store.purgeExpired === undefined) return;
        const pool = addresses(12);
        for (const [index, address] of pool.entries())
          await store.addAllowlistEntry(projectId, { key: address.hash, entry: address.email, createdAt: 1000 * (index + 1) });
        await store.purgeExpired(9_500); // keeps at >= 4 500: changes 5 to 12
        await expectCursorExpired(options, store, projectId, 3);
        const changes = await readFeed(store, projectId, 3, undefined, 4);
        expect(changes.map((change) => change.at)).toStrictEqual([5, 6, 7, 8, 9, 10, 11, 12].map((second) => second * 1000));
      } finally {
        await store.close();
      }
    });

    // The filter: paging with kinds sees exactly the matching sub-sequence, whatever the page size;
    // `next` moves past what the store looked at, never past a match.
    test('paging with a kinds filter sees exactly the matching changes, in order', async ({ store, projectId }) => {
      const pool = addresses(6);
      for (const [index, address] of pool.entries()) {
        await store.applyEvents(
          projectId,
          [
            feedEvent(messageTo(address), index % 2 === 0 ? 'bounced' : 'complained', T0 + index, {
              suppress: index % 2 === 0 ? 'hard_bounce' : 'complaint',
            }),
          ],
          { now },
        );
        if (index % 2 === 0) await store.mergeSuppressions(projectId, [suppression(address, 'complaint', T0)], now);
        if (index % 3 === 0) await store.addAllowlistEntry(projectId, { key: address.hash, entry: address.email, createdAt: now });
        if (index % 3 === 1) await store.removeSuppression(projectId, address.hash, undefined, now);
      }
      await store.pauseStream(projectId, 'marketing', now);
      const all = await readFeed(store, projectId, 1000);
      const kinds = fc.subarray([...suppressionKinds, 'allowlist.added', 'message.status_changed', 'stream.paused'] as ChangeKind[], {
        minLength: 1,
      });
      await fc.assert(
        fc.asyncProperty(kinds, arbitrary.limit, async (filter, limit) => {
          expect(await readFeed(store, projectId, limit, filter)).toEqual(all.filter((change) => filter.includes(change.kind)));
        }),
        { numRuns: runs },
      );
    });

    test('a kinds filter pages past a long stretch of other changes without missing the match after it', async ({ store, projectId }) => {
      const pool = addresses(1_203);
      await store.mergeSuppressions(
        projectId,
        pool.slice(0, 1_200).map((address) => suppression(address, 'manual', T0)),
        now,
      );
      await store.addAllowlistEntry(projectId, { key: pool[0]!.hash, entry: pool[0]!.email, createdAt: now });
      await store.mergeSuppressions(
        projectId,
        pool.slice(1_200).map((address) => suppression(address, 'hard_bounce', T0)),
        now,
      );
      await store.applyEvents(projectId, [feedEvent(messageTo(pool[1]!), 'delivered', T0)], { now });
      const all = await readFeed(store, projectId, 1000);
      expect(all).toHaveLength(1_205);
      for (const filter of [['allowlist.added'], ['message.status_changed', 'allowlist.added'], ['stream.paused']] as ChangeKind[][])
        expect(await readFeed(store, projectId, 1, filter)).toEqual(all.filter((change) => filter.includes(change.kind)));
    });
  });
}
