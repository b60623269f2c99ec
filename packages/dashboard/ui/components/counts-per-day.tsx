import type { StatsBucketView } from '@mailwarden/core';
import type { Api, DayRange } from '../api.js';
import { formatCount, formatDay } from '../format.js';
import { useDailyStats } from '../data/stats.js';
import { Empty, Failure, Loading } from './states.js';

/** The ranges offered, in days; the page's address keeps the choice (`days=`). */
export const dayChoices = [7, 30, 90] as const;
export type DayChoice = (typeof dayChoices)[number];
export const DEFAULT_DAYS: DayChoice = 30;

export function parseDays(value: string | null): DayChoice {
  return dayChoices.find((days) => String(days) === value) ?? DEFAULT_DAYS;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The `days` UTC days ending with `lastDay` ("2026-11-23"), as the stats routes take them: `to` is exclusive. */
export function daysEndingWith(lastDay: string, days: number): DayRange {
  const to = Date.parse(lastDay) + DAY_MS;
  return { from: formatDay(new Date(to - days * DAY_MS).toISOString()), to: formatDay(new Date(to).toISOString()) };
}

type Counted = Exclude<keyof StatsBucketView, 'start'>;

/** What is counted per day, in the order the chart and the table show it. */
const series: readonly { key: Counted; label: string }[] = [
  { key: 'delivered', label: 'Delivered' },
  { key: 'hardBounced', label: 'Hard bounced' },
  { key: 'softBounced', label: 'Soft bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'unsubscribed', label: 'Unsubscribed' },
];

/**
 * Counts per UTC day of one tracking ID (or of the project, `trackingId` `null`): a chart for the eye,
 * and the same numbers in a table, which is what assistive technology reads (the chart is hidden from it).
 */
export function CountsPerDay(props: {
  api: Api;
  trackingId: string | null;
  /** The last day shown, "2026-11-23". */
  lastDay: string;
  /** What the last day is, for people: "today", "its last event". */
  lastDayIs: string;
  days: DayChoice;
  onDays(days: DayChoice): void;
  title: string;
}) {
  const { api, trackingId, lastDay, lastDayIs, days, onDays, title } = props;
  const range = daysEndingWith(lastDay, days);
  const stats = useDailyStats(api, trackingId, range);
  return (
    <section class="per-day" aria-labelledby="per-day-title" aria-describedby="per-day-range-note">
      <div class="per-day-head">
        <h2 id="per-day-title">{title}</h2>
        <div class="field inline">
          <label for="per-day-days">Days</label>
          <select id="per-day-days" value={String(days)} onChange={(event) => onDays(parseDays(event.currentTarget.value))}>
            {dayChoices.map((choice) => (
              <option key={choice} value={String(choice)}>
                {choice} days
              </option>
            ))}
          </select>
        </div>
      </div>
      <p class="note" id="per-day-range-note">
        The {days} days up to {lastDayIs}: {range.from} to {lastDay}, UTC. Each message counts once per outcome, on the day it first
        happened.
      </p>
      {stats.state === 'loading' ? (
        <Loading>Loading the counts per day…</Loading>
      ) : stats.state === 'failed' ? (
        <Failure error={stats.error} retry={stats.reload} doing="load the counts per day" />
      ) : stats.data.buckets.every((bucket) => series.every(({ key }) => bucket[key] === 0)) ? (
        <Empty>Nothing was delivered, bounced, complained about, opened, clicked or unsubscribed from in these days.</Empty>
      ) : (
        <>
          <Chart buckets={stats.data.buckets} />
          <Totals buckets={stats.data.buckets} />
          <details class="per-day-numbers">
            <summary>Numbers per day</summary>
            <NumbersTable buckets={stats.data.buckets} />
          </details>
        </>
      )}
    </section>
  );
}

const total = (buckets: readonly StatsBucketView[], key: Counted) => buckets.reduce((sum, bucket) => sum + bucket[key], 0);

/** One row of bars per series, each scaled to its own busiest day, so a few complaints show beside thousands delivered. */
function Chart({ buckets }: { buckets: readonly StatsBucketView[] }) {
  const width = buckets.length;
  return (
    <div class="chart" aria-hidden="true">
      {series.map(({ key, label }) => {
        const peak = Math.max(0, ...buckets.map((bucket) => bucket[key]));
        return (
          <div key={key} class={`chart-row series-${key}`}>
            <span class="chart-label">{label}</span>
            {/* biome-ignore lint/a11y/noSvgWithoutTitle: each bar has its own title; the numbers are in the table below */}
            <svg class="chart-bars" viewBox={`0 0 ${width} 10`} preserveAspectRatio="none">
              <line class="chart-baseline" x1="0" y1="10" x2={width} y2="10" vector-effect="non-scaling-stroke" />
              {buckets.map((bucket, day) => {
                const count = bucket[key];
                if (count === 0) return null;
                // At least a sliver, so a day with one event never looks like a day with none.
                const height = Math.max(0.8, (10 * count) / peak);
                return (
                  <rect
                    key={bucket.start}
                    class="chart-bar"
                    x={day + 0.15}
                    y={10 - height}
                    width="0.7"
                    height={height}
                    data-day={formatDay(bucket.start)}
                  >
                    <title>{`${formatDay(bucket.start)}: ${formatCount(count)} ${label.toLowerCase()}`}</title>
                  </rect>
                );
              })}
            </svg>
            <span class="chart-peak">{peak === 0 ? 'none' : `up to ${formatCount(peak)} a day`}</span>
          </div>
        );
      })}
      <div class="chart-axis">
        <span>{formatDay(buckets[0]?.start ?? '')}</span>
        <span>{formatDay(buckets.at(-1)?.start ?? '')}</span>
      </div>
    </div>
  );
}

function Totals({ buckets }: { buckets: readonly StatsBucketView[] }) {
  return (
    <p class="per-day-totals">
      In these days: {series.map(({ key, label }) => `${formatCount(total(buckets, key))} ${label.toLowerCase()}`).join(' · ')}.
    </p>
  );
}

function NumbersTable({ buckets }: { buckets: readonly StatsBucketView[] }) {
  return (
    <div class="table-scroll">
      <table class="per-day-table">
        <caption>Messages per UTC day, days without any included</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {series.map(({ key, label }) => (
              <th key={key} scope="col" class="number">
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {buckets.map((bucket) => (
            <tr key={bucket.start}>
              <th scope="row">
                <time dateTime={formatDay(bucket.start)}>{formatDay(bucket.start)}</time>
              </th>
              {series.map(({ key }) => (
                <td key={key} class={bucket[key] === 0 ? 'number zero' : 'number'}>
                  {formatCount(bucket[key])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            {series.map(({ key }) => (
              <td key={key} class="number">
                {formatCount(total(buckets, key))}
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
    </div>
  );
}
