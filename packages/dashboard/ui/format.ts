const count = new Intl.NumberFormat('en');
const percent = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 1 });

/** 12345 → "12,345". */
export function formatCount(value: number): string {
  return count.format(value);
}

const fraction = new Intl.NumberFormat('en', { style: 'percent', maximumFractionDigits: 2 });

/** A rate the API gives as a fraction, as "6.1%" or "0.09%": two decimals, since complaint thresholds are tenths of a percent. */
export function formatFraction(value: number): string {
  return fraction.format(value);
}

/** The share `part / whole` as "93.1%", or "–" when there is no whole to take a share of. */
export function formatRate(part: number, whole: number): string {
  return whole === 0 ? '–' : percent.format(part / whole);
}

/** An API timestamp as "2026-11-23 14:05:12 UTC": unambiguous for people in any time zone. */
export function formatTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** The UTC day of an API timestamp or a day, as "2026-11-23". */
export function formatDay(iso: string): string {
  return iso.slice(0, 10);
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
const units = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
] as const;

/**
 * How far ahead an API timestamp is, as "in 29 days", "in 5 hours", "in 3 minutes": the largest unit
 * of at least one, rounded. Past or under a minute away: "in less than a minute" (the service stops
 * listing an entry at its expiry; the browser's clock may run a little ahead of the service's).
 */
export function formatTimeUntil(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  for (const [unit, size] of units) {
    if (ms >= size) return relative.format(Math.round(ms / size), unit);
  }
  return 'in less than a minute';
}
