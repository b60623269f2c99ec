/** A clock the test moves by hand, so every `created_at` in an answer is known in advance. */
export interface TestClock {
  now(): number;
  /** Moves the clock forward by `ms` and returns the new time. */
  advance(ms: number): number;
}

/** Manual suppressions are stamped by this clock; it starts a day after the webhook events. */
export const CLOCK_START = Date.parse('2026-04-02T10:00:00.000Z');

export function createTestClock(start = CLOCK_START): TestClock {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => (time += ms),
  };
}
