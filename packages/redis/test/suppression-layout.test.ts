// The Redis suppression layout at its edges, read through raw commands: the order blocks under any
// adds, merges and removes (against the model), addresses of any text and length, and the upgrade of
// projects that the release before the blocks wrote (a 64-hex HASH field per suppression and the `so`
// ZSET), stopped and resumed anywhere, on Redis and on Redis Cluster.
import { randomUUID } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import { createEmailHasher, packProvenance, reasonRank, timelineEntryId, type SuppressionRecord } from '@mailwarden/core/store';
import { createStoreModel } from '@mailwarden/store-test-suite';
import fc from 'fast-check';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore, type RedisStore } from '../src/index.js';
import { SUPPRESSION_BLOCK_MAX, suppressionMember } from '../src/layout.js';
import { UPGRADE_PER_CALL } from '../src/redis-store.js';
import * as scripts from '../src/generated/scripts.js';
import { clusterClient } from './cluster-client.js';

const T0 = Date.UTC(2025, 0, 1);
const hashEmail = createEmailHasher();
const raw = new Redis(inject('redisUrl'));
const client = new Redis(inject('redisUrl'));
const cluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([raw.quit(), client.quit(), cluster.quit()]));

const servers: [string, () => Redis | Cluster][] = [
  ['Redis', () => client],
  ['Redis Cluster', () => cluster],
];

