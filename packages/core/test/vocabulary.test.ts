import { messageStatuses, suppressionReasons } from '@mailwarden/core';
import {
  Fact,
  messageStatus,
  reasonFromRank,
  reasonRank,
  reasonRanks,
  statusCodes,
  statusFacts,
  strongerReason,
} from '@mailwarden/core/store';
import { describe, expect, test } from 'vitest';

// Every value a store has ever persisted, in the order it was added. Stored rows keep these numbers for
// good, so this table only grows: add a new value at the end in the same change that adds it to
// src/vocabulary.ts, and never edit a line above it.
const pinned = {
  Fact: [
    ['sent', 1],
    ['deferred', 2],
    ['delivered', 4],
    ['soft_bounced', 8],
    ['hard_bounced', 16],
    ['complained', 32],
    ['rejected', 64],
    ['opened', 128],
    ['clicked', 256],
    ['unsubscribed', 512],
  ],
  statusCodes: [
    ['complained', 0],
    ['bounced', 1],
    ['rejected', 2],
    ['delivered', 3],
    ['soft_bounced', 4],
    ['deferred', 5],
    ['sent', 6],
  ],
  reasonRanks: [
    ['manual', 1],
    ['hard_bounce', 2],
    ['complaint', 3],
  ],
} as const;

const current: Record<keyof typeof pinned, Readonly<Record<string, number>>> = { Fact, statusCodes, reasonRanks };
const tables = Object.keys(pinned) as (keyof typeof pinned)[];

const why = (table: string, name: string, value: number) =>
  `${table}.${name} is persisted by the stores (PostgreSQL rows, Redis values) and must stay ${value}. ` +
  'Encodings are append-only: give a new entry a new value after the last one; never renumber, remove or reuse one ' +
  '(packages/core/src/vocabulary.ts).';

describe('persisted encodings (append-only)', () => {
  test.each(tables)('%s: every value ever pinned is still there, unchanged', (table) => {
    for (const [name, value] of pinned[table]) expect(current[table][name], why(table, name, value)).toBe(value);
  });

  test.each(tables)('%s: every value is pinned, so the next change cannot renumber it unnoticed', (table) => {
    const known = new Set<string>(pinned[table].map(([name]) => name));
    for (const [name, value] of Object.entries(current[table])) {
      expect(known.has(name), `${table}.${name} = ${value} is new: pin it at the end of this test's table`).toBe(true);
    }
  });

  test.each(tables)('%s: values grow in the order they were added, so none is reused', (table) => {
    const values = pinned[table].map(([, value]) => value);
    for (let i = 1; i < values.length; i++) {
      expect(values[i]!, `${table}: ${pinned[table][i]![0]} must come after ${pinned[table][i - 1]![0]}`).toBeGreaterThan(values[i - 1]!);
    }
  });

  test('fact bits are single bits within 31 bits (a PostgreSQL integer; Lua bit operations)', () => {
    for (const [name, bit] of Object.entries(Fact)) {
      expect(bit & (bit - 1), `Fact.${name} is one bit`).toBe(0);
      expect(bit, `Fact.${name}`).toBeGreaterThan(0);
      expect(bit, `Fact.${name}`).toBeLessThan(2 ** 31);
    }
  });

  test('reason ranks are one digit from 1 (Redis packs one character; 0 is a free row of the memory store) and order strength', () => {
    for (const reason of suppressionReasons) {
      expect(reasonRanks[reason]).toBeGreaterThanOrEqual(1);
      expect(reasonRanks[reason]).toBeLessThanOrEqual(9);
      expect(reasonRank(reason)).toBe(reasonRanks[reason]);
      expect(reasonFromRank(reasonRanks[reason])).toBe(reason);
      for (const other of suppressionReasons) {
        expect(strongerReason(reason, other)).toBe(reasonRanks[other] > reasonRanks[reason] ? other : reason);
      }
    }
    for (const rank of [0, 4, -1, 1.5, Number.NaN]) expect(() => reasonFromRank(rank)).toThrow(RangeError);
  });

  test('every status has a code, and a message with only its fact has that status', () => {
    expect(Object.keys(statusCodes).sort()).toStrictEqual([...messageStatuses].sort());
    for (const status of messageStatuses) expect(messageStatus(statusFacts[status])).toBe(status);
  });
});
