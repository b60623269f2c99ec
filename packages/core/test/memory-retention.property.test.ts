// Laws of the memory store's retention, against the same history applied to a store without retention:
// nothing is forgotten before its time, suppressions never change, a purge changes no counter and
// forgets everything past its horizon, listings stay consistent, events older than the window never
// come back to stay, and a few events dated far ahead cannot move the clock.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createMailwarden, createMemoryStore, type DeliveryEvent, type Store } from '@mailwarden/core';
import type { MessageRecord } from '@mailwarden/core/store';
import { CLOCK_EVENTS } from '../src/memory-store/event-clock.js';
import { EVENT_EPOCH, deliveryEventWithinHours } from './arbitraries.js';

const HOUR = 3_600_000;
const RETENTION = 24 * HOUR;
const PROJECT = 'acme';
const hour = (h: number) => EVENT_EPOCH + h * HOUR;

let trafficSequence = 0;
/** `CLOCK_EVENTS` delivered messages of their own at `at`: enough to set the store's clock to `at`. */
function traffic(at: number): DeliveryEvent[] {
  return Array.from({ length: CLOCK_EVENTS }, () => {
    const id = `traffic-${++trafficSequence}`;
    return {
      provider: 'sparkpost',
      type: 'delivered',
      messageId: id,
      recipient: 'traffic@example.com',
      trackingId: 'traffic',
      occurredAt: new Date(at),
      eventKey: id,
    };
  });
}

/**
 * The event with a key derived from its content, so a key names one event, as a provider's does: the
 * shared pool of keys gives different events one key, and once retention forgot that key the second
 * event would count where a store that keeps keys forever calls it a duplicate (as Redis and Postgres
 * would after their retention too).
 */
function keyedByContent(event: DeliveryEvent): DeliveryEvent {
  return {
    ...event,
    eventKey: createHash('sha256')
      .update(JSON.stringify({ ...event, eventKey: undefined }))
      .digest('hex'),
  };
}

type Step = { kind: 'events'; events: DeliveryEvent[] } | { kind: 'traffic'; hour: number } | { kind: 'purge'; hour: number };

/** Histories over four days, so a retention of one day forgets often. */
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(deliveryEventWithinHours(96).map(keyedByContent), { maxLength: 8 })
      .map((events) => ({ kind: 'events' as const, events })),
  },
  { weight: 2, arbitrary: fc.nat(96).map((h) => ({ kind: 'traffic' as const, hour: h })) },
  { weight: 1, arbitrary: fc.nat(120).map((h) => ({ kind: 'purge' as const, hour: h })) },
);

const messagesOf = async (store: Store) => store.listMessages(PROJECT, { limit: 100_000 });
const rowsOf = async (store: Store) => store.listTrackingIds(PROJECT, { limit: 100_000 });
const suppressionsOf = async (store: Store) => store.listSuppressions(PROJECT, { limit: 100_000 });

