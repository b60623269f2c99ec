import type { MailwardenContext } from './context.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId, parseInput, parseTimeRange } from '../input.js';
import { statsQuerySchema, type Stats, type StatsRangeQuery } from '../api-schemas.js';
import { formatTimestamp } from '../timestamp.js';
import { emptyBucket, intervalMs, type StatsInterval } from '../messages/stats.js';

/** The most buckets one answer holds: 31 days of hours, 731 days (two years, one of them leap). */
export const MAX_STATS_BUCKETS: Readonly<Record<StatsInterval, number>> = { hour: 31 * 24, day: 731 };

/**
 * Counts over time of a project (`trackingId` null) or of one tracking ID: every bucket of the range,
 * zeros included, so a chart needs no filling. The range must lie on the interval's boundaries (whole
 * UTC hours, UTC midnights): a bucket is never cut, so no count is ever split or guessed.
 */
export async function readStats(
  { store }: MailwardenContext,
  projectId: string,
  trackingId: string | null,
  query: StatsRangeQuery,
): Promise<Stats> {
  assertProjectId(projectId);
  const parsed = parseInput(statsQuerySchema, query, 'stats query');
  const { from, to } = parseTimeRange(parsed) as { from: number; to: number };
  const interval = parsed.interval;
  const size = intervalMs[interval];
  const unit = interval === 'hour' ? 'whole UTC hours' : 'UTC midnights';
  for (const [name, time] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (time % size !== 0) {
      throw new MailwardenError('invalid_request', `Invalid ${name}: with interval=${interval} it must be one of the ${unit}.`, {
        details: [{ path: name, message: `must be one of the ${unit}` }],
      });
    }
  }
  const count = (to - from) / size;
  if (count > MAX_STATS_BUCKETS[interval]) {
    throw new MailwardenError('invalid_request', `Invalid range: at most ${MAX_STATS_BUCKETS[interval]} ${interval}s at a time.`, {
      details: [{ path: 'to', message: `at most ${MAX_STATS_BUCKETS[interval]} ${interval}s after from` }],
    });
  }
  const found = await store.getStats(projectId, { ...(trackingId === null ? {} : { trackingId }), interval, from, to });
  const byStart = new Map(found.map((bucket) => [bucket.start, bucket]));
  const buckets = Array.from({ length: count }, (_, i) => {
    const start = from + i * size;
    return { ...(byStart.get(start) ?? emptyBucket(start)), start: formatTimestamp(start) };
  });
  return { trackingId, interval, from: formatTimestamp(from), to: formatTimestamp(to), buckets };
}
