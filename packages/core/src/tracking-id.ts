import { MailwardenError } from './errors.js';
import { storableTextProblem } from './storable-text.js';

/** A tracking ID holds at most this many Unicode code points (the spec's "128 characters"). */
export const MAX_TRACKING_ID_CODE_POINTS = 128;

/** Length in code points, so an emoji counts once, as a person would count it. */
export function codePointLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

export type TrackingIdCheck = { ok: true; trackingId: string | null } | { ok: false; problem: 'too_long' | 'malformed'; reason: string };

/**
 * A tracking ID is taken exactly as the sender set it: no trimming, no case folding. Empty means
 * absent. Over 128 code points, text that is not well-formed Unicode, or U+0000, is invalid.
 */
export function checkTrackingId(value: string | null | undefined): TrackingIdCheck {
  if (value === null || value === undefined || value === '') return { ok: true, trackingId: null };
  if (typeof value !== 'string') return { ok: false, problem: 'malformed', reason: 'tracking ID must be a string' };
  if (codePointLength(value) > MAX_TRACKING_ID_CODE_POINTS) {
    return { ok: false, problem: 'too_long', reason: `tracking ID is over ${MAX_TRACKING_ID_CODE_POINTS} characters` };
  }
  const problem = storableTextProblem(value);
  if (problem !== undefined) return { ok: false, problem: 'malformed', reason: `tracking ID ${problem}` };
  return { ok: true, trackingId: value };
}

/** Validates a tracking ID given by a caller (a query filter, a send helper), or throws `invalid_tracking_id`. */
export function assertTrackingId(value: string): string {
  const check = checkTrackingId(value);
  if (!check.ok) throw new MailwardenError('invalid_tracking_id', `Invalid tracking ID: ${check.reason}.`);
  if (check.trackingId === null) throw new MailwardenError('invalid_tracking_id', 'Invalid tracking ID: it is empty.');
  return check.trackingId;
}

/**
 * The key `search` matches against: case-insensitive substring search compares lower-cased text.
 * Computed here, once, so every store (whatever its own collation) searches the same way.
 */
export function trackingIdSearchKey(text: string): string {
  return text.toLowerCase();
}

/**
 * Orders strings by Unicode code point, which is also UTF-8 byte order: the order Postgres (`COLLATE
 * "C"`) and Redis use. JavaScript's `<` compares UTF-16 code units, which differs for astral characters.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF, so they sort after every other unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
