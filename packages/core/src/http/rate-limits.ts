import { MailwardenError } from '../errors.js';
import type { MailwardenLogger } from '../services/hooks.js';
import type { Store } from '../store/store.js';
import type { Route } from './routes.js';

/**
 * Requests allowed per fixed window, per bucket (docs/http.md, "Rate limits"); 0 = no limit for that bucket.
 * `perClient` counts every API request of a client address before its key is checked, `perKey` every
 * request of a key after, `unsubscribe` the one-click page and POST per address, `webhooks` webhook
 * intake per address before its verification.
 */
export interface RateLimitOptions {
  /** The window's length. Default 60. */
  windowSeconds?: number;
  /** Default 6000. */
  perClient?: number;
  /** Default 6000. */
  perKey?: number;
  /** Default 600. */
  unsubscribe?: number;
  /** Default 12000. */
  webhooks?: number;
}

/** Generous defaults (docs/decisions.md, "Rate limits (issue 27)"): 100 requests a second, sustained, per client and per key. */
export const defaultRateLimits: Readonly<Required<RateLimitOptions>> = {
  windowSeconds: 60,
  perClient: 6000,
  perKey: 6000,
  unsubscribe: 600,
  webhooks: 12000,
};

/** What a bucket counts; its name in the store is `<kind>:<address or key name>`. */
export type RateLimitBucket = 'client' | 'key' | 'unsubscribe' | 'webhook';

const limitOf = { client: 'perClient', key: 'perKey', unsubscribe: 'unsubscribe', webhook: 'webhooks' } as const;

/** A request over its bucket's limit: what its 429 says. */
export interface RateLimitExceeded {
  limit: number;
  windowSeconds: number;
  /** Whole seconds to the window's end, at least 1: the `Retry-After`. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request in each bucket `kind:id` (one store round trip for all); answers, per bucket in
   * order, what is exceeded when it is over its limit. A bucket without a limit is not counted; a store
   * that fails lets the request through.
   */
  hit(buckets: readonly (readonly [kind: RateLimitBucket, id: string])[]): Promise<(RateLimitExceeded | undefined)[]>;
}

/** How often, at most, a failing store's count is logged: a limiter that fails open must not flood the log either. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * Fixed-window limits counted by `store.hitRateLimits` (shared by every instance on the store), or, for a
 * store without it, in this process with the same windows. Throws `RangeError` for a bad option.
 *
 * @example
 * const limiter = createRateLimiter(mailwarden.store, { perClient: 600 }, { now: Date.now, logger });
 * const [exceeded] = await limiter.hit([['client', request.remoteAddress ?? 'unknown']]);
 */
export function createRateLimiter(
  store: Pick<Store, 'hitRateLimits'>,
  options: RateLimitOptions,
  context: { now: () => number; logger: MailwardenLogger },
): RateLimiter {
  const limits = checkRateLimits(options);
  const windowMs = limits.windowSeconds * 1000;
  const count = store.hitRateLimits === undefined ? createLocalCounter() : store.hitRateLimits.bind(store);
  let loggedAt = -Infinity;
  return {
    async hit(buckets) {
      const limited = buckets.filter(([kind]) => limits[limitOf[kind]] > 0);
      if (limited.length === 0) return buckets.map(() => undefined);
      const now = context.now();
      let counts: number[];
      try {
        counts = await count(
          limited.map(([kind, id]) => `${kind}:${id}`),
          windowMs,
          now,
        );
      } catch (error) {
        // Fail open (docs/decisions.md): a store outage must not also refuse what the check cache can answer.
        if (now - loggedAt >= FAILURE_LOG_INTERVAL_MS) {
          loggedAt = now;
          context.logger.error({ err: error }, 'mailwarden: counting a rate limit failed; requests pass unlimited meanwhile');
        }
        return buckets.map(() => undefined);
      }
      const windowEnd = (Math.floor(now / windowMs) + 1) * windowMs;
      const retryAfterSeconds = Math.max(1, Math.ceil((windowEnd - now) / 1000));
      let counted = 0;
      return buckets.map(([kind]) => {
        const limit = limits[limitOf[kind]];
        if (limit === 0) return undefined;
        return (counts[counted++] ?? 0) <= limit ? undefined : { limit, windowSeconds: limits.windowSeconds, retryAfterSeconds };
      });
    },
  };
}

/** The `rate_limited` error of an exceeded limit, with the details docs/errors.md promises. */
export function rateLimitedError({ limit, windowSeconds, retryAfterSeconds }: RateLimitExceeded): MailwardenError {
  return new MailwardenError(
    'rate_limited',
    `Too many requests: at most ${limit} every ${windowSeconds} s. Retry in ${retryAfterSeconds} s.`,
    {
      details: { limit, windowSeconds },
    },
  );
}

/** The options with their defaults, each checked: a whole number of seconds ≥ 1, limits whole numbers ≥ 0. */
export function checkRateLimits(options: RateLimitOptions): Required<RateLimitOptions> {
  const limits = { ...defaultRateLimits };
  for (const name of Object.keys(defaultRateLimits) as (keyof RateLimitOptions)[]) {
    const value = options[name];
    if (value === undefined) continue;
    const least = name === 'windowSeconds' ? 1 : 0;
    if (!Number.isSafeInteger(value) || value < least) throw new RangeError(`rateLimits.${name} must be a whole number ≥ ${least}`);
    limits[name] = value;
  }
  return limits;
}

/**
 * `hitRateLimits` in this process, for stores without it: each bucket's count in the current window.
 * Counts of ended windows are dropped as the window moves, so memory holds one window's buckets.
 */
function createLocalCounter(): NonNullable<Store['hitRateLimits']> {
  let currentWindow = Number.NaN;
  const counts = new Map<string, number>();
  return async (buckets, windowMs, now) => {
    const window = Math.floor(now / windowMs);
    if (window !== currentWindow) {
      currentWindow = window;
      counts.clear();
    }
    return buckets.map((bucket) => {
      const counted = (counts.get(bucket) ?? 0) + 1;
      counts.set(bucket, counted);
      return counted;
    });
  };
}

/**
 * The bucket a route's requests count in by address, before any key or signature is checked: every
 * API-key route's `client`, webhook intake's `webhook`, the one-click pages' `unsubscribe`.
 */
export function rateLimitBucketOf(route: Pick<Route, 'auth' | 'path'>): RateLimitBucket {
  if (route.auth === 'api_key') return 'client';
  return route.path.includes('/unsubscribe/') ? 'unsubscribe' : 'webhook';
}
