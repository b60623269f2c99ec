// The memory store's bound by size (`retention.maxMessages`): the messages with the oldest last events
// go first, with their timelines, per project; dedup keys go as retention by time forgets them.
import { createMailwarden, createMemoryStore, type DeliveryEvent, type MemoryStore } from '@mailwarden/core';
import { describe, expect, test } from 'vitest';

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
});