describe('memory store retention', () => {
  test('never forgets a message before its time, never touches suppressions, and a purge changes no counter', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const store = createMemoryStore({ retention: { messagesMs: RETENTION } });
        const reference = createMemoryStore();
        const [kept, all] = [createMailwarden({ store }), createMailwarden({ store: reference })];
        // The latest time the store was given (its clock never reads later), and the earliest its
        // clock can read: the latest purge, or the latest traffic, whose 100 events are the 100 latest.
        let latest = -Infinity;
        let clockAtLeast = -Infinity;
        for (const current of steps) {
          if (current.kind === 'purge') {
            const now = hour(current.hour);
            const [rowsBefore, messagesBefore] = [await rowsOf(store), await messagesOf(store)];
            const forgotten = await store.purgeExpired(now);
            const messagesAfter = await messagesOf(store);
            expect(await rowsOf(store)).toStrictEqual(rowsBefore);
            expect(messagesBefore.length - messagesAfter.length).toBe(forgotten);
            expect(messagesAfter).toStrictEqual(messagesBefore.filter((message) => messagesAfter.some((m) => m.key === message.key)));
            latest = Math.max(latest, now);
            clockAtLeast = Math.max(clockAtLeast, now);
          } else {
            const events = current.kind === 'traffic' ? traffic(hour(current.hour)) : current.events;
            // The answers may differ: a key forgotten makes its event applied again (merged, harmlessly).
            await kept.applyEvents(PROJECT, events);
            await all.applyEvents(PROJECT, events);
            for (const event of events) latest = Math.max(latest, event.occurredAt.getTime());
            if (current.kind === 'traffic') clockAtLeast = Math.max(clockAtLeast, hour(current.hour));
          }

          const messages = await messagesOf(store);
          const byKey = new Map(messages.map((message) => [message.key, message]));
          // Never early: a message whose every event is within a retention of the latest time is whole.
          for (const message of await messagesOf(reference)) {
            if (message.firstEventAt >= latest - RETENTION) expect(byKey.get(message.key)).toStrictEqual(message);
          }
          // Complete: nothing past the horizon of the earliest reading the clock can have.
          for (const message of messages) expect(message.lastEventAt).toBeGreaterThanOrEqual(clockAtLeast - RETENTION);
          expect(await suppressionsOf(store)).toStrictEqual(await suppressionsOf(reference));
          await expectConsistentListings(store, messages);
        }
      }),
      { numRuns: 60 },
    );
  });

  test('events older than the window are forgotten in the call that brings them, and their replays within the window are duplicates', async () => {
    const oldBatches = fc.array(fc.array(deliveryEventWithinHours(48), { maxLength: 10 }), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(oldBatches, fc.nat(3), async (batches, passes) => {
        const store = createMemoryStore({ retention: { messagesMs: RETENTION } });
        const mailwarden = createMailwarden({ store });
        const reference = createMailwarden();
        // The clock reads hour 100: every event of the batches (hours 0–48) is older than its window.
        for (const target of [mailwarden, reference]) await target.applyEvents(PROJECT, traffic(hour(100)));
        const expected = [];
        for (const batch of batches) expected.push(await reference.applyEvents(PROJECT, batch));
        for (let pass = 0; pass <= passes; pass++) {
          // Each later pass comes after a purge more than a retention on, when the keys are forgotten
          // too (and the traffic): it is answered as the first was.
          if (pass > 0) await store.purgeExpired(hour(100 + 25 * pass));
          for (const [index, batch] of batches.entries()) {
            expect(await mailwarden.applyEvents(PROJECT, batch)).toStrictEqual(expected[index]);
            expect(store.retained().messages).toBe(pass === 0 ? CLOCK_EVENTS : 0);
          }
        }
        // However often they came, a retention later nothing of them is left.
        await store.purgeExpired(hour(100 + 25 * (passes + 1)));
        expect(store.retained()).toMatchObject({ messages: 0, eventKeys: 0 });
      }),
      { numRuns: 60 },
    );
  });

  test('fewer than 100 events dated far ahead, in any batches, forget nothing', async () => {
    const farTimes = fc.array(fc.integer({ min: hour(25), max: 8.64e15 }), { maxLength: CLOCK_EVENTS - 1 });
    await fc.assert(
      fc.asyncProperty(farTimes, fc.array(fc.nat(CLOCK_EVENTS - 1), { maxLength: 4 }), async (times, cuts) => {
        const store = createMemoryStore({ retention: { messagesMs: RETENTION } });
        const mailwarden = createMailwarden({ store });
        const present = traffic(hour(0));
        await mailwarden.applyEvents(PROJECT, present);
        const far = times.map(
          (at, i): DeliveryEvent => ({ ...present[0]!, messageId: `far-${i}`, eventKey: `far-${i}`, occurredAt: new Date(at) }),
        );
        const bounds = [0, ...cuts.sort((a, b) => a - b), far.length];
        for (let i = 1; i < bounds.length; i++) await mailwarden.applyEvents(PROJECT, far.slice(bounds[i - 1], bounds[i]));
        await mailwarden.applyEvents(PROJECT, traffic(hour(1)));
        expect(store.retained().messages).toBe(2 * CLOCK_EVENTS + new Set(far.map((event) => event.messageId)).size);
      }),
      { numRuns: 60 },
    );
  });
});

/** The listings by tracking ID and by status hold exactly the project listing's messages, none forgotten or left behind. */
async function expectConsistentListings(store: Store, messages: MessageRecord[]): Promise<void> {
  for (const { trackingId } of await rowsOf(store)) {
    expect(await store.listMessages(PROJECT, { trackingId, limit: 100_000 })).toStrictEqual(
      messages.filter((message) => message.trackingId === trackingId),
    );
  }
  const byStatus = await Promise.all(
    (['delivered', 'bounced', 'sent'] as const).map((status) => store.listMessages(PROJECT, { status, limit: 100_000 })),
  );
  expect(byStatus.flat().every((message) => messages.some((m) => m.key === message.key))).toBe(true);
}
