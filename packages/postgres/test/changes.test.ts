// The PostgreSQL feed beyond what conformance compares (docs/storage.md, "The change feed"): a failing
// batch leaves no change, a concurrent reader never sees a gap, migration 13 on a schema at version 12,
// a store without a feed writes no feed row, the suppressions read by primary key in a project newer than
// the statistics, and the alert windows and outbound leases as SQL holds them.
import {
  createEmailHasher,
  Fact,
  messageKey,
  timelineEntryId,
  type Store,
  type StoredAlertRule,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { createMemoryStore } from '@mailwarden/core';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore, migrate, migrations } from '../src/index.js';
import { connect, freshStore, randomSchema } from './database.js';

const sql = connect({ max: 4 });
afterAll(() => sql.end());

const hashEmail = createEmailHasher();
const T = Date.UTC(2026, 0, 1);
const project = 'acme';

/** An event of message `id` to `recipient` with these facts; its suppression when given. */
function event(
  id: string,
  facts: number,
  at: number,
  { recipient = 'ana@example.com', trackingId = null as string | null, suppression = null as SuppressionRecord | null } = {},
): StoredEvent {
  const key = messageKey('postmark', id, recipient);
  const eventKey = `postmark:${id}:${facts}:${at}`;
  return {
    key: eventKey,
    message: { key, provider: 'postmark', messageId: id, recipient, trackingId, stream: null, facts, firstEventAt: at, lastEventAt: at },
    trackingIdSearchKey: null,
    timelineEntry: {
      id: timelineEntryId(eventKey),
      eventKey,
      type: facts & Fact.hard_bounced ? 'bounced' : facts & Fact.complained ? 'complained' : 'delivered',
      provider: 'postmark',
      occurredAt: at,
    },
    suppression,
  };
}

function hardBounce(id: string, at: number, recipient = 'ana@example.com'): StoredEvent {
  const suppression: SuppressionRecord = {
    hash: hashEmail(recipient),
    email: recipient,
    reason: 'hard_bounce',
    createdAt: at,
    provenance: {
      source: 'webhook',
      at,
      event: { provider: 'postmark', messageId: id, eventId: `${id}${'1'.repeat(32)}`.slice(0, 32), diagnostic: null },
    },
  };
  return event(id, Fact.sent | Fact.hard_bounced, at, { recipient, suppression });
}

describe('the feed in one transaction', () => {
  test('suppressions, statuses and removals appear in order, and listChanges pages through them', async () => {
    const { store, drop } = await freshStore(sql, { changes: {} });
    try {
      const ana = hashEmail('ana@example.com');
      await store.addSuppression(project, { hash: ana, email: 'ana@example.com', reason: 'manual', createdAt: T }, T);
      await store.applyEvents(project, [event('m1', Fact.sent, T + 1), hardBounce('m1', T + 2)], { now: T + 2 });
      await store.removeSuppression(project, ana, undefined, T + 3);
      const page = await store.listChanges(project, { after: 0, limit: 100 });
      expect(page.changes.map(({ seq, kind }) => [seq, kind])).toEqual([
        [1, 'suppression.added'],
        [2, 'message.status_changed'],
        [3, 'suppression.upgraded'],
        [4, 'message.status_changed'],
        [5, 'suppression.removed'],
      ]);
      expect(page.changes[1]).toMatchObject({ from: null, to: 'sent', at: T + 2 });
      expect(page.changes[3]).toMatchObject({ from: 'sent', to: 'bounced', message: { facts: Fact.sent | Fact.hard_bounced } });
      expect(page.changes[2]).toMatchObject({ previous: { reason: 'manual' }, record: { reason: 'hard_bounce' } });
      expect(page).toMatchObject({ next: 5, last: 5 });
      const second = await store.listChanges(project, { after: 2, limit: 2, kinds: ['message.status_changed'] });
      expect(second.changes.map(({ seq }) => seq)).toEqual([4]);
      expect(second).toMatchObject({ next: 5, last: 5 });
    } finally {
      await drop();
    }
  });

  test('a batch that fails in the middle leaves no change and no counter', async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: {} });
    try {
      // A hash the table's CHECK refuses, after a valid event: the whole call rolls back.
      const bad = { ...hardBounce('m2', T + 2), key: 'postmark:bad' };
      bad.suppression = { ...bad.suppression!, hash: 'A'.repeat(64) };
      await expect(store.applyEvents(project, [hardBounce('m1', T + 1), bad], { now: T + 3 })).rejects.toThrow();
      expect(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".changes`)).toEqual([{ n: 0 }]);
      expect(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".change_counters`)).toEqual([{ n: 0 }]);
      expect(await store.listChanges(project, { after: 0, limit: 10 })).toEqual({ changes: [], next: 0, last: 0 });
    } finally {
      await drop();
    }
  });

  test('a store without a feed writes no feed row, and lists an empty page', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const ana = hashEmail('ana@example.com');
      await store.applyEvents(project, [event('m1', Fact.sent, T + 1), hardBounce('m1', T + 2)], { now: T + 2 });
      await store.removeSuppression(project, ana, undefined, T + 3);
      await store.pauseStream(project, 'news', T + 4);
      expect(
        await sql.unsafe(`SELECT (SELECT count(*) FROM "${schema}".changes)::int AS changes,
        (SELECT count(*) FROM "${schema}".change_counters)::int AS counters`),
      ).toEqual([{ changes: 0, counters: 0 }]);
      expect(await store.listChanges(project, { after: 3, limit: 10 })).toEqual({ changes: [], next: 3, last: 0 });
    } finally {
      await drop();
    }
  });
});

