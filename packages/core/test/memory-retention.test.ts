// The memory store's retention: what it forgets and when, by the times it is given (never a clock of
// its own), the same answers the Postgres store's retention tests expect, and memory that stays bounded
// under two simulated weeks of webhook traffic.
import { createMailwarden, createMemoryStore, type DeliveryEvent, type Mailwarden, type MemoryStore } from '@mailwarden/core';
import { messageKey } from '@mailwarden/core/store';
import { describe, expect, test } from 'vitest';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 1);
const PROJECT = 'acme';
const D1 = 'd'.repeat(64);
const D2 = 'e'.repeat(64);

let sequence = 0;
/** An event about message `id` (sent to `<id>@example.com`), each with its own key unless one is given. */
function event(id: string | null, at: number, overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    provider: 'sparkpost',
    type: 'delivered',
    messageId: id,
    recipient: `${id ?? 'nobody'}@example.com`,
    trackingId: 'camp',
    occurredAt: new Date(at),
    eventKey: `event-${++sequence}`,
    ...overrides,
  };
}

/** `count` events about messages of their own, at `at`: traffic that moves the store's clock. */
const traffic = (count: number, at: number): DeliveryEvent[] =>
  Array.from({ length: count }, () => event(`traffic-${sequence}`, at, { trackingId: 'traffic' }));

const messageIds = async (store: MemoryStore, projectId = PROJECT) =>
  (await store.listMessages(projectId, { limit: 10_000 })).map((message) => message.messageId).sort();

const rows = async (mailwarden: Mailwarden, projectId = PROJECT) => (await mailwarden.trackingIds.list(projectId, { limit: 100 })).items;

