import { randomUUID } from 'node:crypto';
import type { DeliveryEventType, EventDetails } from '@mailwarden/core';
import { Fact, TIMELINE_CAP, TIMELINE_LIMITS, timelineEntryId, type StoredEvent, type TimelineEntry } from '@mailwarden/core/store';
import fc from 'fast-check';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { timelineOf } from './model.js';
import { at, message, messageIdentities, storedEvent, type MessageIdentity } from './records.js';
import { batches } from './arbitraries.js';

const factOf: Partial<Record<DeliveryEventType, number>> = {
  sent: Fact.sent,
  delivered: Fact.delivered,
  deferred: Fact.deferred,
  bounced: Fact.soft_bounced,
  opened: Fact.opened | Fact.delivered,
};

/** An event of `identity` at `time` with its timeline entry, as the service prepares it. */
export function timelineEvent(
  identity: MessageIdentity,
  time: number,
  parts: { key?: string; type?: DeliveryEventType; details?: EventDetails } = {},
): StoredEvent & { timelineEntry: TimelineEntry } {
  const eventKey = parts.key ?? randomUUID();
  const key = `${identity.provider}:${eventKey}`;
  const type = parts.type ?? 'deferred';
  const entry: TimelineEntry = {
    id: timelineEntryId(key),
    eventKey,
    type,
    provider: identity.provider,
    occurredAt: time,
    ...parts.details,
  };
  return { ...storedEvent({ key, message: message(identity, factOf[type] ?? Fact.sent, time) }), timelineEntry: entry };
}

