// The suppression lists of streams in Redis, read through raw commands: each stream's list has keys of
// its own beside the project-wide ones (unchanged), in the project's slot; the lists stay independent
// under any adds, merges, events and removes, the check rule answers from both in one read, and a
// project still holding the old layout is checked in a stream too (docs/storage-internals.md).
import { randomUUID } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import { createEmailHasher, packProvenance, reasonRank, type StoredEvent, type SuppressionRecord } from '@mailwarden/core/store';
import { createStoreModel } from '@mailwarden/store-test-suite';
import fc from 'fast-check';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { SUPPRESSION_BLOCK_MAX, suppressionMember } from '../src/layout.js';
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
  const keyPrefix = `streams:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return { keyPrefix, projectId, tag: `${keyPrefix}{${projectId}}:` };
}

const reasons = ['manual', 'hard_bounce', 'complaint'] as const;

function record(i: number, reason: SuppressionRecord['reason'], createdAt: number, stream?: string): SuppressionRecord {
  const email = `user-${i}@example.com`;
  return { hash: hashEmail(email), email, reason, createdAt, ...(stream !== undefined && { stream }) };
}

function suppressionEvent(suppression: SuppressionRecord): StoredEvent {
  return { key: `ses:${randomUUID()}`, message: null, trackingIdSearchKey: null, suppression };
}

/** The record of a list as the project-wide model holds it: without its stream. */
function withoutStream({ stream: _, ...rest }: SuppressionRecord): SuppressionRecord {
  return rest;
}

function inList(record: SuppressionRecord | undefined, stream: string | undefined): SuppressionRecord | undefined {
  return record === undefined || stream === undefined ? record : { ...record, stream };
}

/** A list's keys, written independently of src/layout.ts: its HASH, its heads and its blocks' prefix. */
function listKeys(tag: string, stream: string | undefined) {
  return stream === undefined
    ? { s: `${tag}s`, sk: `${tag}sk`, sb: `${tag}sb:` }
    : { s: `${tag}s.${stream}`, sk: `${tag}sk.${stream}`, sb: `${tag}sb.${stream}:` };
}

/** Every key under a pattern, through SCAN, on one node. */
async function scanKeys(node: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

/** One list's suppressions through the listing, `pageSize` at a time. */
async function walk(store: Store, projectId: string, stream: string | undefined, pageSize: number, reason?: SuppressionRecord['reason']) {
  const all: SuppressionRecord[] = [];
  for (;;) {
    const last = all.at(-1);
    const page = await store.listSuppressions(projectId, {
      ...(stream !== undefined && { stream }),
      ...(reason !== undefined && { reason }),
      limit: pageSize,
      ...(last && { after: { createdAt: last.createdAt, hash: last.hash } }),
    });
    all.push(...page);
    if (page.length < pageSize) return all;
  }
}

/**
 * One list's layout by raw commands: blocks named by its heads under its own prefix, each at most
 * SUPPRESSION_BLOCK_MAX members inside its range, together the members of `expected`, each once; the
 * HASH one binary field per suppression.
 */
async function expectListLayout(redis: Redis | Cluster, tag: string, stream: string | undefined, expected: readonly SuppressionRecord[]) {
  const keys = listKeys(tag, stream);
  const heads = (await redis.zrangeBuffer(keys.sk, 0, -1)) as Buffer[];
  if (heads.length > 0) expect(heads[0]!.length).toBe(0);
  const members: string[] = [];
  for (const [i, head] of heads.entries()) {
    const inBlock = (await redis.zrangeBuffer(Buffer.concat([Buffer.from(keys.sb), head]), 0, -1)) as Buffer[];
    if (i > 0) expect(inBlock.length).toBeGreaterThan(0);
    expect(inBlock.length).toBeLessThanOrEqual(SUPPRESSION_BLOCK_MAX);
    for (const member of inBlock) {
      expect(Buffer.compare(member, head)).toBeGreaterThanOrEqual(0);
      if (heads[i + 1]) expect(Buffer.compare(member, heads[i + 1]!)).toBeLessThan(0);
    }
    members.push(...inBlock.map((member) => member.toString('hex')));
  }
  expect(members.sort()).toStrictEqual(expected.map((r) => suppressionMember(r.createdAt, r.hash).toString('hex')).sort());
  const fields = ((await redis.callBuffer('HKEYS', keys.s)) as Buffer[]).map((field) => field.toString('hex')).sort();
  expect(fields).toStrictEqual(expected.map((r) => r.hash.slice(0, 60)).sort());
}

describe('stream lists: keys', () => {
  test("a stream's list has its own HASH, heads and blocks; the project-wide keys are as before", async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const wide = record(1, 'hard_bounce', T0 + 1);
    const marketing = record(1, 'manual', T0 + 2, 'marketing');
    const digest = { ...record(2, 'complaint', T0 + 3, 'weekly-digest'), provenance: { source: 'unsubscribe' as const, at: T0 + 3 } };
    await store.addSuppression(projectId, wide);
    await store.addSuppression(projectId, marketing);
    await store.applyEvents(projectId, [suppressionEvent(digest)]);

    const names = (await scanKeys(raw, `${keyPrefix}*`)).map((key) => key.slice(tag.length));
    expect(names).toStrictEqual(
      ['s', 'sk', 'sb:', 's.marketing', 'sk.marketing', 'sb.marketing:', 's.weekly-digest', 'sk.weekly-digest', 'sb.weekly-digest:']
        .concat(names.filter((name) => name.startsWith('e:')))
        .sort(),
    );
    // The same value and member shapes as the project-wide list's: a value holds no stream.
    const storedValue = async (key: string, hash: string) => raw.hgetBuffer(key, Buffer.from(hash.slice(0, 60), 'hex'));
    expect(String(await storedValue(`${tag}s`, wide.hash))).toBe(`2${wide.createdAt}:${wide.email}`);
    expect(String(await storedValue(`${tag}s.marketing`, marketing.hash))).toBe(`1${marketing.createdAt}:${marketing.email}`);
    expect(String(await storedValue(`${tag}s.weekly-digest`, digest.hash))).toBe(
      `3${digest.createdAt}:${digest.email}\0${packProvenance(digest.provenance)}`,
    );
    expect(await raw.zrangeBuffer(`${tag}sb.marketing:`, 0, -1)).toStrictEqual([suppressionMember(marketing.createdAt, marketing.hash)]);
    for (const name of ['s.marketing', 'sk.marketing', 'sb.marketing:']) expect(await raw.pttl(tag + name)).toBe(-1);
  });

  test('on a cluster, every list of a project is in the slot of its tag', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client: cluster, keyPrefix });
    await store.mergeSuppressions(projectId, [record(1, 'manual', T0), record(1, 'manual', T0, 'a'), record(2, 'complaint', T0, 'b-2')]);
    await store.applyEvents(projectId, [suppressionEvent(record(3, 'hard_bounce', T0, 'c_3'))]);
    const masters = cluster.nodes('master');
    const perNode = await Promise.all(masters.map((node) => scanKeys(node, `${keyPrefix}*`)));
    expect(perNode.filter((keys) => keys.length > 0)).toHaveLength(1);
    const slot = await masters[0]!.cluster('KEYSLOT', `{${projectId}}`);
    // 3 keys per list, 4 lists, and the event's dedup key.
    expect(perNode.flat()).toHaveLength(13);
    for (const key of perNode.flat()) {
      expect(key.startsWith(tag)).toBe(true);
      expect(await masters[0]!.cluster('KEYSLOT', key)).toBe(slot);
    }
  });

  test('a stream that is not a stream name is refused before anything is read or written', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const hash = record(1, 'manual', T0).hash;
    for (const stream of ['', 'a.b', 'a:b', 'A', '-a', 'a}', 'x'.repeat(65)]) {
      await expect(store.addSuppression(projectId, record(1, 'manual', T0, stream)), stream).rejects.toThrow(TypeError);
      await expect(store.mergeSuppressions(projectId, [record(2, 'manual', T0), record(1, 'manual', T0, stream)])).rejects.toThrow(
        TypeError,
      );
      await expect(store.applyEvents(projectId, [suppressionEvent(record(1, 'manual', T0, stream))])).rejects.toThrow(TypeError);
      await expect(store.getSuppression(projectId, hash, stream)).rejects.toThrow(TypeError);
      await expect(store.getSuppressions(projectId, [], stream)).rejects.toThrow(TypeError);
      await expect(store.removeSuppression(projectId, hash, stream)).rejects.toThrow(TypeError);
      await expect(store.removeSuppressions(projectId, [hash], stream)).rejects.toThrow(TypeError);
      await expect(store.listSuppressions(projectId, { stream, limit: 10 })).rejects.toThrow(TypeError);
    }
    expect(await scanKeys(raw, `${keyPrefix}*`)).toStrictEqual([]);
  });

  test('a check in a stream is one command: a read-only script over both lists; without a stream, the plain read', async () => {
    const { keyPrefix, projectId } = fresh();
    const counting = new Redis(inject('redisUrl'));
    try {
      const store = createRedisStore({ client: counting, keyPrefix });
      await store.mergeSuppressions(projectId, [record(1, 'manual', T0), record(2, 'complaint', T0, 'news')]);
      // The first check finds the project upgraded (nothing of the old layout), the second loads the script.
      for (let i = 0; i < 2; i++) await store.getSuppression(projectId, record(1, 'manual', T0).hash, 'news');
      const sent: string[] = [];
      const original = counting.sendCommand.bind(counting);
      counting.sendCommand = ((...args: Parameters<typeof original>) => {
        sent.push(args[0].name);
        return original(...args);
      }) as typeof counting.sendCommand;
      const hashes = [1, 2, 3].map((i) => record(i, 'manual', T0).hash);
      expect(await store.getSuppressions(projectId, hashes, 'news')).toStrictEqual([
        record(1, 'manual', T0),
        record(2, 'complaint', T0, 'news'),
        undefined,
      ]);
      expect(await store.getSuppression(projectId, hashes[1]!, 'news')).toStrictEqual(record(2, 'complaint', T0, 'news'));
      expect(sent).toStrictEqual(['evalsha_ro', 'evalsha_ro']);
      sent.length = 0;
      expect(await store.getSuppressions(projectId, hashes)).toStrictEqual([record(1, 'manual', T0), undefined, undefined]);
      expect(await store.getSuppression(projectId, hashes[0]!)).toStrictEqual(record(1, 'manual', T0));
      expect(sent).toStrictEqual(['hmget', 'hget']);
    } finally {
      await counting.quit();
    }
  });
});

test('a batch check in a stream longer than a script reads in one slice (1 000) answers every hash in order', async () => {
  const { keyPrefix, projectId } = fresh();
  const store = createRedisStore({ client, keyPrefix });
  const count = 2500;
  const records = Array.from({ length: count }, (_, i) => record(i, 'manual', T0 + i, i % 3 === 0 ? undefined : 'news'));
  await store.mergeSuppressions(projectId, records.concat([record(1, 'complaint', T0)]));
  const hashes = records.map((r) => r.hash).concat(record(count, 'manual', 0).hash);
  for (let i = 0; i < 2; i++) {
    // The first call reads through the old-layout script, the second through the stream's.
    const expected = records.map((r) => (r.hash === record(1, 'manual', 0).hash ? record(1, 'complaint', T0) : r));
    expect(await store.getSuppressions(projectId, hashes, 'news')).toStrictEqual([...expected, undefined]);
  }
});

test('concurrent writers from several clients: exactly one `suppressed` per address in each list', async () => {
  const { keyPrefix, projectId } = fresh();
  const clients = Array.from({ length: 4 }, () => new Redis(inject('redisUrl')));
  try {
    const stores = clients.map((redis) => createRedisStore({ client: redis, keyPrefix }));
    const lists = [undefined, 'news', 'marketing'];
    // Every store sends every (address, list) pair, as events and as merges, interleaved.
    const pairs = Array.from({ length: 30 }, (_, i) => lists.map((stream, j) => record(i, reasons[(i + j) % 3]!, T0 + j, stream))).flat();
    const outcomes = await Promise.all(
      stores.map(async (store, k) => {
        const mine = k % 2 === 0 ? pairs : [...pairs].reverse();
        const [applied, merged] = await Promise.all([
          store.applyEvents(projectId, mine.map(suppressionEvent)),
          store.mergeSuppressions(projectId, mine),
        ]);
        return [...mine.map((r, i) => [r, applied[i]] as const), ...mine.map((r, i) => [r, merged[i]] as const)];
      }),
    );
    const created = new Map<string, number>();
    for (const [r, outcome] of outcomes.flat()) {
      if (outcome === 'suppressed') created.set(`${r.stream}\n${r.hash}`, (created.get(`${r.stream}\n${r.hash}`) ?? 0) + 1);
    }
    expect(created.size).toBe(pairs.length);
    expect([...created.values()].every((n) => n === 1)).toBe(true);
    for (const stream of lists) expect(await walk(stores[0]!, projectId, stream, 1000)).toHaveLength(30);
  } finally {
    await Promise.all(clients.map((redis) => redis.quit()));
  }
});

describe('stream lists: the check rule on a project of the old layout', () => {
  test.each(servers)('%s: the old project-wide record wins, else the stream’s; the check starts the upgrade', async (_, redis) => {
    const { keyPrefix, projectId, tag } = fresh();
    const old = record(1, 'hard_bounce', T0 + 1);
    // As the release before the order blocks wrote it: the 64-hex field and the `so` order.
    await redis().hset(`${tag}s`, old.hash, `${reasonRank(old.reason)}${old.createdAt}:${old.email}`);
    await redis().zadd(`${tag}so`, 0, `0${String(Number.MAX_SAFE_INTEGER - old.createdAt).padStart(16, '0')}${old.hash}`);
    const writer = createRedisStore({ client: redis(), keyPrefix });
    await writer.mergeSuppressions(projectId, [record(1, 'manual', T0, 'news'), record(2, 'manual', T0 + 2, 'news')]);
    await writer.close();
    const store = createRedisStore({ client: redis(), keyPrefix });
    const hashes = [1, 2, 3].map((i) => record(i, 'manual', T0).hash);
    expect(await store.getSuppressions(projectId, hashes, 'news')).toStrictEqual([old, record(2, 'manual', T0 + 2, 'news'), undefined]);
    expect(await store.getSuppression(projectId, hashes[1]!, 'other')).toBeUndefined();
    await store.close();
    // The upgrade leaves the stream's list as it was.
    await createRedisStore({ client: redis(), keyPrefix }).upgradeSuppressions(projectId);
    expect(await redis().exists(`${tag}so`)).toBe(0);
    expect(await createRedisStore({ client: redis(), keyPrefix }).getSuppressions(projectId, hashes, 'news')).toStrictEqual([
      old,
      record(2, 'manual', T0 + 2, 'news'),
      undefined,
    ]);
  });
});

describe('stream lists: independent under any writes', () => {
  const STREAMS = [undefined, 'marketing', 'news'] as const;
  const ADDRESSES = 140;
  type Entry = [address: number, reason: number, time: number, list: number];
  type Step =
    | { kind: 'merge'; records: Entry[] }
    | { kind: 'events'; records: Entry[] }
    | { kind: 'add'; record: Entry }
    | { kind: 'remove'; list: number; indexes: number[] };
  const entry = fc.tuple(fc.nat(ADDRESSES - 1), fc.nat(2), fc.nat(6), fc.nat(STREAMS.length - 1));
  const recordOf = ([i, reason, time, list]: Entry) => record(i, reasons[reason]!, T0 + time, STREAMS[list]);
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('merge' as const), records: fc.array(entry, { maxLength: 200, size: 'max' }) }),
    fc.record({ kind: fc.constant('events' as const), records: fc.array(entry, { maxLength: 120, size: 'max' }) }),
    fc.record({ kind: fc.constant('add' as const), record: entry }),
    fc.record({
      kind: fc.constant('remove' as const),
      list: fc.nat(STREAMS.length - 1),
      indexes: fc.array(fc.nat(ADDRESSES - 1), { maxLength: 40 }),
    }),
  );

  /** Runs the steps against one model per list (each a project-wide list), comparing every answer. */
  async function run(redis: Redis | Cluster, steps: Step[], pageSize: number): Promise<void> {
    const { keyPrefix, projectId, tag } = fresh();
    // A filtered listing resumes every 3 entries read.
    const store = createRedisStore({ client: redis, keyPrefix, scanBudget: 3 });
    const models = STREAMS.map(() => createStoreModel());
    const modelOf = (r: SuppressionRecord) => models[STREAMS.indexOf(r.stream as (typeof STREAMS)[number])]!;
    const merged = async (records: SuppressionRecord[]) => {
      const outcomes = [];
      for (const r of records) outcomes.push(...(await modelOf(r).mergeSuppressions(projectId, [withoutStream(r)])));
      return outcomes;
    };
    for (const s of steps) {
      if (s.kind === 'merge') {
        const records = s.records.map(recordOf);
        expect(await store.mergeSuppressions(projectId, records)).toStrictEqual(await merged(records));
      } else if (s.kind === 'events') {
        const records = s.records.map(recordOf);
        expect(await store.applyEvents(projectId, records.map(suppressionEvent))).toStrictEqual(await merged(records));
      } else if (s.kind === 'add') {
        const r = recordOf(s.record);
        const { record: added, created } = await modelOf(r).addSuppression(projectId, withoutStream(r));
        expect(await store.addSuppression(projectId, r)).toStrictEqual({ record: inList(added, r.stream), created });
      } else {
        const stream = STREAMS[s.list];
        const hashes = s.indexes.map((i) => record(i, 'manual', 0).hash);
        const removed = await models[s.list]!.removeSuppressions(projectId, hashes);
        expect(await store.removeSuppressions(projectId, hashes, stream)).toStrictEqual(removed.map((r) => inList(r, stream)));
      }
    }
    const hashes = Array.from({ length: ADDRESSES }, (_, i) => record(i, 'manual', 0).hash);
    const projectWide = await models[0]!.getSuppressions(projectId, hashes);
    for (const [list, stream] of STREAMS.entries()) {
      const model = models[list]!;
      const listed = (await walk(model, projectId, undefined, 1000)).map((r) => inList(r, stream)!);
      await expectListLayout(redis, tag, stream, listed);
      expect(await walk(store, projectId, stream, pageSize)).toStrictEqual(listed);
      expect(await walk(store, projectId, stream, pageSize, 'hard_bounce')).toStrictEqual(listed.filter((r) => r.reason === 'hard_bounce'));
      // The check rule: the project-wide record, else this list's.
      const own = await model.getSuppressions(projectId, hashes);
      const expected = stream === undefined ? projectWide : projectWide.map((r, i) => r ?? inList(own[i], stream));
      expect(await store.getSuppressions(projectId, hashes, stream)).toStrictEqual(expected);
      expect(await store.getSuppression(projectId, hashes[0]!, stream)).toStrictEqual(expected[0]);
    }
  }

  test.each(servers)('%s: every list answers as a list of its own would; checks follow the rule', async (_, redis) => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 6 }), fc.integer({ min: 1, max: 40 }), (steps, pageSize) =>
        run(redis(), steps, pageSize),
      ),
      {
        numRuns: 15,
        examples: [
          // Pinned: the same addresses in all three lists with different reasons and times, more than a
          // block holds in each (so blocks split); events raising one list; then one list emptied,
          // leaving the others whole.
          [
            [
              {
                kind: 'merge',
                records: Array.from(
                  { length: 3 * ADDRESSES },
                  (_, i): Entry => [i % ADDRESSES, i % 3, (i * 5) % 7, Math.floor(i / ADDRESSES)],
                ),
              },
              { kind: 'events', records: Array.from({ length: ADDRESSES }, (_, i): Entry => [i, 2, 0, 1]) },
              { kind: 'remove', list: 2, indexes: Array.from({ length: ADDRESSES }, (_, i) => i) },
              { kind: 'add', record: [0, 0, 6, 2] },
            ],
            7,
          ],
        ],
      },
    );
  });
});