function fresh() {
  const keyPrefix = `layout:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return { keyPrefix, projectId, tag: `${keyPrefix}{${projectId}}:` };
}

const reasons = ['manual', 'hard_bounce', 'complaint'] as const;

/** Suppression `i` of a test: its own address, a reason and a time from small domains, so times tie. */
function record(i: number, reason: SuppressionRecord['reason'], createdAt: number, email = `user-${i}@example.com`): SuppressionRecord {
  return { hash: hashEmail(email), email, reason, createdAt };
}

/** The order prefix of the release before the blocks: 17 digits, newest first (written independently of src/layout.ts). */
function legacyOrder(time: number): string {
  return time >= 0
    ? `0${(BigInt(Number.MAX_SAFE_INTEGER) - BigInt(time)).toString().padStart(16, '0')}`
    : `1${(-time).toString().padStart(16, '0')}`;
}

/**
 * Writes suppressions as the release before the order blocks did (its addSuppression script, as raw
 * commands): HASH field the 64-hex hash → `<rank><createdAt>:<email>[\0<provenance>]`, and the member
 * `<order><hash>` in the ZSET `so`, scores 0.
 */
async function writeLegacy(redis: Redis | Cluster, tag: string, records: readonly SuppressionRecord[]): Promise<void> {
  for (let from = 0; from < records.length; from += 1000) {
    const pipeline = redis.pipeline();
    for (const r of records.slice(from, from + 1000)) {
      const value = `${reasonRank(r.reason)}${r.createdAt}:${r.email}`;
      pipeline.hset(`${tag}s`, r.hash, r.provenance === undefined ? value : `${value}\0${packProvenance(r.provenance)}`);
      pipeline.zadd(`${tag}so`, 0, legacyOrder(r.createdAt) + r.hash);
    }
    for (const [error] of (await pipeline.exec())!) if (error) throw error;
  }
}

/** One call of the upgrade script with `count` per call, as the store makes it. Returns how many remain. */
async function upgradeStep(redis: Redis | Cluster, tag: string, count: number): Promise<number> {
  return Number(await redis.eval(scripts.upgradeSuppressions.lua, 3, `${tag}s`, `${tag}sk`, `${tag}so`, count));
}

/** Every suppression of a project through the listing, `pageSize` at a time. */
async function walk(
  store: Store,
  projectId: string,
  pageSize: number,
  query: { reason?: SuppressionRecord['reason']; from?: number; to?: number } = {},
) {
  const all: SuppressionRecord[] = [];
  for (;;) {
    const last = all.at(-1);
    const page = await store.listSuppressions(projectId, {
      ...query,
      limit: pageSize,
      ...(last && { after: { createdAt: last.createdAt, hash: last.hash } }),
    });
    all.push(...page);
    if (page.length < pageSize) return all;
  }
}

/**
 * The layout's invariants, by raw commands on the project's node: blocks named by heads, the first
 * head '' and the only one that may be empty, each block a listpack of at most SUPPRESSION_BLOCK_MAX
 * members inside its range; block members and old-layout members together are the suppressions
 * `expected`, each once, and the HASH has one field per suppression (binary 30 bytes, or its 64-hex
 * hash while not upgraded).
 */
async function expectLayout(redis: Redis | Cluster, tag: string, expected: readonly SuppressionRecord[]): Promise<void> {
  const heads = (await redis.zrangeBuffer(`${tag}sk`, 0, -1)) as Buffer[];
  const members: Buffer[] = [];
  if (heads.length > 0) expect(heads[0]!.length).toBe(0);
  for (const [i, head] of heads.entries()) {
    const block = Buffer.concat([Buffer.from(`${tag}sb:`), head]);
    const inBlock = (await redis.zrangeBuffer(block, 0, -1)) as Buffer[];
    if (i > 0) expect(inBlock.length).toBeGreaterThan(0);
    expect(inBlock.length).toBeLessThanOrEqual(SUPPRESSION_BLOCK_MAX);
    if (inBlock.length > 0) expect(await redis.call('OBJECT', 'ENCODING', block)).toBe('listpack');
    for (const member of inBlock) {
      expect(Buffer.compare(member, head)).toBeGreaterThanOrEqual(0);
      if (heads[i + 1]) expect(Buffer.compare(member, heads[i + 1]!)).toBeLessThan(0);
    }
    members.push(...inBlock);
  }
  const legacy = await redis.zrange(`${tag}so`, 0, -1);
  const fields = ((await redis.callBuffer('HKEYS', `${tag}s`)) as Buffer[]).map((field) =>
    field.length === 30 ? field.toString('hex') : field.toString(),
  );
  const upgraded = new Set(members.map((member) => member.toString('hex')));
  const notUpgraded = new Set(legacy);
  expect(upgraded.size + notUpgraded.size).toBe(expected.length);
  expect(fields).toHaveLength(expected.length);
  for (const r of expected) {
    const member = suppressionMember(r.createdAt, r.hash).toString('hex');
    if (upgraded.has(member)) expect(fields).toContain(r.hash.slice(0, 60));
    else {
      expect(notUpgraded.has(legacyOrder(r.createdAt) + r.hash), `${r.email} is in neither layout`).toBe(true);
      expect(fields).toContain(r.hash);
    }
  }
}

/** The store's answers equal the model's: every check, one batch check, and listings walked in pages. */
async function expectSameAnswers(
  store: Store,
  model: Store,
  projectId: string,
  hashes: readonly string[],
  pageSize: number,
): Promise<void> {
  expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(await model.getSuppressions(projectId, hashes));
  expect(await walk(store, projectId, pageSize)).toStrictEqual(await walk(model, projectId, 1000));
  const query = { reason: 'hard_bounce' as const, from: T0 + 3, to: T0 + 9 };
  expect(await walk(store, projectId, pageSize, query)).toStrictEqual(await walk(model, projectId, 1000, query));
}

/** A store that never starts an upgrade: closed, it still reads (the client is the caller's). */
async function readingStore(redis: Redis | Cluster, keyPrefix: string, scanBudget?: number): Promise<RedisStore> {
  const store = createRedisStore({ client: redis, keyPrefix, ...(scanBudget && { scanBudget }) });
  await store.close();
  return store;
}

describe('order blocks', () => {
  type Step =
    | { kind: 'merge'; records: [number, number, number][] }
    | { kind: 'add'; record: [number, number, number] }
    | { kind: 'remove'; indexes: number[] }
    | { kind: 'upgrade'; count: number };
  const ADDRESSES = 400;
  const recordOf = ([i, reason, time]: [number, number, number]) => record(i, reasons[reason]!, T0 + time);
  const arbitraryRecord = fc.tuple(fc.nat(ADDRESSES - 1), fc.nat(2), fc.nat(12));
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('merge' as const), records: fc.array(arbitraryRecord, { maxLength: 300, size: 'max' }) }),
    fc.record({ kind: fc.constant('add' as const), record: arbitraryRecord }),
    fc.record({ kind: fc.constant('remove' as const), indexes: fc.array(fc.nat(ADDRESSES - 1), { maxLength: 250, size: 'max' }) }),
    fc.record({ kind: fc.constant('upgrade' as const), count: fc.integer({ min: 1, max: 150 }) }),
  );

  /** Runs the steps on a project that starts with `legacy` in the old layout, checking after each. */
  async function run(legacy: [number, number, number][], steps: Step[], pageSize: number): Promise<void> {
    const { keyPrefix, projectId, tag } = fresh();
    const model = createStoreModel();
    // A filtered listing resumes every 3 entries read, so its pages are stitched across both layouts.
    const store = await readingStore(client, keyPrefix, 3);
    const hashes = Array.from({ length: ADDRESSES }, (_, i) => record(i, 'manual', 0).hash);
    // The old layout held one record per address: the model merges them as they were stored.
    const seeded = new Map(legacy.map((r) => [r[0], recordOf(r)]));
    await writeLegacy(raw, tag, [...seeded.values()]);
    for (const r of seeded.values()) await model.addSuppression(projectId, r);
    for (const s of steps) {
      if (s.kind === 'merge') {
        const records = s.records.map(recordOf);
        expect(await store.mergeSuppressions(projectId, records)).toStrictEqual(await model.mergeSuppressions(projectId, records));
      } else if (s.kind === 'add') {
        expect(await store.addSuppression(projectId, recordOf(s.record))).toStrictEqual(
          await model.addSuppression(projectId, recordOf(s.record)),
        );
      } else if (s.kind === 'remove') {
        const removing = s.indexes.map((i) => hashes[i]!);
        expect(await store.removeSuppressions(projectId, removing)).toStrictEqual(await model.removeSuppressions(projectId, removing));
      } else {
        await upgradeStep(raw, tag, s.count);
      }
      await expectLayout(raw, tag, await walk(model, projectId, 1000));
    }
    await expectSameAnswers(store, model, projectId, hashes, pageSize);
    // Then upgraded whole, by a store: the same answers, from the blocks alone.
    await createRedisStore({ client, keyPrefix }).upgradeSuppressions(projectId);
    expect(await raw.exists(`${tag}so`)).toBe(0);
    await expectLayout(raw, tag, await walk(model, projectId, 1000));
    await expectSameAnswers(createRedisStore({ client, keyPrefix }), model, projectId, hashes, pageSize);
  }

  test('any adds, merges, removes and upgrade steps, from any old layout, keep blocks in shape and every answer the model’s', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbitraryRecord, { maxLength: 300, size: 'max' }),
        fc.array(step, { maxLength: 8 }),
        fc.integer({ min: 1, max: 60 }),
        run,
      ),
      {
        numRuns: 40,
        examples: [
          // Pinned: 300 old suppressions in one time, half upgraded; then 300 merges that move most of
          // them earlier (a remove and an add in the blocks, splitting full ones), removes across both
          // layouts, and the rest of the upgrade in small steps.
          [
            Array.from({ length: 300 }, (_, i): [number, number, number] => [i, i % 3, 12]),
            [
              { kind: 'upgrade', count: 150 },
              { kind: 'merge', records: Array.from({ length: 300 }, (_, i): [number, number, number] => [(i * 7) % ADDRESSES, 2, i % 12]) },
              { kind: 'remove', indexes: Array.from({ length: 120 }, (_, i) => i * 3) },
              { kind: 'upgrade', count: 7 },
              { kind: 'add', record: [399, 0, 0] },
              { kind: 'upgrade', count: 150 },
            ],
            7,
          ],
        ],
      },
    );
  });

  test('suppressions arriving newest first fill whole blocks; any other order splits them in halves', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const count = 4 * SUPPRESSION_BLOCK_MAX;
    for (let i = 0; i < count; i++) await store.addSuppression(projectId, record(i, 'manual', T0 + i));
    const heads = await raw.zrangeBuffer(`${tag}sk`, 0, -1);
    const sizes = await Promise.all(heads.map((head) => raw.zcard(Buffer.concat([Buffer.from(`${tag}sb:`), head]))));
    // The newest block takes each new one; a full one moves whole behind it.
    expect(sizes).toStrictEqual([SUPPRESSION_BLOCK_MAX, SUPPRESSION_BLOCK_MAX, SUPPRESSION_BLOCK_MAX, SUPPRESSION_BLOCK_MAX]);
    // One more in the middle of a full block: it splits in halves.
    await store.addSuppression(projectId, record(count, 'manual', T0 + 1.5 * SUPPRESSION_BLOCK_MAX));
    expect((await raw.zcard(`${tag}sk`)) - heads.length).toBe(1);
    const records = Array.from({ length: count }, (_, i) => record(i, 'manual', T0 + i));
    await expectLayout(raw, tag, [...records, record(count, 'manual', T0 + 1.5 * SUPPRESSION_BLOCK_MAX)]);
    // Removed, every block goes, and the heads with them.
    await store.removeSuppressions(
      projectId,
      [...records, record(count, 'manual', 0)].map((r) => r.hash),
    );
    expect(await raw.exists(`${tag}sk`, `${tag}s`, `${tag}sb:`)).toBe(0);
  });
});

describe('addresses of any text and length', () => {
  const emails = [
    'josé.müller@exämple.de',
    '用户@例子.中国',
    'ünïcödé+🎉tag@xn--bcher-kva.example',
    `${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(50)}.com`,
    'a@b.c',
  ];

  test.each(servers)('on %s, in both layouts, are checked, listed and removed exactly, with their provenance', async (_, redis) => {
    const { keyPrefix, projectId, tag } = fresh();
    const records = emails.map(
      (email, i): SuppressionRecord => ({
        ...record(i, reasons[i % 3]!, T0 + i, email),
        ...(i % 2 === 0 && {
          provenance: {
            source: 'webhook' as const,
            at: T0 + i,
            event: {
              provider: 'ses' as const,
              messageId: `m-${email}`,
              eventId: timelineEntryId(`ses:${i}`),
              diagnostic: '550 Ünicode ✓ <é>',
            },
          },
        }),
      }),
    );
    const [legacy, current] = [records.slice(0, 3), records.slice(3)];
    await writeLegacy(redis(), tag, legacy);
    const store = await readingStore(redis(), keyPrefix);
    for (const r of current) await store.addSuppression(projectId, r);
    const newestFirst = [...records].reverse();
    expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual(newestFirst);
    expect(
      await store.getSuppressions(
        projectId,
        records.map((r) => r.hash),
      ),
    ).toStrictEqual(records);
    for (const r of records) expect(await store.getSuppression(projectId, r.hash)).toStrictEqual(r);
    await createRedisStore({ client: redis(), keyPrefix }).upgradeSuppressions(projectId);
    expect(
      await createRedisStore({ client: redis(), keyPrefix }).getSuppressions(
        projectId,
        records.map((r) => r.hash),
      ),
    ).toStrictEqual(records);
    expect(await store.listSuppressions(projectId, { limit: 2, after: newestFirst[1]! })).toStrictEqual(newestFirst.slice(2, 4));
    expect(
      await store.removeSuppressions(
        projectId,
        records.map((r) => r.hash),
      ),
    ).toStrictEqual(records);
    expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual([]);
  });
});

describe('upgrade of the old layout', () => {
  /** `count` suppressions of the old layout, times tied in threes, every reason, some with provenance. */
  function legacyRecords(count: number): SuppressionRecord[] {
    return Array.from({ length: count }, (_, i) => ({
      ...record(i, reasons[i % 3]!, T0 + Math.floor(i / 3)),
      ...(i % 5 === 0 && { provenance: { source: 'import' as const, at: T0 + i } }),
    }));
  }

  test.each(servers)(
    'on %s: stopped after any number of steps, every answer stays the model’s; a store resumes and finishes it',
    async (_, redis) => {
      const { keyPrefix, projectId, tag } = fresh();
      const records = legacyRecords(700);
      await writeLegacy(redis(), tag, records);
      const model = createStoreModel();
      await model.mergeSuppressions(projectId, records);
      const hashes = [...records.map((r) => r.hash), record(9999, 'manual', 0).hash];
      const reading = await readingStore(redis(), keyPrefix);
      // Killed after k steps of 100: nothing upgrades meanwhile, and the next store starts from there.
      for (const remaining of [700, 600, 500]) {
        await expectLayout(redis(), tag, records);
        await expectSameAnswers(reading, model, projectId, hashes, 37);
        expect(await upgradeStep(redis(), tag, 100)).toBe(remaining - 100);
      }
      // Writes in the middle: each one upgrades the suppression it touches first.
      const changes = [
        { ...records[1]!, reason: 'complaint' as const },
        { ...records[650]!, createdAt: T0 - 5 },
        record(5000, 'hard_bounce', T0 + 4),
      ];
      expect(await reading.mergeSuppressions(projectId, changes)).toStrictEqual(await model.mergeSuppressions(projectId, changes));
      const removed = [records[0]!.hash, records[699]!.hash];
      expect(await reading.removeSuppressions(projectId, removed)).toStrictEqual(await model.removeSuppressions(projectId, removed));
      const stored = await walk(model, projectId, 1000);
      await expectLayout(redis(), tag, stored);
      await expectSameAnswers(reading, model, projectId, [...hashes, changes[2]!.hash], 50);

      // A store's first check finds the old layout and upgrades it in the background.
      const store = createRedisStore({ client: redis(), keyPrefix });
      expect(await store.getSuppression(projectId, records[2]!.hash)).toStrictEqual(
        await model.getSuppression(projectId, records[2]!.hash),
      );
      await store.upgradeSuppressions(projectId); // the same upgrade, awaited
      expect(await redis().exists(`${tag}so`)).toBe(0);
      await expectLayout(redis(), tag, stored);
      await expectSameAnswers(store, model, projectId, [...hashes, changes[2]!.hash], 50);
      await store.close();
    },
  );

  test('close() stops an upgrade between two calls; another store finishes it', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const records = legacyRecords(3 * UPGRADE_PER_CALL);
    await writeLegacy(raw, tag, records);
    const first = createRedisStore({ client, keyPrefix });
    const upgrading = first.upgradeSuppressions(projectId);
    await first.close();
    await upgrading;
    expect(await raw.zcard(`${tag}so`)).toBe(2 * UPGRADE_PER_CALL);
    await expectLayout(raw, tag, records);
    await createRedisStore({ client, keyPrefix }).upgradeSuppressions(projectId);
    expect(await raw.exists(`${tag}so`)).toBe(0);
    await expectLayout(raw, tag, records);
  });

  test('a store whose upgrade Redis refuses (a read-only replica, out of memory) answers every check and leaves the upgrade for a while', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const records = legacyRecords(10);
    await writeLegacy(raw, tag, records);
    // Writes are EVALSHA; the checks' reads are EVALSHA_RO and go through.
    let refused = 0;
    const refusing = new Proxy(client, {
      get: (target, property, receiver) =>
        property === 'evalsha' || property === 'eval'
          ? () => {
              refused++;
              return Promise.reject(new Error("READONLY You can't write against a read only replica."));
            }
          : Reflect.get(target, property, receiver),
    });
    const store = createRedisStore({ client: refusing, keyPrefix });
    const hashes = records.map((r) => r.hash);
    expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(records);
    while (refused === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i++) expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(records);
    expect(refused).toBe(1);
    await expect(store.upgradeSuppressions(projectId)).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(await raw.zcard(`${tag}so`)).toBe(10);
  });

  test('several stores upgrading, merging, removing and checking at once end in the model’s state; kept suppressions are always found', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const records = legacyRecords(1200);
    await writeLegacy(raw, tag, records);
    const [kept, removed] = [records.filter((_, i) => i % 4 !== 0), records.filter((_, i) => i % 4 === 0)];
    // Joins commute: reasons only rise and times only move earlier, whichever store merges first.
    const merges = kept
      .filter((_, i) => i % 3 === 0)
      .map((r, i) => ({ ...r, reason: 'complaint' as const, createdAt: r.createdAt - (i % 5) }));
    const added = Array.from({ length: 300 }, (_, i) => record(10_000 + i, reasons[i % 3]!, T0 + (i % 40)));
    const connections = Array.from({ length: 3 }, () => new Redis(inject('redisUrl')));
    try {
      const stores = connections.map((connection) => createRedisStore({ client: connection, keyPrefix, scanBudget: 50 }));
      const keptHashes = kept.map((r) => r.hash);
      await Promise.all([
        stores[0]!.upgradeSuppressions(projectId),
        stores[1]!.upgradeSuppressions(projectId),
        (async () => {
          for (let from = 0; from < merges.length; from += 40) await stores[2]!.mergeSuppressions(projectId, merges.slice(from, from + 40));
        })(),
        (async () => {
          for (let from = 0; from < removed.length; from += 25)
            await stores[1]!.removeSuppressions(
              projectId,
              removed.slice(from, from + 25).map((r) => r.hash),
            );
        })(),
        (async () => {
          for (let from = 0; from < added.length; from += 30) await stores[0]!.mergeSuppressions(projectId, added.slice(from, from + 30));
        })(),
        (async () => {
          // Each round a store that never saw the project: its first check reads both layouts.
          for (let round = 0; round < 8; round++) {
            const found = await createRedisStore({ client: connections[round % 3]!, keyPrefix }).getSuppressions(projectId, keptHashes);
            expect(found.filter((r) => r === undefined)).toHaveLength(0);
          }
        })(),
      ]);
      await stores[2]!.upgradeSuppressions(projectId);
      const model = createStoreModel();
      await model.mergeSuppressions(projectId, [...kept, ...merges, ...added]);
      const expected = await walk(model, projectId, 1000);
      expect(await raw.exists(`${tag}so`)).toBe(0);
      await expectLayout(raw, tag, expected);
      await expectSameAnswers(
        stores[2]!,
        model,
        projectId,
        [...records, ...added].map((r) => r.hash),
        45,
      );
      await Promise.all(stores.map((store) => store.close()));
    } finally {
      await Promise.all(connections.map((connection) => connection.quit()));
    }
  });

  test('checks from other connections find every suppression at every moment of the upgrade', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const records = legacyRecords(1500);
    await writeLegacy(raw, tag, records);
    const hashes = records.map((r) => r.hash);
    let done = false;
    const upgrade = (async () => {
      while ((await upgradeStep(raw, tag, 25)) > 0);
      done = true;
    })();
    // A store that never knew the project, each round: its first check reads both layouts.
    let rounds = 0;
    while (!done) {
      const found = await createRedisStore({ client, keyPrefix }).getSuppressions(projectId, hashes);
      expect(found.every((r) => r !== undefined)).toBe(true);
      rounds++;
    }
    await upgrade;
    expect(rounds).toBeGreaterThan(0);
    // A store that saw the old layout once, then the new one, switches to plain reads and still finds all.
    const store = await readingStore(client, keyPrefix);
    expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(records);
    expect(await store.getSuppressions(projectId, hashes)).toStrictEqual(records);
  });
});
