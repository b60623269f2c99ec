import { Fact } from '../vocabulary.js';
import type { MessageRecord } from './message.js';

/**
 * Counts over time: per project and per tracking ID, how many messages established each counted fact
 * in each UTC hour. A message counts once per fact (unique), in the hour of the earliest event that
 * established it, so any order of the same events, with any duplicates, gives the same buckets: a late
 * event earlier than the one counted moves the message to its own hour.
 *
 * Stores keep hour buckets only; a day is the sum of its 24 hours, added up when read (at most
 * 2 years × 24 hours of rows), since keeping days too would double the writes of every event.
 */

/** The counted facts, in the order of `statColumns`: the index of a column is its number in every store. */
export const statColumns = ['delivered', 'hardBounced', 'softBounced', 'complained', 'opened', 'clicked', 'unsubscribed'] as const;
export type StatColumn = (typeof statColumns)[number];

/** The fact bit of each column (`statColumns` order). Stores that count in their own language use this table. */
export const statFacts: readonly number[] = [
  Fact.delivered,
  Fact.hard_bounced,
  Fact.soft_bounced,
  Fact.complained,
  Fact.opened,
  Fact.clicked,
  Fact.unsubscribed,
];

export type StatCounts = Record<StatColumn, number>;

/** One bucket: `start` is the epoch milliseconds of its UTC hour or day. */
export interface StatsBucket extends StatCounts {
  start: number;
}

export type StatsInterval = 'hour' | 'day';
export const statsIntervals: readonly StatsInterval[] = ['hour', 'day'];
export const HOUR_MS = 3_600_000;
export const intervalMs: Readonly<Record<StatsInterval, number>> = { hour: HOUR_MS, day: 24 * HOUR_MS };

/** The hour bucket (hours since the epoch, UTC) of an epoch-milliseconds time. */
export const hourOf = (time: number): number => Math.floor(time / HOUR_MS);

/**
 * Per message, the time of the earliest event that established each counted fact (`statColumns`
 * order), `null` for a fact it does not have, or had before the store kept these times (such a fact
 * was never counted, so it never moves).
 */
export type FactTimes = (number | null)[];

export const noFactTimes = (): FactTimes => statFacts.map(() => null);

/**
 * What one event (`seen`, a single event's record: its `firstEventAt` is the event time) does to a
 * message's fact times: a fact it newly establishes takes the event time, a fact already timed keeps
 * the earlier of the two times. A join, like `mergeMessage`.
 */
export function mergeFactTimes(known: MessageRecord | undefined, knownTimes: FactTimes | undefined, seen: MessageRecord): FactTimes {
  return statFacts.map((bit, i) => {
    const had = knownTimes?.[i] ?? null;
    if ((seen.facts & bit) === 0) return had;
    if (known === undefined || (known.facts & bit) === 0) return seen.firstEventAt;
    return had === null ? null : Math.min(had, seen.firstEventAt);
  });
}

/** How one message change moves one hour bucket's count: `trackingId` `null` is the project's bucket. */
export interface StatsMove {
  trackingId: string | null;
  hour: number;
  column: number;
  delta: 1 | -1;
}

/**
 * The bucket moves of a message change: what it counted before leaves, what it counts after comes in,
 * pairs that cancel dropped. Its tracking ID's buckets follow its tracking ID, as `trackingIdDeltas'
 * counters do; the project's buckets move only when a fact's hour does. Column by column, with no
 * matching of lists: this runs for every event a store applies.
 */
export function statsMoves(
  beforeId: string | null,
  beforeTimes: FactTimes | undefined,
  afterId: string | null,
  afterTimes: FactTimes,
): StatsMove[] {
  const moves: StatsMove[] = [];
  for (let column = 0; column < afterTimes.length; column++) {
    const beforeTime = beforeTimes?.[column] ?? null;
    const afterTime = afterTimes[column] ?? null;
    const was = beforeTime === null ? null : hourOf(beforeTime);
    const now = afterTime === null ? null : hourOf(afterTime);
    if (was !== now) {
      if (was !== null) moves.push({ trackingId: null, hour: was, column, delta: -1 });
      if (now !== null) moves.push({ trackingId: null, hour: now, column, delta: 1 });
    }
    if (beforeId !== afterId || was !== now) {
      if (beforeId !== null && was !== null) moves.push({ trackingId: beforeId, hour: was, column, delta: -1 });
      if (afterId !== null && now !== null) moves.push({ trackingId: afterId, hour: now, column, delta: 1 });
    }
  }
  return moves;
}

/** A bucket with every count 0, for filling. */
export function emptyBucket(start: number): StatsBucket {
  return { start, delivered: 0, hardBounced: 0, softBounced: 0, complained: 0, opened: 0, clicked: 0, unsubscribed: 0 };
}

/** A bucket from counts in `statColumns` order. */
export function bucketOf(start: number, counts: readonly number[]): StatsBucket {
  const bucket = emptyBucket(start);
  statColumns.forEach((column, i) => (bucket[column] = counts[i] ?? 0));
  return bucket;
}

/**
 * Sums hour counts (hours since the epoch → counts in `statColumns` order) into the buckets of
 * `[from, to)` (epoch ms, multiples of the interval), ascending, buckets whose counts are all 0 left out.
 */
export function sumHours(
  hours: Iterable<readonly [number, readonly number[]]>,
  interval: StatsInterval,
  from: number,
  to: number,
): StatsBucket[] {
  const size = intervalMs[interval];
  const sums = new Map<number, number[]>();
  for (const [hour, counts] of hours) {
    const time = hour * HOUR_MS;
    if (time < from || time >= to) continue;
    const start = Math.floor(time / size) * size;
    const sum = sums.get(start) ?? statFacts.map(() => 0);
    counts.forEach((count, i) => (sum[i]! += count));
    sums.set(start, sum);
  }
  return [...sums]
    .filter(([, counts]) => counts.some((count) => count !== 0))
    .sort(([a], [b]) => a - b)
    .map(([start, counts]) => bucketOf(start, counts));
}
