const DAY_MS = 86_400_000;
const YEAR_10000 = 253_402_300_800_000;

/**
 * Epoch milliseconds as the wire's ISO 8601 UTC text with milliseconds and a trailing `Z` — what
 * `new Date(ms).toISOString()` gives, computed with integer arithmetic because `toISOString` costs
 * about 2 µs on Node 20, more than the rest of a suppression check. Years outside 1970–9999 use it.
 */
export function formatTimestamp(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}
