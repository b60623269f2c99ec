// statsMoves, computed column by column, is the definition: what the message counted before leaves
// its buckets, what it counts after comes in, and a leaving and a coming of the same bucket cancel.
import { HOUR_MS, statFacts, statsMoves, type FactTimes, type StatsMove } from '@mailwarden/core/store';
import fc from 'fast-check';
import { expect, test } from 'vitest';

/** The definition, written as the multiset difference of two lists of contributions. */
function movesByDefinition(
  beforeId: string | null,
  beforeTimes: FactTimes | undefined,
  afterId: string | null,
  afterTimes: FactTimes,
): StatsMove[] {
  const contributions = (trackingId: string | null, times: FactTimes | undefined, delta: 1 | -1) =>
    (times ?? []).flatMap((time, column) => {
      if (time === null) return [];
      const hour = Math.floor(time / HOUR_MS);
      return [{ trackingId: null, hour, column, delta }, ...(trackingId === null ? [] : [{ trackingId, hour, column, delta }])];
    });
  const leaving = contributions(beforeId, beforeTimes, -1);
  const coming: StatsMove[] = [];
  for (const move of contributions(afterId, afterTimes, 1)) {
    const at = leaving.findIndex((left) => left.trackingId === move.trackingId && left.hour === move.hour && left.column === move.column);
    if (at >= 0) leaving.splice(at, 1);
    else coming.push(move);
  }
  return [...leaving, ...coming];
}

const key = (move: StatsMove) => JSON.stringify([move.trackingId, move.hour, move.column, move.delta]);
// Times within a few hours, so hours often coincide and moves often cancel.
const factTimes = fc.array(fc.option(fc.integer({ min: 0, max: 3 * HOUR_MS }), { nil: null }), {
  minLength: statFacts.length,
  maxLength: statFacts.length,
});
const trackingId = fc.constantFrom(null, 'a', 'b');

test('statsMoves gives the moves of the definition', () => {
  fc.assert(
    fc.property(
      trackingId,
      fc.option(factTimes, { nil: undefined }),
      trackingId,
      factTimes,
      (beforeId, beforeTimes, afterId, afterTimes) => {
        const moves = statsMoves(beforeId, beforeTimes, afterId, afterTimes).map(key).sort();
        expect(moves).toStrictEqual(movesByDefinition(beforeId, beforeTimes, afterId, afterTimes).map(key).sort());
      },
    ),
    { numRuns: 2000 },
  );
});
