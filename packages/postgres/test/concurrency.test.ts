// Several app instances (each its own postgres.js client) hammering the same addresses and messages at
// once: the end state must be one the model allows, with exact counters and no duplicate rows.
import { providers, type SuppressionReason } from '@mailwarden/core';
import { createEmailHasher, Fact, messageKey, strongerReason, type EventOutcome, type StoredEvent } from '@mailwarden/core/store';
import { createStoreModel } from '@mailwarden/store-test-suite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { connect, freshStore } from './database.js';

const INSTANCES = 4;
const sql = connect();
const clients = Array.from({ length: INSTANCES }, () => connect({ max: 3 }));
let schema: string;
let drop: () => Promise<void>;
let stores: ReturnType<typeof createPostgresStore>[];

beforeAll(async () => {
  ({ schema, drop } = await freshStore(sql));
  stores = clients.map((client) => createPostgresStore({ sql: client, schema }));
});
afterAll(async () => {
  await drop();
  await Promise.all([...clients, sql].map((client) => client.end()));
});

/** Reproducible pseudo-random numbers (mulberry32). */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    int: (below: number) => Math.floor(next() * below),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}

const hashEmail = createEmailHasher();
const T = Date.UTC(2025, 0, 1);
const addresses = ['ana@example.com', 'bo@example.org', 'chen@example.net', 'dara@example.com', 'eli@example.io'];
const reasons: SuppressionReason[] = ['manual', 'hard_bounce', 'complaint'];
const facts = Object.values(Fact);

/** Runs every instance's work at once, each instance `lanes` calls at a time. */
async function everyInstanceAtOnce<Result>(work: ((store: (typeof stores)[number]) => Promise<Result>)[][], lanes = 2) {
  return Promise.all(
    work.map(async (calls, instance) => {
      const results: Result[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          while (next < calls.length) {
            const call = calls[next++]!;
            results.push(await call(stores[instance]!));
          }
        }),
      );
      return results;
    }),
  );
}

/** Deadlocks PostgreSQL detected in this database so far (statistics are flushed within a second). */
async function deadlocks(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const [row] = await sql.unsafe('SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()');
  return row!.n;
}

async function noDuplicateRows(projectId: string) {
  const keys = { suppressions: '(stream, hash)', messages: 'key', tracking_ids: 'tracking_id', event_keys: 'key' };
  for (const [table, key] of Object.entries(keys)) {
    const [row] = await sql.unsafe(
      `SELECT count(*)::int AS rows, count(DISTINCT ${key})::int AS keys FROM "${schema}".${table} WHERE project_id = $1`,
      [projectId],
    );
    expect(row!.rows, table).toBe(row!.keys);
  }
}