describe('memory store retention', () => {
  test('retention.messagesMs must be a positive integer', () => {
    for (const messagesMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMemoryStore({ retention: { messagesMs } }), String(messagesMs)).toThrow(RangeError);
    }
    expect(createMemoryStore({ retention: { messagesMs: 1 } }).retained()).toStrictEqual({
      messages: 0,
      eventKeys: 0,
      webhookTokens: 0,
      trackingIds: 0,
      timelineEntries: 0,
      statsHours: 0,
      softBounceHistories: 0,
      changes: 0,
    });
  });

  test('purgeExpired(now) forgets messages older than the retention and dedup keys applied before then; counters and suppressions stay', async () => {
    // The same history as the Postgres store's purgeExpired test, with the same answers.
    const store = createMemoryStore({ retention: { messagesMs: 30 * DAY } });
    const mailwarden = createMailwarden({ store });
    const now = T0;
    const old = now - 40 * DAY;
    const history = [
      event('old-1', old),
      event('old-2', old + 1, { type: 'complained' }),
      event('new-1', now - DAY, { type: 'bounced', bounceClass: 'hard' }),
      event('old-3', old, { trackingId: 'gone' }),
      event('old-4', old, { trackingId: null }),
      // Old first event, recent last one: kept.
      event('kept', old, { trackingId: 'gone', type: 'sent' }),
      event('kept', now - 2 * DAY, { trackingId: 'gone' }),
      event('suppressed-long-ago', old, { type: 'bounced', bounceClass: 'hard', trackingId: null }),
    ];
    expect((await mailwarden.applyEvents(PROJECT, history)).accepted).toBe(8);
    await mailwarden.applyEvents('other', [event('old-5', old, { trackingId: 'x' })]);
    // Fewer than 100 event times and no purge yet: the store's clock has not started, nothing expired.
    expect(store.retained()).toMatchObject({ messages: 8, eventKeys: 9 });
    const counters = await rows(mailwarden);
    expect(counters).toStrictEqual([
      {
        trackingId: 'camp',
        messages: 3,
        delivered: 1,
        bounced: 1,
        complained: 1,
        lastEventAt: new Date(now - DAY).toISOString(),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
      {
        trackingId: 'gone',
        messages: 2,
        delivered: 2,
        bounced: 0,
        complained: 0,
        lastEventAt: new Date(now - 2 * DAY).toISOString(),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
    ]);

    expect(await store.purgeExpired(now)).toBe(6);
    expect(await messageIds(store)).toStrictEqual(['kept', 'new-1']);
    expect(await messageIds(store, 'other')).toStrictEqual([]);
    // Counters are totals of what was recorded: forgetting messages does not lower them.
    expect(await rows(mailwarden)).toStrictEqual(counters);
    expect((await mailwarden.suppressions.check(PROJECT, 'suppressed-long-ago@example.com')).suppressed).toBe(true);
    expect((await mailwarden.suppressions.check(PROJECT, 'new-1@example.com')).suppressed).toBe(true);
    expect(await store.purgeExpired(now)).toBe(0);
    // The keys were applied before the clock started, so they count as applied at its first reading
    // (`now`) and are kept a retention from then: a provider retry of the old events is a duplicate.
    expect(await mailwarden.applyEvents(PROJECT, history)).toMatchObject({ accepted: 0, duplicates: 8 });
    expect(store.retained()).toMatchObject({ messages: 2, eventKeys: 9 });

    // A message leaving a row whose other messages were forgotten: its lastEventAt has nothing to be
    // recomputed from, and stays.
    await mailwarden.applyEvents(PROJECT, [event('kept', now, { trackingId: 'a-first', type: 'sent' })]);
    expect(await rows(mailwarden)).toStrictEqual([
      {
        trackingId: 'a-first',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 0,
        lastEventAt: new Date(now).toISOString(),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
      counters[0],
      {
        trackingId: 'gone',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 0,
        lastEventAt: new Date(now - 2 * DAY).toISOString(),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
    ]);

    // A retention after the clock's first reading, every key and message is gone.
    expect(await store.purgeExpired(now + 31 * DAY)).toBe(2);
    // Timelines go with their messages; counts over time stay.
    expect(store.retained()).toMatchObject({ messages: 0, eventKeys: 0, webhookTokens: 0, trackingIds: 4, timelineEntries: 0 });
    expect(store.retained().statsHours).toBeGreaterThan(0);
    // A late event for a forgotten message (its key forgotten too) is applied again and counted again,
    // as on Redis and Postgres, but an old one does not come back to stay: it is forgotten in the same call.
    expect((await mailwarden.applyEvents(PROJECT, [history[0]!])).accepted).toBe(1);
    expect(store.retained()).toMatchObject({ messages: 0, eventKeys: 1 });
    expect((await rows(mailwarden))[1]).toMatchObject({ trackingId: 'camp', messages: 4, delivered: 2 });
  });

  test('once a dedup key is forgotten, another event under the same key counts, as it would on Redis and Postgres', async () => {
    // Found by the property test when its pool of keys gave two different events one key: a store
    // that keeps keys forever calls the second a duplicate, one with retention applies it.
    const store = createMemoryStore({ retention: { messagesMs: DAY } });
    const mailwarden = createMailwarden({ store });
    const sent = event('m-1', T0, { type: 'sent', trackingId: null, eventKey: 'evt-9' });
    await store.purgeExpired(T0);
    await mailwarden.applyEvents(PROJECT, [sent]);
    await store.purgeExpired(T0 + DAY + 1);
    const rejected = { ...sent, type: 'rejected' as const, providerSuppression: 'bounce' as const };
    expect(await mailwarden.applyEvents(PROJECT, [rejected])).toMatchObject({ accepted: 1, duplicates: 0 });
    expect((await mailwarden.suppressions.check(PROJECT, 'm-1@example.com')).suppressed).toBe(true);
  });

  test('events alone move the clock: its reading is the 100th latest event time', async () => {
    const store = createMemoryStore({ retention: { messagesMs: HOUR } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents(PROJECT, [event('early', T0)]);
    // 99 later times: with `early` they are 100, the earliest of which is `early` itself.
    await mailwarden.applyEvents(PROJECT, traffic(99, T0 + 2 * HOUR));
    expect(await messageIds(store)).toContain('early');
    // One more: the 100th latest is now two hours after `early`, a retention and more.
    await mailwarden.applyEvents(PROJECT, traffic(1, T0 + 2 * HOUR));
    expect(await messageIds(store)).not.toContain('early');
    expect(store.retained().messages).toBe(100);
  });

  test('a few events dated far ahead expire nothing; only once they are the 100 latest do they set the time', async () => {
    const store = createMemoryStore({ retention: { messagesMs: DAY } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents(PROJECT, traffic(200, T0));
    // A sender that writes seconds where milliseconds belong dates its events in the year 57 000.
    const far = T0 * 1000;
    await mailwarden.applyEvents(PROJECT, traffic(99, far));
    await mailwarden.applyEvents(PROJECT, traffic(100, T0 + 1));
    expect(store.retained().messages).toBe(399);
    await mailwarden.applyEvents(PROJECT, traffic(1, far));
    expect(store.retained().messages).toBe(100);
  });

  test('an idle project keeps its messages until it is written or purgeExpired runs', async () => {
    const store = createMemoryStore({ retention: { messagesMs: HOUR } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents('idle', [event('quiet', T0)]);
    await mailwarden.applyEvents(PROJECT, traffic(100, T0 + 2 * HOUR));
    expect(await messageIds(store, 'idle')).toStrictEqual(['quiet']);
    expect(await store.purgeExpired(T0 + 2 * HOUR)).toBe(1);
    expect(await messageIds(store, 'idle')).toStrictEqual([]);
  });

  test('token claims are forgotten once the clock passes their expiresAt, with or without retention, never by the wall clock', async () => {
    const store = createMemoryStore();
    const mailwarden = createMailwarden({ store });
    // Long past by the wall clock, but the store's clock has not started: the claim holds.
    const expiresAt = T0 + 7 * DAY;
    expect(await store.claimWebhookToken(PROJECT, 'mailgun:a', D1, expiresAt)).toBe('first');
    expect(await store.claimWebhookToken(PROJECT, 'mailgun:a', D2, expiresAt)).toBe('conflict');
    expect(store.retained().webhookTokens).toBe(1);
    // Events up to its expiry, then a purge at it: kept (forgotten once the time is past, not at it).
    await mailwarden.applyEvents(PROJECT, traffic(100, expiresAt));
    expect(await store.purgeExpired(expiresAt)).toBe(0);
    expect(await store.claimWebhookToken(PROJECT, 'mailgun:a', D1, expiresAt)).toBe('same');
    // Events a millisecond later move the clock past it.
    await mailwarden.applyEvents(PROJECT, traffic(100, expiresAt + 1));
    expect(store.retained().webhookTokens).toBe(0);
    expect(await store.claimWebhookToken(PROJECT, 'mailgun:a', D2, expiresAt)).toBe('first');
    // Without retention, messages and keys stay.
    expect(store.retained()).toMatchObject({ messages: 200, eventKeys: 200 });
    await expect(store.claimWebhookToken(PROJECT, 'mailgun:b', D1, 1.5)).rejects.toThrow(RangeError);
  });

  test('two simulated weeks of webhook traffic hold one retention of messages and keys, and seven days of token claims', async () => {
    // Every 10 simulated minutes a webhook delivers a batch: 25 new messages delivered, opens of 10
    // messages delivered half an hour earlier, a hard bounce in every 50 messages, 2 events that name
    // no message, and every 6th batch a provider retry of the batch before. Each batch comes with a
    // Mailgun-like token claim, kept 7 days as intake asks. One campaign (tracking ID) per day.
    const RETENTION = DAY;
    const BATCH_EVERY = 10 * MINUTE;
    const NEW_MESSAGES = 25;
    const TOKEN_DAYS = 7;
    const DAYS = 14;
    let clock = T0;
    const store = createMemoryStore({ retention: { messagesMs: RETENTION } });
    const mailwarden = createMailwarden({ store, now: () => clock });
    const batchesPer = (ms: number) => ms / BATCH_EVERY;
    // Bounds from the retention: what a window holds, plus an hour for the clock's lag behind the
    // newest event (the last 100 events, about 3 batches) and the half hour a message stays active.
    const bounds = {
      messages: NEW_MESSAGES * batchesPer(RETENTION + HOUR),
      eventKeys: (NEW_MESSAGES + 10 + 2) * batchesPer(RETENTION + HOUR),
      webhookTokens: batchesPer(TOKEN_DAYS * DAY + HOUR),
    };
    let previous: DeliveryEvent[] = [];
    let batches = 0;
    for (; clock < T0 + DAYS * DAY; clock += BATCH_EVERY, batches++) {
      const day = Math.floor((clock - T0) / DAY);
      const id = (b: number, i: number) => `m-${b}-${i}`;
      const batch: DeliveryEvent[] = [];
      for (let i = 0; i < NEW_MESSAGES; i++) {
        const bounced = (batches * NEW_MESSAGES + i) % 50 === 0;
        batch.push(
          event(id(batches, i), clock, { trackingId: `digest-${day}`, ...(bounced ? { type: 'bounced', bounceClass: 'hard' } : {}) }),
        );
      }
      for (let i = 0; i < 10 && batches >= 3; i++) batch.push(event(id(batches - 3, i + 1), clock, { type: 'opened', trackingId: null }));
      batch.push(event(null, clock, { type: 'unknown' }), event(null, clock, { type: 'unknown' }));
      await store.claimWebhookToken(PROJECT, `mailgun:${batches}`, D1, clock + TOKEN_DAYS * DAY);
      const result = await mailwarden.applyEvents(PROJECT, batches % 6 === 5 ? [...previous, ...batch] : batch);
      expect(result.skipped).toBe(0);
      previous = batch;

      if (batches % batchesPer(HOUR) === 0) {
        const retained = store.retained();
        expect(retained.messages, `messages on day ${day}`).toBeLessThanOrEqual(bounds.messages);
        expect(retained.eventKeys, `keys on day ${day}`).toBeLessThanOrEqual(bounds.eventKeys);
        expect(retained.webhookTokens, `claims on day ${day}`).toBeLessThanOrEqual(bounds.webhookTokens);
        // At most two events per message here (delivered, opened): timelines that outlived their messages would show.
        expect(retained.timelineEntries, `timeline entries on day ${day}`).toBeLessThanOrEqual(2 * retained.messages);
      }
    }
    const retained = store.retained();
    // Without retention the store would hold every message: fourteen times the bound.
    expect(batches * NEW_MESSAGES).toBeGreaterThan(13 * bounds.messages);
    expect(batches).toBeGreaterThan(1.9 * bounds.webhookTokens);
    // And it forgot nothing early: every message of the last 23 hours is there.
    expect(retained.messages).toBeGreaterThanOrEqual(NEW_MESSAGES * batchesPer(RETENTION - HOUR));
    expect(retained.webhookTokens).toBeGreaterThanOrEqual(batchesPer(TOKEN_DAYS * DAY - HOUR));
    // Tracking-ID rows and suppressions never expire: one row per daily campaign, one suppression per bounce.
    expect(retained.trackingIds).toBe(DAYS);
    const campaigns = await rows(mailwarden);
    expect(campaigns.reduce((sum, row) => sum + row.messages, 0)).toBe(batches * NEW_MESSAGES);
    expect(campaigns.reduce((sum, row) => sum + row.bounced, 0)).toBe((batches * NEW_MESSAGES) / 50);
  });
});

describe('memory store retention: timelines', () => {
  test('a forgotten message takes its timeline along; a late event starts a new one', async () => {
    const store = createMemoryStore({ retention: { messagesMs: DAY } });
    const mailwarden = createMailwarden({ store });
    await mailwarden.applyEvents(PROJECT, [event('m', T0, { type: 'sent' }), event('m', T0 + 1000)]);
    const key = messageKey('sparkpost', 'm', 'm@example.com');
    expect((await store.getMessage(PROJECT, key))?.timeline.map((entry) => entry.type)).toStrictEqual(['sent', 'delivered']);

    expect(await store.purgeExpired(T0 + 2 * DAY)).toBe(1);
    expect(await store.getMessage(PROJECT, key)).toBeUndefined();
    await mailwarden.applyEvents(PROJECT, [event('m', T0 + 2 * DAY, { type: 'opened' })]);
    expect((await store.getMessage(PROJECT, key))?.timeline.map((entry) => entry.type)).toStrictEqual(['opened']);
  });
});
