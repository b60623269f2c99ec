import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../src/timestamp.js';

describe('formatTimestamp', () => {
  it('equals Date#toISOString for every millisecond Date can represent', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('equals Date#toISOString for every millisecond of its fast path, 1970 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('equals Date#toISOString around the edges of its fast path and of months, leap days and centuries', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2100, 1, 28),
      Date.UTC(2100, 2, 1),
      Date.UTC(2400, 1, 29),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      253_402_300_800_000,
      -1,
    ];
    for (const ms of edges) expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
