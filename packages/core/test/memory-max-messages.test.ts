// The memory store's bound by size (`retention.maxMessages`): the messages with the oldest last events
// go first, with their timelines, per project; dedup keys go as retention by time forgets them.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createMailwarden, createMemoryStore, type DeliveryEvent, type MemoryStore } from '@mailwarden/core';
import { describe, expect, test } from 'vitest';
import { deliveryEventWithinHours } from './arbitraries.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const PROJECT = 'acme';

let sequence = 0;
function event(id: string, at: number, overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    provider: 'sparkpost',
    type: 'delivered',
    messageId: id,
    recipient: `${id}@example.com`,
    trackingId: 'camp',
    occurredAt: new Date(at),
    eventKey: `event-${++sequence}`,
    ...overrides,
  };
}

const messageIds = async (store: MemoryStore, projectId = PROJECT) =>
  (await store.listMessages(projectId, { limit: 10_000 })).map((message) => message.messageId).sort();

describe('memory store retention.maxMessages', () => {
  test('must be a positive integer; retention needs one bound at least', () => {
    for (const maxMessages of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMemoryStore({ retention: { maxMessages } }), String(maxMessages)).toThrow(RangeError);
    }
    expect(() => createMemoryStore({ retention: {} })).toThrow(RangeError);
    expect(createMemoryStore({ retention: { maxMessages: 1 } }).retained().messages).toBe(0);
  });

  test('keeps the messages with the latest last events, per project, with their timelines', async () => {
    const store = createMemoryStore({ retention: { maxMessages: 3 } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents(PROJECT, [
      event('a', T0),
      event('b', T0 + MINUTE),
      event('c', T0 + 2 * MINUTE),
      // `a` has a later event than `b` now: `b` is the oldest by last event.
      event('a', T0 + 3 * MINUTE, { type: 'opened' }),
      event('d', T0 + 4 * MINUTE),
    ]);
    await mailwarden.applyEvents('other', [event('x', T0 - MINUTE)]);
    expect(await messageIds(store)).toStrictEqual(['a', 'c', 'd']);
    // Another project's messages are its own: `x` is older than all, and stays.
    expect(await messageIds(store, 'other')).toStrictEqual(['x']);
    expect(store.retained()).toMatchObject({ messages: 4, timelineEntries: 5 });
    // An event older than every message held is applied, and its message forgotten in the same call.
    await mailwarden.applyEvents(PROJECT, [event('old', T0 - MINUTE)]);
    expect(await messageIds(store)).toStrictEqual(['a', 'c', 'd']);
    // Tracking-ID counters are totals of what was recorded: forgetting lowers none.
    expect((await mailwarden.trackingIds.list(PROJECT, { limit: 10 })).items[0]).toMatchObject({ messages: 5, delivered: 5 });
  });

  test('dedup keys go once the clock passes the last event of the newest message forgotten, never before the clock starts', async () => {
    const store = createMemoryStore({ retention: { maxMessages: 100 } });
    const mailwarden = createMailwarden({ store });
    const first = event('first', T0);
    await mailwarden.applyEvents(PROJECT, [first]);
    // 100 more messages: `first` is forgotten, but the clock (the 100th latest time) has only now
    // reached `T0`, so no key was applied before a time it has passed: a retry is a duplicate.
    const later = Array.from({ length: 100 }, (_, i) => event(`m${i}`, T0 + (i + 1) * MINUTE));
    await mailwarden.applyEvents(PROJECT, later);
    expect(await messageIds(store)).not.toContain('first');
    expect(await mailwarden.applyEvents(PROJECT, [first])).toMatchObject({ accepted: 0, duplicates: 1 });
    // Once the clock has moved past what was forgotten, keys applied before then go too: the keys stay
    // bounded with the messages.
    await store.purgeExpired(T0 + 1_000 * MINUTE);
    await mailwarden.applyEvents(
      PROJECT,
      Array.from({ length: 100 }, (_, i) => event(`n${i}`, T0 + (1_000 + i) * MINUTE)),
    );
    expect(store.retained()).toMatchObject({ messages: 100 });
    expect(store.retained().eventKeys).toBeLessThanOrEqual(101);
  });

  test('with messagesMs too, whichever bound is tighter forgets', async () => {
    const store = createMemoryStore({ retention: { messagesMs: 10 * MINUTE, maxMessages: 5 } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents(
      PROJECT,
      Array.from({ length: 8 }, (_, i) => event(`m${i}`, T0 + i * MINUTE)),
    );
    expect(await messageIds(store)).toStrictEqual(['m3', 'm4', 'm5', 'm6', 'm7']);
    await store.purgeExpired(T0 + 15 * MINUTE);
    expect(await messageIds(store)).toStrictEqual(['m5', 'm6', 'm7']);
  });

  test('law: events in time order leave each project the maxMessages latest messages (last event, then key) of a store without a bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(deliveryEventWithinHours(48), { maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        async (drawn, maxMessages, batchSize) => {
          // A key per event content, so one key names one event; events in time order.
          const events = drawn
            .map((event) => ({
              ...event,
              eventKey: createHash('sha256')
                .update(JSON.stringify({ ...event, eventKey: 0 }))
                .digest('hex'),
            }))
            .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
          const bounded = createMemoryStore({ retention: { maxMessages } });
          const unbounded = createMemoryStore();
          for (let i = 0; i < events.length; i += batchSize) {
            const batch = events.slice(i, i + batchSize);
            await createMailwarden({ store: bounded }).applyEvents(PROJECT, batch);
            await createMailwarden({ store: unbounded }).applyEvents(PROJECT, batch);
            expect(bounded.retained().messages).toBeLessThanOrEqual(maxMessages);
          }
          const latest = (await unbounded.listMessages(PROJECT, { limit: 1_000 }))
            .sort((a, b) => b.lastEventAt - a.lastEventAt || (a.key < b.key ? -1 : 1))
            .slice(0, maxMessages)
            .map((message) => `${message.key} ${message.lastEventAt}`)
            .sort();
          const held = (await bounded.listMessages(PROJECT, { limit: 1_000 }))
            .map((message) => `${message.key} ${message.lastEventAt}`)
            .sort();
          expect(held).toStrictEqual(latest);
        },
      ),
      { numRuns: 60 },
    );
  });
});