describe('a project newer than the statistics', () => {
  // ANALYZE saw only another project, so this one is estimated empty and any index on project_id ties
  // with the primary key: each read of a batch's suppressions must still be one probe of the key, not a
  // scan of the project's list (auto_explain shows the plans of the statements inside the functions).
  test("the feed's merge reads each address through the primary key, set-based and row by row", async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: {} });
    const plans: string[] = [];
    const explained = connect({ max: 1, onnotice: (notice) => void plans.push(String(notice.message)) });
    try {
      const record = (i: number, reason: SuppressionRecord['reason'] = 'manual'): SuppressionRecord => {
        const email = `user${i}@example.com`;
        return { hash: hashEmail(email), email, reason, createdAt: T + i };
      };
      const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
      await store.mergeSuppressions(
        'old',
        range(0, 300).map((i) => record(i)),
        T,
      );
      await sql.unsafe(`ANALYZE "${schema}".suppressions`);
      await store.mergeSuppressions(
        project,
        range(0, 300).map((i) => record(i)),
        T,
      );
      await explained.unsafe(`LOAD 'auto_explain'`);
      await explained.unsafe(
        'SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log',
      );
      const probed = createPostgresStore({ sql: explained, schema, changes: {} });
      // Each address once (the set-based reads), then one twice (row by row): existing and new addresses.
      await probed.mergeSuppressions(
        project,
        range(290, 310).map((i) => record(i, 'hard_bounce')),
        T + 1,
      );
      await probed.mergeSuppressions(project, [record(280, 'complaint'), record(280, 'complaint'), record(320)], T + 2);
      const reads = plans.flatMap((plan) => plan.split('\n').filter((line) => /Scan .* on suppressions\b/.test(line)));
      expect(reads.length).toBeGreaterThan(3);
      for (const read of reads) expect(read).toMatch(/Index Scan using suppressions_pkey on suppressions\b/);
    } finally {
      await explained.end();
      await drop();
    }
  });
});

describe('concurrent feed writes', () => {
  test('a reader polling while two instances write never sees a gap: every seq once, in order', async () => {
    const { schema, drop } = await freshStore(sql);
    const clients = [connect({ max: 2 }), connect({ max: 2 }), connect({ max: 1 })];
    const [first, second, reader] = clients.map((client) => createPostgresStore({ sql: client, schema, changes: {} }));
    try {
      const ROUNDS = 30;
      let writing = true;
      const write = async (store: typeof first, name: string) => {
        for (let round = 0; round < ROUNDS; round++) {
          // Each batch creates two messages (two changes), in one transaction.
          await store!.applyEvents(
            project,
            [event(`${name}-${round}-a`, Fact.sent, T + round), event(`${name}-${round}-b`, Fact.sent, T + round)],
            {
              now: T + round,
            },
          );
        }
      };
      const seen: number[] = [];
      const read = async () => {
        for (;;) {
          const done = !writing;
          const page = await reader!.listChanges(project, { after: seen.at(-1) ?? 0, limit: 7 });
          // The page continues the cursor with no seq missing: a later change never shows before an earlier one.
          expect(page.changes.map(({ seq }) => seq)).toEqual(page.changes.map((_, index) => (seen.at(-1) ?? 0) + index + 1));
          seen.push(...page.changes.map(({ seq }) => seq));
          if (done && page.next === page.last) return;
        }
      };
      const reading = read();
      await Promise.all([write(first, 'one'), write(second, 'two')]);
      writing = false;
      await reading;
      expect(seen).toEqual(Array.from({ length: 4 * ROUNDS }, (_, index) => index + 1));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
      await drop();
    }
  });
});

