// The memory store's SortedList against a plain sorted array: any sequence of inserts, removals and
// replacements leaves the same items in the same order, and `after` pages the same way. Small chunks
// are forced by sizes well past one chunk (512), so splits and emptied chunks are exercised.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { SortedList } from '../src/memory-store/sorted-list.js';

const compare = (a: number, b: number) => a - b;

type Operation = { kind: 'insert'; value: number } | { kind: 'remove'; value: number } | { kind: 'replace'; value: number; by: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('insert' as const), value: fc.integer({ min: 0, max: 5000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), value: fc.integer({ min: 0, max: 5000 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('replace' as const),
      value: fc.integer({ min: 0, max: 5000 }),
      by: fc.integer({ min: 0, max: 5000 }),
    }),
  },
);

function apply(list: SortedList<number>, model: number[], op: Operation): void {
  const has = (value: number) => model.includes(value);
  if (op.kind === 'insert') {
    if (has(op.value)) return; // equal items are the same item: the store never inserts one twice
    list.insert(op.value);
    model.push(op.value);
  } else if (op.kind === 'remove') {
    expect(list.remove(op.value)).toBe(has(op.value));
    if (has(op.value)) model.splice(model.indexOf(op.value), 1);
  } else {
    if (!has(op.value) || (op.by !== op.value && has(op.by))) return;
    list.replace(op.value, op.by);
    model.splice(model.indexOf(op.value), 1, op.by);
  }
  model.sort(compare);
}

/**
 * Ranks that order as `compare` wherever they differ: hundreds, then the rest, with `NaN` (left to
 * `compare`) for some values; `ties` gives many items equal ranks.
 */
const rankings = {
  none: undefined,
  ranks: (value: number) => [Math.floor(value / 100), value % 7 === 0 ? NaN : value % 100] as const,
  ties: (value: number) => [value % 3 === 0 ? NaN : Math.floor(value / 1000), Math.floor(value / 500)] as const,
};

describe.each(Object.entries(rankings))('SortedList, ranks: %s', (_name, ranks) => {
  test('equals a sorted array under any inserts, removals and replacements', () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 3000 }),
        fc.array(fc.integer({ min: -1, max: 5001 }), { maxLength: 5 }),
        (operations, positions) => {
          const list = new SortedList<number>(compare, ranks);
          const model: number[] = [];
          for (const op of operations) apply(list, model, op);
          expect(list.length).toBe(model.length);
          expect([...list.after(undefined)]).toStrictEqual(model);
          for (const position of positions) expect([...list.after(position)]).toStrictEqual(model.filter((value) => value > position));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('keeps order across many chunks, inserted newest-first, oldest-first and at random', () => {
    for (const order of ['descending', 'ascending', 'random'] as const) {
      const values = Array.from({ length: 5000 }, (_, i) => i);
      if (order === 'descending') values.reverse();
      if (order === 'random') values.sort(() => Math.random() - 0.5);
      const list = new SortedList<number>(compare, ranks);
      for (const value of values) list.insert(value);
      expect([...list.after(undefined)], order).toStrictEqual(Array.from({ length: 5000 }, (_, i) => i));
      expect([...list.after(2499)].length).toBe(2500);
      for (let value = 0; value < 5000; value += 2) expect(list.remove(value)).toBe(true);
      expect([...list.after(undefined)]).toStrictEqual(Array.from({ length: 2500 }, (_, i) => 2 * i + 1));
    }
  });
});
