import type { Store } from '@mailwarden/core';
import { Fact, type EventOutcome, type TrackingIdRecord } from '@mailwarden/core/store';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { addresses, at, message, messageIdentities, storedEvent, suppression } from './records.js';

function allTrackingIds(store: Store, projectId: string): Promise<TrackingIdRecord[]> {
  return store.listTrackingIds(projectId, { limit: 1000 });
}

/** A row; opened, clicked and unsubscribed are 0 unless given. */
type RowCounts = Omit<TrackingIdRecord, 'trackingId' | 'opened' | 'clicked' | 'unsubscribed'> &
  Partial<Pick<TrackingIdRecord, 'opened' | 'clicked' | 'unsubscribed'>>;
function row(trackingId: string, counts: RowCounts): TrackingIdRecord {
  return { trackingId, opened: 0, clicked: 0, unsubscribed: 0, ...counts };
}

export function describeEventTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('events', () => {
    test('one outcome per event; a key seen before is a duplicate and changes nothing', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      const [a] = addresses(1);
      const first = storedEvent({ message: message(m, Fact.delivered, at(5), 'promo') });
      // Same key, different content: the key alone decides.
      const replay = {
        ...storedEvent({
          message: message(m, Fact.hard_bounced, at(1), 'other'),
          suppression: suppression(a, 'hard_bounce', at(1)),
        }),
        key: first.key,
      };

      expect(await store.applyEvents(projectId, [])).toStrictEqual([]);
      expect(await store.applyEvents(projectId, [first, replay])).toStrictEqual(['applied', 'duplicate']);
      expect(await store.applyEvents(projectId, [replay, first])).toStrictEqual(['duplicate', 'duplicate']);

      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([first.message]);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row('promo', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(5) }),
      ]);
      expect(await store.getSuppression(projectId, a.hash)).toBeUndefined();
    });

    test('an event that names nothing still records its key', async ({ store, projectId }) => {
      const empty = storedEvent({});
      expect(await store.applyEvents(projectId, [empty])).toStrictEqual(['applied']);
      expect(await store.applyEvents(projectId, [empty, storedEvent({})])).toStrictEqual(['duplicate', 'applied']);
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([]);
    });

    test('an event suppression is stored as given when the address is not suppressed yet', async ({ store, projectId }) => {
      const [a] = addresses(1);
      const record = suppression(a, 'hard_bounce', at(4));
      // No message: an asynchronous bounce without a message id still suppresses.
      expect(await store.applyEvents(projectId, [storedEvent({ suppression: record })])).toStrictEqual(['suppressed']);
      expect(await store.getSuppression(projectId, a.hash)).toStrictEqual(record);
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([record]);
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([]);
    });

    test('an event suppression only upgrades the reason and keeps the earliest createdAt', async ({ store, projectId }) => {
      const [a, b] = addresses(2);
      const other = suppression(b, 'manual', at(2));
      await store.addSuppression(projectId, suppression(a, 'manual', at(5)));
      await store.addSuppression(projectId, other);
      const applySuppression = async (
        reason: 'manual' | 'hard_bounce' | 'complaint',
        seconds: number,
        outcome: EventOutcome = 'applied',
      ) => {
        expect(await store.applyEvents(projectId, [storedEvent({ suppression: suppression(a, reason, at(seconds)) })])).toStrictEqual([
          outcome,
        ]);
        return store.getSuppression(projectId, a.hash);
      };

      expect(await applySuppression('hard_bounce', 7, 'upgraded_from_manual')).toStrictEqual(suppression(a, 'hard_bounce', at(5)));
      expect(await applySuppression('manual', 3)).toStrictEqual(suppression(a, 'hard_bounce', at(3)));
      expect(await applySuppression('complaint', 9, 'upgraded_from_hard_bounce')).toStrictEqual(suppression(a, 'complaint', at(3)));
      expect(await applySuppression('hard_bounce', 8)).toStrictEqual(suppression(a, 'complaint', at(3)));
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([suppression(a, 'complaint', at(3)), other]);

      // An earlier time moves the record in the newest-first order.
      expect(await applySuppression('manual', 1)).toStrictEqual(suppression(a, 'complaint', at(1)));
      expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([other, suppression(a, 'complaint', at(1))]);
      expect(await store.listSuppressions(projectId, { limit: 10, after: { createdAt: other.createdAt, hash: other.hash } })).toStrictEqual(
        [suppression(a, 'complaint', at(1))],
      );
      expect(await store.addSuppression(projectId, suppression(a, 'manual', at(0)))).toStrictEqual({
        record: suppression(a, 'complaint', at(1)),
        created: false,
      });
    });

    test('a message merges its events in any order: facts OR-ed, earliest first, latest last', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      const seen = [
        message(m, Fact.delivered, at(5)),
        message(m, Fact.sent, at(2), 'promo', 'weekly-digest'),
        message(m, Fact.opened | Fact.delivered, at(9)),
        message(m, Fact.sent, at(2)),
      ];
      const merged = {
        ...m,
        trackingId: 'promo',
        stream: 'weekly-digest',
        facts: Fact.sent | Fact.delivered | Fact.opened,
        firstEventAt: at(2),
        lastEventAt: at(9),
      };

      expect(
        await store.applyEvents(
          projectId,
          seen.map((record) => storedEvent({ message: record })),
        ),
      ).toStrictEqual(seen.map(() => 'applied'));
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([merged]);

      const reversed = randomProjectId();
      for (const record of [...seen].reverse()) await store.applyEvents(reversed, [storedEvent({ message: record })]);
      expect(await store.listMessages(reversed, { limit: 10 })).toStrictEqual([merged]);
    });

    test('a message sent in two streams (a sender error) keeps the smaller name, in any order', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      // 'weekly_digest' > 'weekly-digest' in code points ('_' is 0x5F, '-' 0x2D); a store must not take the latest.
      const seen = [message(m, Fact.sent, at(1), null, 'weekly_digest'), message(m, Fact.delivered, at(2), null, 'weekly-digest')];
      const merged = {
        ...m,
        trackingId: null,
        stream: 'weekly-digest',
        facts: Fact.sent | Fact.delivered,
        firstEventAt: at(1),
        lastEventAt: at(2),
      };
      for (const record of seen) await store.applyEvents(projectId, [storedEvent({ message: record })]);
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([merged]);
      const reversed = randomProjectId();
      for (const record of [...seen].reverse()) await store.applyEvents(reversed, [storedEvent({ message: record })]);
      expect(await store.listMessages(reversed, { limit: 10 })).toStrictEqual([merged]);
      expect(await store.getMessage(reversed, m!.key)).toMatchObject({ stream: 'weekly-digest' });
    });

    test('tracking-ID counters move only when a fact flips from false to true', async ({ store, projectId }) => {
      const [m1, m2] = messageIdentities(2);
      const apply = async (identity: typeof m1, facts: number, seconds: number) => {
        await store.applyEvents(projectId, [storedEvent({ message: message(identity, facts, at(seconds), 'promo') })]);
        return allTrackingIds(store, projectId);
      };
      const promo = (counts: RowCounts) => [row('promo', counts)];

      expect(await apply(m1, Fact.delivered, 1)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(1) }),
      );
      expect(await apply(m1, Fact.delivered, 2)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(2) }),
      );
      expect(await apply(m1, Fact.opened | Fact.delivered, 3)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 0, complained: 0, opened: 1, lastEventAt: at(3) }),
      );
      // Soft and hard bounces both count as bounced, once per message.
      expect(await apply(m1, Fact.soft_bounced, 4)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 1, complained: 0, opened: 1, lastEventAt: at(4) }),
      );
      expect(await apply(m1, Fact.hard_bounced, 5)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 1, complained: 0, opened: 1, lastEventAt: at(5) }),
      );
      expect(await apply(m1, Fact.complained, 6)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 1, complained: 1, opened: 1, lastEventAt: at(6) }),
      );
      expect(await apply(m1, Fact.complained, 6)).toStrictEqual(
        promo({ messages: 1, delivered: 1, bounced: 1, complained: 1, opened: 1, lastEventAt: at(6) }),
      );
      // An older event of another message does not lower lastEventAt.
      expect(await apply(m2, Fact.sent, 2)).toStrictEqual(
        promo({ messages: 2, delivered: 1, bounced: 1, complained: 1, opened: 1, lastEventAt: at(6) }),
      );
      expect(await apply(m2, Fact.delivered, 7)).toStrictEqual(
        promo({ messages: 2, delivered: 2, bounced: 1, complained: 1, opened: 1, lastEventAt: at(7) }),
      );
    });

    test('a message whose tracking ID changes to a smaller one moves its counts to the new row', async ({ store, projectId }) => {
      const [m1, m2] = messageIdentities(2);
      const [x, y] = ['promo-b', 'promo-a']; // y < x
      const apply = (identity: typeof m1, facts: number, seconds: number, trackingId: string) =>
        store.applyEvents(projectId, [storedEvent({ message: message(identity, facts, at(seconds), trackingId) })]);

      await apply(m1, Fact.delivered, 1, x);
      await apply(m1, Fact.soft_bounced, 6, x);
      await apply(m2, Fact.delivered, 3, x);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row(x, { messages: 2, delivered: 2, bounced: 1, complained: 0, lastEventAt: at(6) }),
      ]);

      // The sender disagrees with itself: the smaller ID wins and m1 takes all its counts along.
      await apply(m1, Fact.complained, 4, y);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row(y, { messages: 1, delivered: 1, bounced: 1, complained: 1, lastEventAt: at(6) }),
        // lastEventAt is recomputed from the messages left: m1's at(6) went with it.
        row(x, { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(3) }),
      ]);

      // A larger ID loses: m1 stays under y.
      await apply(m1, Fact.clicked | Fact.delivered, 8, x);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row(y, { messages: 1, delivered: 1, bounced: 1, complained: 1, clicked: 1, lastEventAt: at(8) }),
        row(x, { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(3) }),
      ]);
      const m1Now = {
        ...m1,
        trackingId: y,
        stream: null,
        facts: Fact.delivered | Fact.soft_bounced | Fact.complained | Fact.clicked,
        firstEventAt: at(1),
        lastEventAt: at(8),
      };
      expect(await store.listMessages(projectId, { limit: 10, trackingId: y })).toStrictEqual([m1Now]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: x })).toStrictEqual([message(m2, Fact.delivered, at(3), x)]);
    });

    test('a tracking ID left with no messages disappears', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      await store.applyEvents(projectId, [storedEvent({ message: message(m, Fact.delivered, at(1), 'b') })]);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row('b', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(1) }),
      ]);

      await store.applyEvents(projectId, [storedEvent({ message: message(m, Fact.sent, at(2), 'a') })]);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row('a', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(2) }),
      ]);
      expect(await store.listTrackingIds(projectId, { limit: 10, search: 'b' })).toStrictEqual([]);
      expect(await store.listTrackingIds(projectId, { limit: 10, after: 'a' })).toStrictEqual([]);
      expect(await store.getTrackingId(projectId, 'b')).toBeUndefined();
      expect(await store.getTrackingId(projectId, 'a')).toStrictEqual(
        row('a', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(2) }),
      );
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'b' })).toStrictEqual([]);
    });

    test('a message without a tracking ID lists with null and counts nowhere until it gets one', async ({ store, projectId }) => {
      const [m1, m2] = messageIdentities(2);
      await store.applyEvents(projectId, [
        storedEvent({ message: message(m1, Fact.delivered, at(1)) }),
        storedEvent({ message: message(m1, Fact.hard_bounced, at(2)) }),
        storedEvent({ message: message(m2, Fact.delivered, at(3), 'promo') }),
      ]);
      expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([
        message(m2, Fact.delivered, at(3), 'promo'),
        { ...m1, trackingId: null, stream: null, facts: Fact.delivered | Fact.hard_bounced, firstEventAt: at(1), lastEventAt: at(2) },
      ]);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row('promo', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(3) }),
      ]);

      // Its first tracking ID counts everything it already had.
      await store.applyEvents(projectId, [storedEvent({ message: message(m1, Fact.sent, at(0), 'zeta') })]);
      expect(await allTrackingIds(store, projectId)).toStrictEqual([
        row('promo', { messages: 1, delivered: 1, bounced: 0, complained: 0, lastEventAt: at(3) }),
        row('zeta', { messages: 1, delivered: 1, bounced: 1, complained: 0, lastEventAt: at(2) }),
      ]);
      // A later event without a tracking ID keeps it.
      await store.applyEvents(projectId, [storedEvent({ message: message(m1, Fact.opened | Fact.delivered, at(4)) })]);
      expect(await store.listMessages(projectId, { limit: 10, trackingId: 'zeta' })).toStrictEqual([
        {
          ...m1,
          trackingId: 'zeta',
          stream: null,
          facts: Fact.sent | Fact.delivered | Fact.hard_bounced | Fact.opened,
          firstEventAt: at(0),
          lastEventAt: at(4),
        },
      ]);
    });

    test('concurrent batches end in the state of applying each event once, one after another', async ({ store, projectId }) => {
      // Several app instances share one store: a store must not lose or double an update under concurrency.
      const identities = messageIdentities(3);
      const [a] = addresses(1);
      const factsCycle = [Fact.sent, Fact.delivered, Fact.soft_bounced, Fact.complained, Fact.opened | Fact.delivered];
      const events = Array.from({ length: 24 }, (_, index) =>
        storedEvent({
          message: message(
            identities[index % 3]!,
            factsCycle[index % 5]!,
            at(index % 7),
            // One sender error: a smaller tracking ID for the first message, moving it from promo-b to promo-a.
            index % 4 === 0 ? null : index === 9 ? 'promo-a' : ['promo-b', 'promo-b', 'promo-c'][index % 3]!,
          ),
          ...(index % 6 === 0 ? { suppression: suppression(a, index % 12 === 0 ? 'complaint' : 'hard_bounce', at(index)) } : {}),
        }),
      );
      // Five batches, overlapping so that some events arrive twice, at the same time.
      const batches = Array.from({ length: 5 }, (_, batch) => events.filter((_, index) => index % 5 === batch || index % 7 === batch));

      const outcomes = (await Promise.all(batches.map((batch) => store.applyEvents(projectId, batch)))).flat();
      const appliedKeys = batches
        .flat()
        .filter((_, index) => outcomes[index] !== 'duplicate')
        .map((event) => event.key);
      expect([...appliedKeys].sort()).toStrictEqual(events.map((event) => event.key).sort());
      // One event suppressed the address; if it was a bounce, one complaint upgraded it; no more.
      const changes = outcomes.filter((outcome) => outcome !== 'applied' && outcome !== 'duplicate').sort();
      expect([['suppressed'], ['suppressed', 'upgraded_from_hard_bounce']]).toContainEqual(changes);

      const oneByOne = randomProjectId();
      for (const event of events) await store.applyEvents(oneByOne, [event]);
      const state = async (project: string) => ({
        messages: await store.listMessages(project, { limit: 100 }),
        trackingIds: await allTrackingIds(store, project),
        suppressions: await store.listSuppressions(project, { limit: 100 }),
      });
      const expected = await state(oneByOne);
      expect(expected.messages).toHaveLength(3);
      expect(expected.trackingIds.map((row) => row.trackingId)).toStrictEqual(['promo-a', 'promo-b', 'promo-c']);
      expect(await state(projectId)).toStrictEqual(expected);
    });

    test('event keys, messages, counters and suppressions belong to one project', async ({ store, projectId }) => {
      const other = randomProjectId();
      const [m] = messageIdentities(1);
      const [a] = addresses(1);
      const event = storedEvent({
        message: message(m, Fact.complained, at(1), 'promo'),
        suppression: suppression(a, 'complaint', at(1)),
      });

      expect(await store.applyEvents(projectId, [event])).toStrictEqual(['suppressed']);
      expect(await store.applyEvents(other, [event])).toStrictEqual(['suppressed']);
      await store.applyEvents(projectId, [storedEvent({ message: message(m, Fact.delivered, at(2), 'promo') })]);

      expect(await store.listMessages(other, { limit: 10 })).toStrictEqual([event.message]);
      expect(await allTrackingIds(store, other)).toStrictEqual([
        row('promo', { messages: 1, delivered: 0, bounced: 0, complained: 1, lastEventAt: at(1) }),
      ]);
      expect(await store.removeSuppression(projectId, a.hash)).toStrictEqual(event.suppression);
      expect(await store.getSuppression(other, a.hash)).toStrictEqual(event.suppression);
    });
  });
}