describe('migration 13 on a schema at version 12', () => {
  test('keeps every row; the feed starts at 1 and a new endpoint at the latest seq', async () => {
    const schema = randomSchema();
    const names = { identifier: `"${schema}"`, literal: `'${schema}'` };
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`CREATE SCHEMA "${schema}"`);
        await tx.unsafe(`CREATE TABLE "${schema}".mailwarden_migrations (
          version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
        for (const migration of migrations.filter(({ version }) => version <= 12)) {
          await tx.unsafe(migration.sql(names));
          await tx.unsafe(`INSERT INTO "${schema}".mailwarden_migrations (version, name) VALUES ($1, $2)`, [
            migration.version,
            migration.name,
          ]);
        }
        await tx.unsafe(
          `INSERT INTO "${schema}".suppressions (project_id, hash, email, reason, created_at, source, source_at, stream)
           SELECT 'acme', lpad(to_hex(i), 64, '0'), 'user' || i || '@example.com', 1 + i % 3, $1::bigint + i, 'api', $1::bigint + i, ''
           FROM generate_series(1, 20) AS i`,
          [T],
        );
      });
      const before = await sql.unsafe(`SELECT * FROM "${schema}".suppressions ORDER BY hash`);
      expect((await migrate(sql, { schema })).applied).toStrictEqual([13, 14]);
      expect(await sql.unsafe(`SELECT * FROM "${schema}".suppressions ORDER BY hash`)).toStrictEqual(before);
      const store = createPostgresStore({ sql, schema, changes: {} });
      // A suppression there before the feed: its removal is the feed's first change.
      await store.removeSuppression(project, `${'0'.repeat(63)}1`, undefined, T + 100);
      const page = await store.listChanges(project, { after: 0, limit: 10 });
      expect(page.changes).toMatchObject([{ seq: 1, kind: 'suppression.removed', at: T + 100, record: { email: 'user1@example.com' } }]);
      expect(await store.leaseOutbound(project, 'crm', 'one', T, T + 1000)).toMatchObject({ cursor: 1, failures: 0 });
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});

describe('alert windows and retention as SQL keeps them', () => {
  test('a full window reuses the oldest slot; an empty window is not kept', async () => {
    const { schema, store, drop } = await freshStore(sql);
    const rule: StoredAlertRule = {
      window: 3,
      minMessages: 1,
      bounce: { firePpm: 500_000, resolvePpm: 400_000 },
      complaint: { firePpm: 1_000, resolvePpm: 800 },
      trackingIds: false,
      pause: ['news'],
    };
    try {
      const events = ['a', 'b', 'c', 'd'].map((id, index) => event(id, Fact.sent | Fact.delivered, T + index));
      await store.applyEvents(project, events, { now: T, alerts: rule });
      // An event of a message that is in no window (made before alerts) moves nothing, and makes no window.
      await store.applyEvents(project, [event('old', Fact.sent, T, { trackingId: 'promo' })], { now: T });
      await store.applyEvents(project, [hardBounce('old', T + 9)], { now: T, alerts: { ...rule, trackingIds: true } });
      const slots = await sql.unsafe(`SELECT scope, slot, message_key, flags FROM "${schema}".alert_window_slots ORDER BY slot`);
      expect(slots.map(({ slot, message_key }) => [slot, message_key])).toEqual([
        [0, events[3]!.message!.key],
        [1, events[1]!.message!.key],
        [2, events[2]!.message!.key],
      ]);
      expect(await sql.unsafe(`SELECT scope, messages, head FROM "${schema}".alert_windows`)).toEqual([
        { scope: '', messages: 3, head: 1 },
      ]);
      expect(await store.listPausedStreams(project)).toEqual([]);
    } finally {
      await drop();
    }
  });

  test('a window whose rule shrank keeps its latest messages; a message held that comes back is not held twice', async () => {
    const { schema, store, drop } = await freshStore(sql);
    const rule = (window: number): StoredAlertRule => ({
      window,
      minMessages: 100,
      bounce: { firePpm: 500_000, resolvePpm: 400_000 },
      complaint: { firePpm: 1_000, resolvePpm: 800 },
      trackingIds: false,
      pause: [],
    });
    const windowOf = async () => (await store.getAlertWindows(project, [null]))[0];
    const slotsOf = async () =>
      (await sql.unsafe(`SELECT slot, message_key FROM "${schema}".alert_window_slots ORDER BY slot`)).map(({ slot, message_key }) => [
        slot,
        message_key,
      ]);
    try {
      const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((id, index) =>
        id === 'b' ? hardBounce(id, T + index) : event(id, Fact.sent | Fact.delivered, T + index),
      );
      await store.applyEvents(project, [a!, b!, c!, d!], { now: T, alerts: rule(3) });
      expect(await windowOf()).toMatchObject({ messages: 3, bounced: 1 });
      // Size 2: b (bounced) leaves with its count, c and d stay; then e pushes c out.
      await store.applyEvents(project, [e!], { now: T, alerts: rule(2) });
      expect(await windowOf()).toMatchObject({ messages: 2, bounced: 0 });
      expect(await slotsOf()).toEqual([
        [0, e!.message!.key],
        [1, d!.message!.key],
      ]);
      // Retention forgot d; a complaint makes it anew: it counts in its slot, and enters no other.
      await sql.unsafe(`DELETE FROM "${schema}".messages WHERE key = $1`, [d!.message!.key]);
      const complaint = event('d', Fact.sent | Fact.complained, T + 9);
      await store.applyEvents(project, [complaint], { now: T, alerts: rule(2) });
      expect(await windowOf()).toMatchObject({ messages: 2, bounced: 0, complained: 1 });
      expect(await slotsOf()).toEqual([
        [0, e!.message!.key],
        [1, d!.message!.key],
      ]);
    } finally {
      await drop();
    }
  });

  test('a batch whose messages entering push out a message that gains a flag in it counts as the memory store does', async () => {
    // The batch path of mailwarden_apply_alerts writes slots after its walk: a gain before the message
    // leaves counts and leaves with it, one after counts nowhere, two gains stay and leave together.
    const { store, drop } = await freshStore(sql, { changes: {} });
    const memory = createMemoryStore({ changes: {} });
    const rule: StoredAlertRule = {
      window: 3,
      minMessages: 1,
      bounce: { firePpm: 500_000, resolvePpm: 400_000 },
      complaint: { firePpm: 300_000, resolvePpm: 200_000 },
      trackingIds: false,
      pause: [],
    };
    const complaint = (id: string, at: number) => event(id, Fact.sent | Fact.complained, at);
    const delivered = (id: string, at: number) => event(id, Fact.sent | Fact.delivered, at);
    const batches = [
      [delivered('a', T), delivered('b', T + 1), delivered('c', T + 2)],
      [complaint('a', T + 3), delivered('d', T + 4)],
      [delivered('e', T + 5), complaint('b', T + 6)],
      [hardBounce('c', T + 7), complaint('c', T + 8), delivered('f', T + 9)],
      // Two gains of a message held from before, kept by its slot until a later batch pushes it out.
      [hardBounce('d', T + 10), complaint('d', T + 11)],
      [delivered('g', T + 12)],
    ];
    try {
      for (const batch of batches) {
        await store.applyEvents(project, batch, { now: T, alerts: rule });
        await memory.applyEvents(project, batch, { now: T, alerts: rule });
        expect(await store.getAlertWindows(project, [null])).toEqual(await memory.getAlertWindows(project, [null]));
      }
      const alertsOf = async (of: Store) =>
        (await of.listChanges(project, { after: 0, limit: 1000, kinds: ['alert.bounce_rate', 'alert.complaint_rate'] })).changes;
      expect(await alertsOf(store)).toEqual(await alertsOf(memory));
      expect((await alertsOf(store)).length).toBeGreaterThan(0);
    } finally {
      await drop();
    }
  });

  test('retention deletes the oldest changes up to the first one kept, and a cursor before them expires', async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: { maxLength: 3, maxAgeMs: 1000 } });
    try {
      for (let n = 0; n < 6; n++) await store.pauseStream(project, `s${n}`, T + n * 100);
      await store.purgeExpired(T + 100);
      // The last 3 are kept by length; by age, nothing is older than T + 100 - 1000.
      expect(await sql.unsafe(`SELECT trimmed::int FROM "${schema}".change_counters`)).toEqual([{ trimmed: 3 }]);
      await expect(store.listChanges(project, { after: 2, limit: 10 })).rejects.toMatchObject({ code: 'change_cursor_expired' });
      expect((await store.listChanges(project, { after: 3, limit: 10 })).changes.map(({ seq }) => seq)).toEqual([4, 5, 6]);
      await store.purgeExpired(T + 1450);
      // At T + 1450, those before T + 450 are too old: seq 4 and 5 (at T + 300 and T + 400).
      await expect(store.listChanges(project, { after: 4, limit: 10 })).rejects.toMatchObject({ code: 'change_cursor_expired' });
      expect(await store.listChanges(project, { after: 5, limit: 10 })).toMatchObject({ changes: [{ seq: 6 }], next: 6, last: 6 });
    } finally {
      await drop();
    }
  });
});
