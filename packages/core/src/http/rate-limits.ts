import { LRUCache } from 'lru-cache';
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
   * Counts one request in each bucket `kind:id` and answers at once, per bucket in order, what is
   * exceeded when it is over its limit: the count is this instance's view (the store's count at its last
   * sync plus the hits not yet sent), and the store is told in the background. A bucket without a limit
   * is not counted; a store that fails lets the requests through.
   */
  hit(buckets: readonly (readonly [kind: RateLimitBucket, id: string])[]): (RateLimitExceeded | undefined)[];
}

/** How often, at most, a failing store's count is logged: a limiter that fails open must not flood the log either. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** How long, at most, a bucket's hits wait in an instance before they are sent to the store (checked on requests). */
export const RATE_SYNC_INTERVAL_MS = 250;

/** A bucket's hits are sent once this many wait: a 50th of its limit, so instances lag each other by little. */
export const rateSyncSize = (limit: number): number => Math.max(1, Math.ceil(limit / 50));

/** Buckets an instance keeps a count of at most; the least recently hit go first (the next hit asks the store again). */
const MAX_BUCKETS = 100_000;

/** One bucket's count in one window as this instance sees it (docs/decisions.md, "Rate limits off the request path"). */
interface WindowCount {
  readonly bucket: string;
  readonly window: number;
  /** The store's count at the last sync's answer. */
  known: number;
  /** This instance's hits not yet sent. */
  pending: number;
  /** The hits of the sync under way; 0 when none is (one at a time per bucket). */
  sending: number;
  /** When the oldest pending hit was counted. */
  pendingSince: number;
}

/**
 * Fixed-window limits counted by `store.hitRateLimits` (shared by every instance on the store), or, for a
 * store without it, in this process by the same code over a local counter. A request never waits for the
 * store: each instance answers from its own view and sends its hits in the background, a bucket's at
 * its first hit in a window, then every `rateSyncSize(limit)` hits or `RATE_SYNC_INTERVAL_MS`, all due
 * buckets in one call. Throws `RangeError` for a bad option.
 *
 * @example
 * const limiter = createRateLimiter(mailwarden.store, { perClient: 600 }, { now: Date.now, logger });
 * const [exceeded] = limiter.hit([['client', request.remoteAddress ?? 'unknown']]);
 */
export function createRateLimiter(
  store: Pick<Store, 'hitRateLimits'>,
  options: RateLimitOptions,
  context: { now: () => number; logger: MailwardenLogger },
): RateLimiter {
  const limits = checkRateLimits(options);
  const windowMs = limits.windowSeconds * 1000;
  const count = store.hitRateLimits === undefined ? createLocalCounter() : store.hitRateLimits.bind(store);
  const windowCounts = new LRUCache<string, WindowCount>({ max: MAX_BUCKETS });
  // Counts with hits not yet sent and no call under way, in the order their wait began: the front waited longest.
  const unsent = new Set<WindowCount>();
  let loggedAt = -Infinity;

  const failed = (error: unknown): void => {
    // Fail open (docs/decisions.md): the hits are dropped, so a store outage does not refuse what the check cache can answer.
    const now = context.now();
    if (now - loggedAt < FAILURE_LOG_INTERVAL_MS) return;
    loggedAt = now;
    context.logger.error({ err: error }, 'mailwarden: counting a rate limit failed; requests pass unlimited meanwhile');
  };

  const sync = (due: WindowCount[], now: number): void => {
    for (const windowCount of due) {
      windowCount.sending = windowCount.pending;
      windowCount.pending = 0;
      unsent.delete(windowCount);
    }
    let counted: Promise<number[]>;
    try {
      counted = count(
        due.map(({ bucket }) => bucket),
        windowMs,
        now,
        due.map(({ sending }) => sending),
      );
    } catch (error) {
      counted = Promise.reject(error);
    }
    counted.then(
      (totals) => {
        due.forEach((windowCount, i) => {
          windowCount.known = totals[i] ?? windowCount.known + windowCount.sending;
        });
        answered(due);
      },
      (error: unknown) => {
        answered(due);
        failed(error);
      },
    );
  };

  /** Hits that came while a call was under way wait their turn from its answer on. */
  const answered = (due: WindowCount[]): void => {
    const now = context.now();
    for (const windowCount of due) {
      windowCount.sending = 0;
      if (windowCount.pending === 0) continue;
      windowCount.pendingSince = now;
      unsent.add(windowCount);
    }
  };

  return {
    hit(buckets) {
      const now = context.now();
      const window = Math.floor(now / windowMs);
      const due = new Set<WindowCount>();
      const answers = buckets.map(([kind, id]): RateLimitExceeded | undefined => {
        const limit = limits[limitOf[kind]];
        if (limit === 0) return undefined;
        const bucket = `${kind}:${id}`;
        let windowCount = windowCounts.get(bucket);
        if (windowCount === undefined || windowCount.window !== window) {
          windowCount = { bucket, window, known: 0, pending: 0, sending: 0, pendingSince: now };
          windowCounts.set(bucket, windowCount);
          // The first hit in a window asks the store at once: other instances' hits show by the next.
          due.add(windowCount);
        }
        // Over by the store's own count: refused to the window's end, so more hits would change no answer.
        if (windowCount.known >= limit) return exceeded(limit, now);
        // A count with a call under way waits for its answer (see answered), so the scan below skips none.
        if (windowCount.pending === 0 && windowCount.sending === 0) {
          windowCount.pendingSince = now;
          unsent.add(windowCount);
        }
        windowCount.pending += 1;
        if (windowCount.pending >= rateSyncSize(limit)) due.add(windowCount);
        return windowCount.known + windowCount.sending + windowCount.pending > limit ? exceeded(limit, now) : undefined;
      });
      for (const windowCount of unsent) {
        if (windowCount.window !== window) unsent.delete(windowCount);
        else if (now - windowCount.pendingSince < RATE_SYNC_INTERVAL_MS) break;
        else due.add(windowCount);
      }
      const ready = [...due].filter(({ sending, pending }) => sending === 0 && pending > 0);
      if (ready.length > 0) sync(ready, now);
      return answers;
    },
  };

  function exceeded(limit: number, now: number): RateLimitExceeded {
    const windowEnd = (Math.floor(now / windowMs) + 1) * windowMs;
    return { limit, windowSeconds: limits.windowSeconds, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) };
  }
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
  const totals = new Map<string, number>();
  return async (buckets, windowMs, now, counts) => {
    const window = Math.floor(now / windowMs);
    if (window !== currentWindow) {
      currentWindow = window;
      totals.clear();
    }
    return buckets.map((bucket, i) => {
      const counted = (totals.get(bucket) ?? 0) + (counts?.[i] ?? 1);
      totals.set(bucket, counted);
      return counted;
    });
  };
}

/**
 * The bucket a route's requests count in by address, before any key or signature is checked: every
 * API-key route's `client`; the others' `rateLimitBucket` (the one-click pages' `unsubscribe`), else webhook intake's.
 */
export function rateLimitBucketOf(route: Pick<Route, 'auth' | 'rateLimitBucket'>): RateLimitBucket {
  return route.auth === 'api_key' ? 'client' : (route.rateLimitBucket ?? 'webhook');
}