describe('concurrent instances', () => {
  test('overlapping event batches from every instance: each event applied once, state and counters exact', async () => {
    const projectId = 'events';
    const rng = random(42);
    const identities = Array.from({ length: 12 }, (_, i) => {
      const provider = providers[i % providers.length]!;
      const recipient = addresses[i % addresses.length]!;
      return { key: messageKey(provider, `message-${i}`, recipient), provider, messageId: `message-${i}`, recipient };
    });
    // Mostly each message's own ID; sometimes none, sometimes a smaller one (a sender error that moves
    // the message and its counts to another row while other instances count on both rows).
    const trackingIdOf = (i: number) => (rng.chance(0.15) ? null : i < 3 && rng.chance(0.1) ? 'a-smaller' : `campaign-${i % 4}`);
    const events: StoredEvent[] = Array.from({ length: 600 }, (_, index) => {
      const i = rng.int(identities.length);
      const identity = identities[i]!;
      const trackingId = trackingIdOf(i);
      const time = T + rng.int(50) * 1000;
      const suppress = rng.chance(0.15);
      return {
        key: `event-${index}`,
        message: {
          ...identity,
          trackingId,
          stream: null,
          facts: rng.pick(facts) | (rng.chance(0.3) ? rng.pick(facts) : 0),
          firstEventAt: time,
          lastEventAt: time,
        },
        trackingIdSearchKey: trackingId?.toLowerCase() ?? null,
        suppression: suppress
          ? { hash: hashEmail(identity.recipient), email: identity.recipient, reason: rng.pick(reasons), createdAt: time }
          : null,
      };
    });
    // Every event goes to one to three instances, in batches of 1 to 40, each instance in its own order.
    const perInstance: StoredEvent[][] = Array.from({ length: INSTANCES }, () => []);
    for (const event of events) {
      const copies = 1 + rng.int(3);
      for (let copy = 0; copy < copies; copy++) perInstance[rng.int(INSTANCES)]!.push(event);
    }
    const work = perInstance.map((assigned) => {
      const shuffled = [...assigned].sort(() => rng.int(3) - 1);
      const batches: StoredEvent[][] = [];
      for (let start = 0; start < shuffled.length; ) {
        const size = 1 + rng.int(40);
        batches.push(shuffled.slice(start, start + size));
        start += size;
      }
      return batches.map((batch) => async (store: (typeof stores)[number]) => ({
        batch,
        outcomes: await store.applyEvents(projectId, batch),
      }));
    });

    const deadlocksBefore = await deadlocks();
    const results = (await everyInstanceAtOnce(work, 3)).flat();

    // Every batch takes its row locks table by table, each in key order: no deadlock to retry.
    expect(await deadlocks()).toBe(deadlocksBefore);

    // Each key seen anywhere was applied exactly once in total.
    const applied = new Map<string, number>();
    const changes = new Map<string, EventOutcome[]>();
    for (const { batch, outcomes } of results) {
      batch.forEach((event, index) => {
        const outcome = outcomes[index]!;
        if (outcome !== 'duplicate') applied.set(event.key, (applied.get(event.key) ?? 0) + 1);
        if (outcome !== 'duplicate' && outcome !== 'applied')
          changes.set(event.suppression!.hash, [...(changes.get(event.suppression!.hash) ?? []), outcome]);
      });
    }
    const delivered = new Set(perInstance.flat().map((event) => event.key));
    expect([...applied.keys()].sort()).toStrictEqual([...delivered].sort());
    expect([...applied.values()].every((count) => count === 1)).toBe(true);

    // The end state is that of applying each event once, in any order (merges are joins).
    const model = createStoreModel();
    await model.applyEvents(
      projectId,
      events.filter((event) => delivered.has(event.key)),
    );
    const state = async (store: typeof model) => ({
      messages: await store.listMessages(projectId, { limit: 1000 }),
      trackingIds: await store.listTrackingIds(projectId, { limit: 1000 }),
      suppressions: await store.listSuppressions(projectId, { limit: 1000 }),
    });
    expect(await state(stores[0]!)).toStrictEqual(await state(model));

    // What the instances reported of each address: one of them suppressed it, each upgrade from a
    // distinct weaker reason: the hooks fire once per change however the batches raced.
    const suppressed = (await state(model)).suppressions;
    expect([...changes.keys()].sort()).toStrictEqual(suppressed.map((record) => record.hash).sort());
    for (const record of suppressed) {
      const reported = changes.get(record.hash)!;
      expect(
        reported.filter((outcome) => outcome === 'suppressed'),
        record.email,
      ).toHaveLength(1);
      const from = reported.filter((outcome) => outcome !== 'suppressed').map((outcome) => outcome.slice('upgraded_from_'.length));
      expect(new Set(from).size, record.email).toBe(from.length);
      expect(
        from.every((reason) => strongerReason(reason as SuppressionReason, record.reason) === record.reason && reason !== record.reason),
      ).toBe(true);
    }

    // Through SQL: counters equal what the messages say, and every table has one row per key.
    const counters = await sql.unsafe(
      `SELECT t.tracking_id, t.messages = count(m.key) AS messages_exact,
              t.delivered = count(*) FILTER (WHERE m.facts & 4 <> 0) AS delivered_exact,
              t.bounced = count(*) FILTER (WHERE m.facts & 24 <> 0) AS bounced_exact,
              t.complained = count(*) FILTER (WHERE m.facts & 32 <> 0) AS complained_exact,
              t.last_event_at = max(m.last_event_at) AS last_exact
       FROM "${schema}".tracking_ids t
       LEFT JOIN "${schema}".messages m ON m.project_id = t.project_id AND m.tracking_id = t.tracking_id
       WHERE t.project_id = $1 GROUP BY t.tracking_id, t.messages, t.delivered, t.bounced, t.complained, t.last_event_at
       ORDER BY t.tracking_id`,
      [projectId],
    );
    expect(counters.map((row) => row.tracking_id)).toStrictEqual(['a-smaller', 'campaign-0', 'campaign-1', 'campaign-2', 'campaign-3']);
    for (const row of counters) {
      expect(row, row.tracking_id).toStrictEqual({
        tracking_id: row.tracking_id,
        messages_exact: true,
        delivered_exact: true,
        bounced_exact: true,
        complained_exact: true,
        last_exact: true,
      });
    }
    await noDuplicateRows(projectId);
    const [row] = await sql.unsafe(`SELECT count(*)::int AS keys FROM "${schema}".event_keys WHERE project_id = $1`, [projectId]);
    expect(row!.keys).toBe(delivered.size);
  });

  test('adds and removes of the same addresses: every success is accounted for, the survivor is one that was created', async () => {
    const projectId = 'adds-and-removes';
    const rng = random(7);
    type Call =
      | { kind: 'add'; hash: string; record: { hash: string; email: string; reason: SuppressionReason; createdAt: number } }
      | { kind: 'remove'; hash: string };
    const work = stores.map(() =>
      Array.from({ length: 150 }, () => {
        const email = rng.pick(addresses);
        const hash = hashEmail(email);
        const call: Call = rng.chance(0.55)
          ? { kind: 'add', hash, record: { hash, email, reason: rng.pick(reasons), createdAt: T + rng.int(1000) } }
          : { kind: 'remove', hash };
        return async (store: (typeof stores)[number]) =>
          call.kind === 'add'
            ? { call, created: (await store.addSuppression(projectId, call.record)).created }
            : { call, removed: await store.removeSuppression(projectId, call.hash) };
      }),
    );

    const results = (await everyInstanceAtOnce(work, 3)).flat();

    for (const email of addresses) {
      const hash = hashEmail(email);
      const mine = results.filter((result) => result.call.hash === hash);
      const creations = mine.filter((result) => 'created' in result && result.created);
      const removals = mine.filter((result) => 'removed' in result && result.removed);
      const present = await stores[0]!.getSuppression(projectId, hash);
      // Each successful add made the row exist, each successful remove made it not: they alternate.
      expect(creations.length - removals.length, email).toBe(present === undefined ? 0 : 1);
      if (present !== undefined) {
        expect(creations.map((result) => (result.call as Extract<Call, { kind: 'add' }>).record)).toContainEqual(present);
      }
    }
    await noDuplicateRows(projectId);
  });

  test('adds racing event upserts: at most one add creates; the reason is the strongest, the time the earliest', async () => {
    const projectId = 'adds-and-events';
    const rng = random(99);
    type Outcome =
      | { kind: 'add'; record: { hash: string; email: string; reason: SuppressionReason; createdAt: number }; created: boolean }
      | { kind: 'events'; events: StoredEvent[]; outcomes: string[] };
    let eventNumber = 0;
    const work = stores.map(() =>
      Array.from({ length: 60 }, () => {
        if (rng.chance(0.5)) {
          const email = rng.pick(addresses);
          const record = { hash: hashEmail(email), email, reason: rng.pick(reasons), createdAt: T + rng.int(1000) };
          return async (store: (typeof stores)[number]): Promise<Outcome> => ({
            kind: 'add',
            record,
            created: (await store.addSuppression(projectId, record)).created,
          });
        }
        const events: StoredEvent[] = Array.from({ length: 1 + rng.int(5) }, () => {
          const email = rng.pick(addresses);
          return {
            key: `event-${eventNumber++}`,
            message: null,
            trackingIdSearchKey: null,
            suppression: { hash: hashEmail(email), email, reason: rng.pick(reasons), createdAt: T + rng.int(1000) },
          };
        });
        return async (store: (typeof stores)[number]): Promise<Outcome> => ({
          kind: 'events',
          events,
          outcomes: await store.applyEvents(projectId, events),
        });
      }),
    );

    const results = (await everyInstanceAtOnce(work, 3)).flat();

    for (const email of addresses) {
      const hash = hashEmail(email);
      const created = results.flatMap((result) =>
        result.kind === 'add' && result.created && result.record.hash === hash ? [result.record] : [],
      );
      const upserts = results.flatMap((result) =>
        result.kind === 'events' ? result.events.flatMap((event) => (event.suppression?.hash === hash ? [event.suppression] : [])) : [],
      );
      expect(created.length, email).toBeLessThanOrEqual(1);
      const contributions = [...created, ...upserts];
      if (contributions.length === 0) continue;
      const rank = (reason: SuppressionReason) => reasons.indexOf(reason);
      expect(await stores[1]!.getSuppression(projectId, hash)).toStrictEqual({
        hash,
        email,
        reason: contributions.map((record) => record.reason).sort((a, b) => rank(b) - rank(a))[0],
        createdAt: Math.min(...contributions.map((record) => record.createdAt)),
      });
    }
    await noDuplicateRows(projectId);
  });

  test('merges and events into several lists at once: one suppressed per address and list, each list its own join', async () => {
    const projectId = 'lists-at-once';
    const rng = random(23);
    const lists = [undefined, 'marketing', 'news'] as const;
    const record = () => {
      const email = rng.pick(addresses);
      const stream = rng.pick(lists);
      return {
        hash: hashEmail(email),
        email,
        reason: rng.pick(reasons),
        createdAt: T + rng.int(1000),
        ...(stream === undefined ? {} : { stream }),
      };
    };
    type Written = { records: ReturnType<typeof record>[]; outcomes: string[] };
    let eventNumber = 0;
    const work = stores.map(() =>
      Array.from({ length: 50 }, () => {
        const records = Array.from({ length: 1 + rng.int(6) }, record);
        if (rng.chance(0.5)) {
          return async (store: (typeof stores)[number]): Promise<Written> => ({
            records,
            outcomes: await store.mergeSuppressions(projectId, records),
          });
        }
        const events: StoredEvent[] = records.map((suppression) => ({
          key: `event-${eventNumber++}`,
          message: null,
          trackingIdSearchKey: null,
          suppression,
        }));
        return async (store: (typeof stores)[number]): Promise<Written> => ({
          records,
          outcomes: await store.applyEvents(projectId, events),
        });
      }),
    );

    const deadlocksBefore = await deadlocks();
    const results = (await everyInstanceAtOnce(work, 3)).flat();
    expect(await deadlocks()).toBe(deadlocksBefore);

    const rank = (reason: SuppressionReason) => reasons.indexOf(reason);
    for (const stream of lists) {
      const listed = await stores[2]!.listSuppressions(projectId, { limit: 100, ...(stream === undefined ? {} : { stream }) });
      for (const email of addresses) {
        const hash = hashEmail(email);
        const mine = results.flatMap(({ records, outcomes }) =>
          records.flatMap((written, i) => (written.hash === hash && written.stream === stream ? [{ written, outcome: outcomes[i] }] : [])),
        );
        const stored = listed.find((entry) => entry.hash === hash);
        if (mine.length === 0) {
          expect(stored, `${email} in ${stream}`).toBeUndefined();
          continue;
        }
        expect(
          mine.filter(({ outcome }) => outcome === 'suppressed'),
          `${email} in ${stream}`,
        ).toHaveLength(1);
        expect(stored).toStrictEqual({
          hash,
          email,
          reason: mine.map(({ written }) => written.reason).sort((a, b) => rank(b) - rank(a))[0],
          createdAt: Math.min(...mine.map(({ written }) => written.createdAt)),
          ...(stream === undefined ? {} : { stream }),
        });
      }
    }
    await noDuplicateRows(projectId);
  });
});
