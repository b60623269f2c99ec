const DAY_MS = 86_400_000;
const YEAR_10000 = 253_402_300_800_000;
/** `00` … `99` and `000` … `999`: a lookup, not a padding, per field. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/**
 * Epoch milliseconds as the wire's ISO 8601 UTC text with milliseconds and a trailing `Z` — what
 * `new Date(ms).toISOString()` gives, computed with integer arithmetic because `toISOString` costs
 * about 2 µs on Node 20, more than the rest of a suppression check. Years outside 1970–9999 use it.
 */
export function formatTimestamp(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  // Everything below is a small non-negative integer, so `| 0` truncates a quotient (no Math.floor).
  const time = ms - days * DAY_MS;
  const seconds = (time / 1000) | 0;
  const minutes = (seconds / 60) | 0;
  const hours = (minutes / 60) | 0;
  // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
  const z = days + 719_468;
  const era = (z / 146_097) | 0;
  const dayOfEra = z - era * 146_097;
  const yearOfEra = ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0));
  const monthIndex = ((5 * dayOfYear + 2) / 153) | 0;
  const day = dayOfYear - (((153 * monthIndex + 2) / 5) | 0) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return (
    `${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes - hours * 60]}:` +
    `${TWO_DIGITS[seconds - minutes * 60]}.${THREE_DIGITS[time - seconds * 1000]}Z`
  );
}
