// Laws of alert rules (docs/core.md, "Alerts"): the thresholds stores compare are whole parts per
// million within half a part of the percentages configured, and a resolve level never above its threshold.
import { checkAlertRules, storedAlertRule } from '@mailwarden/core';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

const percent = fc.double({ min: 0.0001, max: 100, noNaN: true });
const ratio = fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true });

describe('alert rule laws', () => {
  test('ppm round-trips the percentage within 1 ppm; the resolve level is at most the threshold', () => {
    fc.assert(
      fc.property(percent, percent, ratio, (bounceRate, complaintRate, resolveRatio) => {
        const rule = storedAlertRule(checkAlertRules({ bounceRate, complaintRate, resolveRatio }));
        for (const [thresholds, rate] of [
          [rule.bounce, bounceRate],
          [rule.complaint, complaintRate],
        ] as const) {
          expect(Number.isInteger(thresholds.firePpm) && Number.isInteger(thresholds.resolvePpm)).toBe(true);
          expect(Math.abs(thresholds.firePpm / 10_000 - rate)).toBeLessThanOrEqual(0.0001);
          expect(thresholds.resolvePpm).toBeGreaterThanOrEqual(1);
          expect(thresholds.resolvePpm).toBeLessThanOrEqual(thresholds.firePpm);
        }
      }),
      { numRuns: 200 },
    );
  });

  // Found by hand: the smallest rate allowed is one part per million, and its resolve level rounds to 0,
  // which would never resolve; it is kept at 1.
  test('the smallest rate, 0.0001 %, fires at 1 ppm and resolves below 1 ppm', () => {
    expect(storedAlertRule({ bounceRate: 0.0001 }).bounce).toEqual({ firePpm: 1, resolvePpm: 1 });
  });
});
