import type { StoredAlertRule } from '../store/changes.js';
import { isStreamName } from '../stream.js';

/**
 * Deliverability alerts of a project (docs/core.md, "Alerts"): its bounce and complaint rates over the
 * last `window` messages, each crossing its threshold up or down appending one change to the feed.
 * Every field is optional; the defaults are SES's review levels (5 % bounces, 0.1 % complaints).
 *
 * @example
 * const alerts: AlertRules = { bounceRate: 5, complaintRate: 0.1, pauseStreams: ['marketing'] };
 */
export interface AlertRules {
  /** How many messages a window holds: the last this many by arrival. An integer from 10 to 100 000; default 1 000. */
  window?: number;
  /** No alert fires while a window holds fewer messages. An integer from 1 to `window`; default 100. */
  minMessages?: number;
  /** Hard bounces, in percent of the window's messages, at which the bounce alert fires. Default 5. */
  bounceRate?: number;
  /** Complaints, in percent, at which the complaint alert fires. Default 0.1. */
  complaintRate?: number;
  /** A firing alert resolves below this fraction of its threshold, so a rate hovering at it does not flap. Above 0, at most 1; default 0.8. */
  resolveRatio?: number;
  /** Whether each tracking ID gets a window of its own besides the project's. Default false. */
  trackingIds?: boolean;
  /** Streams whose sending is paused when the project's rate crosses up (until an operator resumes them). Default none. */
  pauseStreams?: readonly string[];
}

export const DEFAULT_ALERT_WINDOW = 1000;
export const DEFAULT_ALERT_MIN_MESSAGES = 100;
export const DEFAULT_BOUNCE_RATE = 5;
export const DEFAULT_COMPLAINT_RATE = 0.1;
export const DEFAULT_RESOLVE_RATIO = 0.8;
/** The largest window: stores keep one slot per message of a window. */
export const MAX_ALERT_WINDOW = 100_000;

/** Parts per million of a percentage. */
const PPM_PER_PERCENT = 10_000;

/**
 * Checks alert rules as configured, so a mistake fails at start-up with a message naming the field
 * (a `RangeError`). Returns them unchanged.
 */
export function checkAlertRules(rules: AlertRules, where = 'alerts'): AlertRules {
  const fail = (field: string, problem: string): never => {
    throw new RangeError(`${where}.${field} ${problem}`);
  };
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) throw new RangeError(`${where} must be an object`);
  const known = ['window', 'minMessages', 'bounceRate', 'complaintRate', 'resolveRatio', 'trackingIds', 'pauseStreams'];
  for (const key of Object.keys(rules)) if (!known.includes(key)) fail(key, `is not an alert setting (${known.join(', ')})`);
  const window = rules.window ?? DEFAULT_ALERT_WINDOW;
  if (!Number.isInteger(window) || window < 10 || window > MAX_ALERT_WINDOW)
    fail('window', `must be an integer from 10 to ${MAX_ALERT_WINDOW}`);
  const minMessages = rules.minMessages ?? Math.min(DEFAULT_ALERT_MIN_MESSAGES, window);
  if (!Number.isInteger(minMessages) || minMessages < 1 || minMessages > window)
    fail('minMessages', `must be an integer from 1 to the window (${window})`);
  for (const field of ['bounceRate', 'complaintRate'] as const) {
    const rate = rules[field];
    // At least one part per million, the unit stores compare in.
    if (rate !== undefined && !(typeof rate === 'number' && rate >= 0.0001 && rate <= 100))
      fail(field, 'must be a percentage from 0.0001 to 100');
  }
  const ratio = rules.resolveRatio;
  if (ratio !== undefined && !(typeof ratio === 'number' && ratio > 0 && ratio <= 1))
    fail('resolveRatio', 'must be a number above 0, at most 1');
  if (rules.trackingIds !== undefined && typeof rules.trackingIds !== 'boolean') fail('trackingIds', 'must be true or false');
  const streams = rules.pauseStreams;
  if (streams !== undefined) {
    if (!Array.isArray(streams)) fail('pauseStreams', 'must be an array of stream names');
    streams.forEach((stream, index) => {
      if (!isStreamName(stream))
        fail(
          `pauseStreams[${index}]`,
          "must be a stream name: 1 to 64 lower-case letters, digits, '-' and '_', starting with a letter or digit",
        );
    });
  }
  return rules;
}

/** Alert rules as stores apply them: defaults filled in, rates in parts per million (integers, compared alike in JS, Lua and SQL). */
export function storedAlertRule(rules: AlertRules): StoredAlertRule {
  const window = rules.window ?? DEFAULT_ALERT_WINDOW;
  const resolveRatio = rules.resolveRatio ?? DEFAULT_RESOLVE_RATIO;
  const thresholds = (percent: number) => ({
    firePpm: Math.round(percent * PPM_PER_PERCENT),
    // At least 1: a threshold of 0 would never resolve.
    resolvePpm: Math.max(1, Math.round(percent * resolveRatio * PPM_PER_PERCENT)),
  });
  return {
    window,
    minMessages: rules.minMessages ?? Math.min(DEFAULT_ALERT_MIN_MESSAGES, window),
    bounce: thresholds(rules.bounceRate ?? DEFAULT_BOUNCE_RATE),
    complaint: thresholds(rules.complaintRate ?? DEFAULT_COMPLAINT_RATE),
    trackingIds: rules.trackingIds === true,
    pause: [...new Set(rules.pauseStreams ?? [])],
  };
}

/**
 * `MailwardenOptions.alerts` as one lookup of stored rules: an object checked and converted now, a
 * lookup's answers when first seen (each object once: a lookup usually answers with a few long-lived ones).
 */
export function alertRulesOf(
  option: AlertRules | ((projectId: string) => AlertRules | undefined),
): (projectId: string) => StoredAlertRule | undefined {
  if (typeof option !== 'function') {
    const stored = storedAlertRule(checkAlertRules(option));
    return () => stored;
  }
  const storedOf = new WeakMap<AlertRules, StoredAlertRule>();
  return (projectId) => {
    const rules = option(projectId);
    if (rules === undefined) return undefined;
    let stored = storedOf.get(rules);
    if (stored === undefined) {
      stored = storedAlertRule(checkAlertRules(rules, `alerts(${JSON.stringify(projectId)})`));
      storedOf.set(rules, stored);
    }
    return stored;
  };
}
