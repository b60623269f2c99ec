import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { SuppressionReason } from '@mailwarden/core';
import type { SuppressionPosition, SuppressionRecord } from '@mailwarden/core/store';
import { SuppressionTable } from '../src/memory-store/suppression-table.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const emailOf = (i: number) => `user${i}@example.com`;
const hashOf = (i: number) => createHash('sha256').update(emailOf(i)).digest('hex');
const recordOf = (i: number, createdAt: number, reason: SuppressionReason = 'manual'): SuppressionRecord => ({
  hash: hashOf(i),
  email: emailOf(i),
  reason,
  createdAt,
});

/** A small deterministic PRNG (mulberry32), so every run inserts and removes the same entries. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Newest first: createdAt descending, then hash ascending. */
function newestFirst(a: SuppressionRecord, b: SuppressionRecord): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0;
}

/** Walks the whole table page by page, each page continuing after the last item of the previous one. */
function listAll(table: SuppressionTable, pageSize: number): SuppressionRecord[] {
  const all: SuppressionRecord[] = [];
  let after: SuppressionPosition | undefined;
  for (;;) {
    const page = table.list(pageSize, after);
    if (page.length > pageSize) throw new Error(`a page of ${pageSize} held ${page.length} items`);
    all.push(...page);
    if (page.length < pageSize) return all;
    const last = page[page.length - 1]!;
    after = { createdAt: last.createdAt, hash: last.hash };
  }
}

/** The table and a plain Map model, changed together and compared in full. */
function modelled() {
  const table = new SuppressionTable();
  const model = new Map<string, SuppressionRecord>();
  // Collected rather than asserted one by one: thousands of operations per test.
  const mismatches: unknown[] = [];
  return {
    table,
    model,
    add(record: SuppressionRecord) {
      const result = table.add(record);
      const existing = model.get(record.hash);
      const expected = existing === undefined ? { record, created: true } : { record: existing, created: false };
      if (!isDeepStrictEqual(result, expected)) mismatches.push({ operation: 'add', record, result, expected });
      if (existing === undefined) model.set(record.hash, { ...record });
    },
    remove(hash: string) {
      const result = table.remove(hash);
      if (result !== model.has(hash)) mismatches.push({ operation: 'remove', hash, result });
      model.delete(hash);
    },
    verify(pageSizes = [1_000_000, 97]) {
      expect(mismatches).toEqual([]);
      const expected = [...model.values()].sort(newestFirst);
      expect(table.size).toBe(model.size);
      for (const pageSize of pageSizes) expect(listAll(table, pageSize)).toEqual(expected);
    },
    /** Every hash in `hashes` looks up to what the model holds (undefined when absent). */
    verifyLookups(hashes: string[]) {
      const wrong = hashes.filter((hash) => !isDeepStrictEqual(table.get(hash), model.get(hash)));
      expect(wrong).toEqual([]);
    },
  };
}