export function describeTimelineTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);
  const numRuns = options.numRuns ?? 50;

  describe('timelines', () => {
    test('getMessage: the message with its entries by event time, ties by id; unknown keys and other projects give undefined', async ({
      store,
      projectId,
    }) => {
      const [m, other] = messageIdentities(2);
      const sent = timelineEvent(m, at(1), { type: 'sent' });
      const deferredA = timelineEvent(m, at(5), { details: { smtpStatus: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' } });
      const deferredB = timelineEvent(m, at(5), { details: { smtpStatus: '451', diagnostic: 'try again later' } });
      const bounced = timelineEvent(m, at(9), {
        type: 'bounced',
        details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', bounceClassification: 'Permanent/General' },
      });
      // Out of order, in two batches, with a duplicate in each.
      expect(await store.applyEvents(projectId, [bounced, deferredB, bounced])).toStrictEqual(['applied', 'applied', 'duplicate']);
      expect(await store.applyEvents(projectId, [deferredA, sent, deferredB])).toStrictEqual(['applied', 'applied', 'duplicate']);

      const found = await store.getMessage(projectId, m.key);
      const ties = [deferredA.timelineEntry, deferredB.timelineEntry].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(found).toStrictEqual({
        ...message(m, Fact.sent | Fact.deferred | Fact.soft_bounced, at(1)),
        lastEventAt: at(9),
        timeline: [sent.timelineEntry, ...ties, bounced.timelineEntry],
      });
      expect(await store.getMessage(projectId, other.key)).toBeUndefined();
      expect(await store.getMessage(`${projectId}-other`, m.key)).toBeUndefined();
      expect(await store.getMessage(projectId, 'not-a-key')).toBeUndefined();
    });

    test('a message whose events carry no entries has an empty timeline', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      await store.applyEvents(projectId, [storedEvent({ message: message(m, Fact.delivered, at(3)) })]);
      expect(await store.getMessage(projectId, m.key)).toStrictEqual({ ...message(m, Fact.delivered, at(3)), timeline: [] });
    });

    test(`the cap: past ${TIMELINE_CAP} entries, the first ${TIMELINE_LIMITS.first} and the latest ${TIMELINE_LIMITS.latest} by event time stay`, async ({
      store,
      projectId,
    }) => {
      const [m] = messageIdentities(1);
      const events = Array.from({ length: TIMELINE_CAP + 25 }, (_, i) => timelineEvent(m, at(i), { key: `e-${i}` }));
      // Latest first: every new event lands in the middle or at the front.
      for (const event of [...events].reverse()) await store.applyEvents(projectId, [event]);
      const timeline = (await store.getMessage(projectId, m.key))!.timeline;
      expect(timeline).toHaveLength(TIMELINE_CAP);
      expect(timeline).toStrictEqual([
        ...events.slice(0, TIMELINE_LIMITS.first).map((event) => event.timelineEntry),
        ...events.slice(events.length - TIMELINE_LIMITS.latest).map((event) => event.timelineEntry),
      ]);
      // An event from the dropped middle, applied now (say its dedup key was forgotten), stays dropped.
      const middle = events[TIMELINE_LIMITS.first + 3]!;
      await store.applyEvents(projectId, [{ ...middle, key: `${middle.key}-again` }]);
      expect((await store.getMessage(projectId, m.key))!.timeline).toStrictEqual(timeline);
    });

    test('details are kept exactly, whatever text they hold', async ({ store, projectId }) => {
      const [m] = messageIdentities(1);
      const hostile = '"}]\\\'%s%d $1 {{x}} \u2028\u2029 😀 \uFFFD <b>é</b> --; DROP TABLE x; ]] [[ %z';
      const event = timelineEvent(m, at(2), {
        type: 'bounced',
        details: {
          diagnostic: hostile,
          bounceClassification: hostile.slice(0, 40),
          rejectReason: '\n\t',
          url: 'https://e.example/?a=1&b="2"',
          userAgent: hostile,
        },
      });
      await store.applyEvents(projectId, [event]);
      expect((await store.getMessage(projectId, m.key))!.timeline).toStrictEqual([event.timelineEntry]);
    });

    test('law: any order of the same events, with duplicates, in any batches, gives the model timeline', async ({ store }) => {
      const [m1, m2] = messageIdentities(2);
      // Times from a small pool, so ties (broken by id) are common; counts around the cap.
      // Mostly one message, and often more entries than the cap, so the cut is exercised.
      const spec = fc.record({
        message: fc.constantFrom(m1, m1, m1, m2),
        second: fc.integer({ min: 0, max: 30 }),
        type: fc.constantFrom<DeliveryEventType>('sent', 'deferred', 'delivered', 'opened'),
      });
      const entries = fc.oneof(
        fc.array(spec, { minLength: 1, maxLength: 8 }),
        fc.array(spec, { minLength: TIMELINE_CAP - 5, maxLength: TIMELINE_CAP + 30 }),
      );
      await fc.assert(
        fc.asyncProperty(
          entries,
          fc.array(fc.nat(), { maxLength: 12 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          fc.infiniteStream(fc.nat()),
          async (specs, duplicates, cuts, order) => {
            // A project per run: one store (for PostgreSQL, one migrated schema) serves them all.
            const projectId = randomProjectId();
            const events = specs.map((spec, i) => timelineEvent(spec.message, at(spec.second), { key: `law-${i}`, type: spec.type }));
            const replays = duplicates.map((d) => events[d % events.length]!);
            const shuffled = [...events, ...replays]
              .map((event) => ({ event, rank: order.next().value as number }))
              .sort((a, b) => a.rank - b.rank)
              .map(({ event }) => event);
            for (const batch of batches(shuffled, cuts)) await store.applyEvents(projectId, batch);
            for (const identity of [m1, m2]) {
              const mine = events.filter((event) => event.message!.key === identity.key).map((event) => event.timelineEntry);
              const found = await store.getMessage(projectId, identity.key);
              if (mine.length === 0) expect(found).toBeUndefined();
              else expect(found?.timeline).toStrictEqual(timelineOf(mine));
            }
          },
        ),
        { numRuns: Math.max(5, Math.round(numRuns / 2)) },
      );
    });
  });
}
