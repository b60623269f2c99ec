import type { StoredSoftBounceRule, SuppressionRecord } from '../store/store.js';
import { packRule } from './provenance.js';

/** One day in milliseconds: rules are configured in days. */
export const DAY_MS = 86_400_000;

/**
 * How late a soft bounce may arrive and still count with the bounces around it: history is kept for
 * the rule's window plus this. Three days: the longest any supported provider retries a webhook
 * (docs/decisions.md, "The soft-bounce rule").
 */
export const SOFT_BOUNCE_LATENESS_MS = 3 * DAY_MS;

/** How long a suppression the soft-bounce rule makes lasts when `expireAfterDays.softBounces` is not given. */
export const DEFAULT_SOFT_BOUNCE_EXPIRY_DAYS = 30;

/**
 * Suppress an address after `bounces` soft bounces of distinct messages within `days` days, counted by
 * the events' own times (docs/decisions.md, "The soft-bounce rule").
 *
 * @example
 * // Suppress after 3 soft bounces in 7 days:
 * const rules: SuppressionRules = { softBounces: { bounces: 3, days: 7 } };
 */
export interface SoftBounceRule {
  /** An integer from 1 to 100. */
  bounces: number;
  /** More than 0, at most 365; fractions allowed. */
  days: number;
  /** A delivery to the address resets the count: soft bounces before it no longer count. Default false. */
  resetOnDelivery?: boolean;
}

/**
 * After how many days a suppression expires, by what made it: the soft-bounce rule, else its reason
 * (an unsubscribe, reason `manual` and source `unsubscribe`, has its own). `null` or absent: never,
 * except the soft-bounce rule's, which defaults to `DEFAULT_SOFT_BOUNCE_EXPIRY_DAYS`. An `expires_at`
 * given on an add or an import wins over these.
 */
export interface SuppressionExpiry {
  softBounces?: number | null;
  hardBounce?: number | null;
  complaint?: number | null;
  manual?: number | null;
  unsubscribe?: number | null;
}

/** A project's suppression rules beside the policy: all off by default. */
export interface SuppressionRules {
  softBounces?: SoftBounceRule;
  expireAfterDays?: SuppressionExpiry;
}

/** Which expiry applies to a record (`SuppressionExpiry`'s key). */
export function expiryKind(record: Pick<SuppressionRecord, 'reason' | 'provenance'>): keyof SuppressionExpiry {
  if (record.provenance?.rule !== undefined) return 'softBounces';
  if (record.provenance?.source === 'unsubscribe') return 'unsubscribe';
  return record.reason === 'hard_bounce' ? 'hardBounce' : record.reason === 'complaint' ? 'complaint' : 'manual';
}

/** How many milliseconds a record of this kind lasts under `rules`; `null` for ever. */
export function expiresAfterMs(rules: SuppressionRules | undefined, kind: keyof SuppressionExpiry): number | null {
  const days = rules?.expireAfterDays?.[kind];
  if (days != null) return Math.round(days * DAY_MS);
  if (kind === 'softBounces' && days === undefined) return DEFAULT_SOFT_BOUNCE_EXPIRY_DAYS * DAY_MS;
  return null;
}

/** The `expiresAt` the rules give a record made at `createdAt`, or `undefined` for never. */
export function ruleExpiresAt(
  rules: SuppressionRules | undefined,
  record: Pick<SuppressionRecord, 'reason' | 'provenance' | 'createdAt'>,
): number | undefined {
  const ms = expiresAfterMs(rules, expiryKind(record));
  return ms === null ? undefined : record.createdAt + ms;
}

/** The soft-bounce rule as stores apply it, or `undefined` when the rules have none. */
export function storedSoftBounceRule(rules: SuppressionRules | undefined): StoredSoftBounceRule | undefined {
  const rule = rules?.softBounces;
  if (rule === undefined) return undefined;
  const resetOnDelivery = rule.resetOnDelivery === true;
  const windowMs = Math.round(rule.days * DAY_MS);
  return {
    bounces: rule.bounces,
    windowMs,
    days: rule.days,
    resetOnDelivery,
    expiresAfterMs: expiresAfterMs(rules, 'softBounces'),
    keepMs: windowMs + SOFT_BOUNCE_LATENESS_MS,
    packed: packRule({ bounces: rule.bounces, days: rule.days, resetOnDelivery }),
  };
}

/**
 * Checks rules as configured, so a mistake fails at start-up with a message naming the field. Returns
 * them unchanged.
 */
export function checkSuppressionRules(rules: SuppressionRules, where = 'rules'): SuppressionRules {
  const fail = (field: string, problem: string): never => {
    throw new RangeError(`${where}.${field} ${problem}`);
  };
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(rules)) throw new RangeError(`${where} must be an object`);
  const known = new Set(['softBounces', 'expireAfterDays']);
  for (const key of Object.keys(rules)) if (!known.has(key)) fail(key, 'is not a rule (softBounces, expireAfterDays)');
  const rule = rules.softBounces;
  if (rule !== undefined) {
    if (!isObject(rule)) fail('softBounces', 'must be an object ({ bounces, days, resetOnDelivery? })');
    const fields = new Set(['bounces', 'days', 'resetOnDelivery']);
    for (const key of Object.keys(rule))
      if (!fields.has(key)) fail(`softBounces.${key}`, 'is not a field (bounces, days, resetOnDelivery)');
    if (!Number.isInteger(rule.bounces) || rule.bounces < 1 || rule.bounces > 100)
      fail('softBounces.bounces', 'must be an integer from 1 to 100');
    if (typeof rule.days !== 'number' || !(rule.days > 0 && rule.days <= 365))
      fail('softBounces.days', 'must be a number of days above 0, at most 365');
    if (rule.resetOnDelivery !== undefined && typeof rule.resetOnDelivery !== 'boolean')
      fail('softBounces.resetOnDelivery', 'must be true or false');
  }
  const expiry = rules.expireAfterDays;
  if (expiry !== undefined) {
    if (!isObject(expiry)) fail('expireAfterDays', 'must be an object of days by kind');
    const kinds = new Set(['softBounces', 'hardBounce', 'complaint', 'manual', 'unsubscribe']);
    for (const [kind, days] of Object.entries(expiry)) {
      if (!kinds.has(kind))
        fail(`expireAfterDays.${kind}`, 'is not a kind of suppression (softBounces, hardBounce, complaint, manual, unsubscribe)');
      if (days !== null && !(typeof days === 'number' && days > 0 && days <= 36_500)) {
        fail(`expireAfterDays.${kind}`, 'must be a number of days above 0 (at most 36 500), or null for never');
      }
    }
  }
  return rules;
}