describe('SuppressionTable', () => {
  it('starts empty', () => {
    const table = new SuppressionTable();
    expect(table.size).toBe(0);
    expect(table.list(10)).toEqual([]);
    expect(table.get(hashOf(1))).toBeUndefined();
    expect(table.remove(hashOf(1))).toBe(false);
    expect(table.list(10, { createdAt: T0, hash: hashOf(1) })).toEqual([]);
  });

  it('inserts if absent and returns the existing record unchanged otherwise', () => {
    const table = new SuppressionTable();
    const first = recordOf(1, T0, 'complaint');
    expect(table.add(first)).toEqual({ record: first, created: true });
    expect(table.add(recordOf(1, T0 + 5000, 'manual'))).toEqual({ record: first, created: false });
    expect(table.get(hashOf(1))).toEqual(first);
    expect(table.size).toBe(1);
  });

  it('keeps newest-first order for inserts out of time order, with ties broken by hash', () => {
    const next = random(1);
    const store = modelled();
    for (let i = 0; i < 2000; i++) {
      // Few distinct times, so many entries share one and the hash decides.
      store.add(recordOf(i, T0 + Math.floor(next() * 50) * 1000));
    }
    store.verify([1_000_000, 1, 7, 100]);
    store.verifyLookups(Array.from({ length: 2000 }, (_, i) => hashOf(i)));
  });

  it('continues strictly after a position that is not in the table', () => {
    const store = modelled();
    for (let i = 0; i < 300; i++) store.add(recordOf(i, T0 + (i % 10) * 1000));
    const expected = [...store.model.values()].sort(newestFirst);
    for (const after of [
      { createdAt: T0 + 5000, hash: '0'.repeat(64) },
      { createdAt: T0 + 5000, hash: 'f'.repeat(64) },
      { createdAt: T0 + 5000, hash: '8'.repeat(64) },
      { createdAt: T0 + 4500, hash: '8'.repeat(64) },
      { createdAt: T0 + 99_000, hash: '0'.repeat(64) },
      { createdAt: T0 - 1, hash: '0'.repeat(64) },
    ]) {
      const rest = expected.filter((record) => newestFirst(record, { ...record, ...after }) > 0);
      expect(store.table.list(1000, after)).toEqual(rest);
    }
  });

  it('stays right through many removals (compaction) and re-adds', () => {
    const next = random(2);
    const store = modelled();
    for (let i = 0; i < 5000; i++) store.add(recordOf(i, T0 + Math.floor(next() * 1000) * 1000));
    store.verify();

    // 3000 removals: removed entries stay in the listing order until more than 1024 of them make up over
    // a quarter of it, then the order is compacted and their slots freed; this passes that point twice.
    const removed = new Set<number>();
    while (removed.size < 3000) removed.add(Math.floor(next() * 5000));
    for (const i of removed) store.remove(hashOf(i));
    store.verify();
    expect([...removed].filter((i) => store.table.get(hashOf(i)) !== undefined)).toEqual([]);
    store.verifyLookups(Array.from({ length: 5000 }, (_, i) => hashOf(i)));
    // Removing again finds nothing.
    for (const i of [...removed].slice(0, 100)) store.remove(hashOf(i));

    // Re-add some removed entries with new times, older and newer than everything, and new ones too,
    // reusing the slots compaction freed.
    const readded = [...removed].slice(0, 1500);
    for (const [n, i] of readded.entries()) {
      store.add(recordOf(i, n % 3 === 0 ? T0 - n * 1000 : n % 3 === 1 ? T0 + 2_000_000 + n : T0 + 500_000, 'hard_bounce'));
    }
    for (let i = 5000; i < 7000; i++) store.add(recordOf(i, T0 + Math.floor(next() * 1000) * 1000));
    store.verify([1_000_000, 97, 1000]);
    store.verifyLookups(Array.from({ length: 7000 }, (_, i) => hashOf(i)));
  });

  it('stays right over rounds of removing and re-adding the same entries', () => {
    const next = random(3);
    const store = modelled();
    for (let i = 0; i < 3000; i++) store.add(recordOf(i, T0 + (i % 100) * 1000));
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 3000; i++) if (next() < 0.5) store.remove(hashOf(i));
      for (let i = 0; i < 3000; i++) {
        // Same times as before for some, so a live entry and its removed copy can share one key.
        if (next() < 0.5) store.add(recordOf(i, T0 + (next() < 0.5 ? i % 100 : Math.floor(next() * 200)) * 1000));
      }
      store.verify([1_000_000, 61]);
      store.verifyLookups(Array.from({ length: 3000 }, (_, i) => hashOf(i)));
    }
  });

  it('lists a removed and re-added entry once, even at the same time', () => {
    const store = modelled();
    for (let i = 0; i < 5; i++) store.add(recordOf(i, T0));
    for (let round = 0; round < 10; round++) {
      store.remove(hashOf(2));
      store.add(recordOf(2, T0));
    }
    store.verify([1_000_000, 1, 2]);
  });

  it('continues after a position whose entry was removed', () => {
    const store = modelled();
    for (let i = 0; i < 20; i++) store.add(recordOf(i, T0 + i * 1000));
    const page = store.table.list(5);
    const last = page[4]!;
    store.remove(last.hash);
    const expected = [...store.model.values()].sort(newestFirst).slice(4);
    expect(store.table.list(100, { createdAt: last.createdAt, hash: last.hash })).toEqual(expected);
  });

  describe('upsert', () => {
    it('inserts an absent entry', () => {
      const table = new SuppressionTable();
      table.upsert(recordOf(1, T0, 'hard_bounce'));
      expect(table.get(hashOf(1))).toEqual(recordOf(1, T0, 'hard_bounce'));
      expect(table.size).toBe(1);
    });

    it('upgrades the reason and keeps the earlier time', () => {
      const table = new SuppressionTable();
      table.add(recordOf(1, T0, 'manual'));
      table.upsert(recordOf(1, T0 + 5000, 'hard_bounce'));
      expect(table.get(hashOf(1))).toEqual(recordOf(1, T0, 'hard_bounce'));
      table.upsert(recordOf(1, T0 + 9000, 'complaint'));
      expect(table.get(hashOf(1))).toEqual(recordOf(1, T0, 'complaint'));
    });

    it('never downgrades the reason', () => {
      const table = new SuppressionTable();
      table.add(recordOf(1, T0, 'complaint'));
      table.upsert(recordOf(1, T0 + 1000, 'manual'));
      table.upsert(recordOf(1, T0 - 1000, 'hard_bounce'));
      expect(table.get(hashOf(1))).toEqual(recordOf(1, T0 - 1000, 'complaint'));
      expect(table.size).toBe(1);
    });

    it('moves an entry to its place when an earlier time arrives', () => {
      const store = modelled();
      for (let i = 0; i < 10; i++) store.add(recordOf(i, T0 + i * 1000));
      // Entry 9 is the newest; an event from before everything makes it the oldest.
      store.table.upsert(recordOf(9, T0 - 1000, 'hard_bounce'));
      store.model.set(hashOf(9), recordOf(9, T0 - 1000, 'hard_bounce'));
      // Entry 5 moves to the same time as entry 2 (ties by hash).
      store.table.upsert(recordOf(5, T0 + 2000, 'manual'));
      store.model.set(hashOf(5), recordOf(5, T0 + 2000, 'manual'));
      store.verify([1_000_000, 1, 3]);
      expect(store.table.list(100).at(-1)).toEqual(recordOf(9, T0 - 1000, 'hard_bounce'));
    });

    it('keeps the order right over many moves', () => {
      const next = random(4);
      const store = modelled();
      for (let i = 0; i < 2000; i++) store.add(recordOf(i, T0 + 1_000_000 + i));
      const reasons: SuppressionReason[] = ['manual', 'hard_bounce', 'complaint'];
      const rank = (reason: SuppressionReason) => reasons.indexOf(reason);
      for (let n = 0; n < 4000; n++) {
        const i = Math.floor(next() * 2000);
        const incoming = recordOf(i, T0 + Math.floor(next() * 2_000_000), reasons[Math.floor(next() * 3)]!);
        store.table.upsert(incoming);
        const known = store.model.get(hashOf(i))!;
        store.model.set(hashOf(i), {
          ...known,
          createdAt: Math.min(known.createdAt, incoming.createdAt),
          reason: rank(incoming.reason) > rank(known.reason) ? incoming.reason : known.reason,
        });
      }
      store.verify([1_000_000, 89]);
    });
  });

  describe('hash strings', () => {
    const invalid = [
      ['empty', ''],
      ['63 characters', 'a'.repeat(63)],
      ['65 characters', 'a'.repeat(65)],
      ['not hexadecimal', 'g'.repeat(64)],
      ['hexadecimal with a bad last character', `${'a'.repeat(63)}z`],
      ['an email address', 'user1@example.com'],
    ];

    it.each(invalid)('rejects a hash that is %s with TypeError, in every operation', (_, hash) => {
      const table = new SuppressionTable();
      table.add(recordOf(1, T0));
      expect(() => table.get(hash)).toThrow(TypeError);
      expect(() => table.remove(hash)).toThrow(TypeError);
      expect(() => table.add({ ...recordOf(2, T0), hash })).toThrow(TypeError);
      expect(() => table.upsert({ ...recordOf(2, T0), hash })).toThrow(TypeError);
      expect(() => table.list(10, { createdAt: T0, hash })).toThrow(TypeError);
      // Nothing changed.
      expect(table.size).toBe(1);
      expect(table.list(10)).toEqual([recordOf(1, T0)]);
    });
  });
});
