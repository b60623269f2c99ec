import { randomUUID } from 'node:crypto';
import { MailwardenError, isStreamName, messageStatuses, type MessageStatus, type Store } from '@mailwarden/core';
import {
  changeFeedRetention,
  type AlertWindow,
  type ChangeFeedOptions,
  type OutboundProgress,
  type StoredAlertRule,
  eventOutcomeOfCode,
  statFacts,
  sumHours,
  statusFacts,
  isEmailHash,
  packProvenance,
  reasonRank,
  trackingIdSearchKey,
  compareCodePoints,
  type ApplyEventsOptions,
  type EventOutcome,
  type StoredSoftBounceRule,
  type SuppressionMergeOutcome,
  type MessageRecord,
  type StoredEvent,
  type SuppressionInvalidation,
  type SuppressionPosition,
  type SuppressionRecord,
  type TrackingIdRecord,
  type WebhookTokenClaim,
  type KeyChange,
} from '@mailwarden/core/store';
import type { Cluster, Redis } from 'ioredis';
import {
  decodeAllowlistMember,
  decodeAllowlistValue,
  expiringProjectsKeyOf,
  decodeMessage,
  decodeTrackingIdRow,
  eventKeyOf,
  messageKeyOf,
  timelineKeyOf,
  timelineMember,
  decodeTimelineMember,
  hashOfSuppressionMember,
  orderBytes,
  orderMember,
  orderOf,
  packSuppression,
  suppressionFields,
  suppressionMember,
  projectKeys,
  projectPrefix,
  statsKeyOf,
  streamSuppressionKeys,
  trackingIdMessagesKeyOf,
  unpackSuppression,
  webhookTokenKeyOf,
  alertWindowKeyOf,
  decodeChange,
  decodeOutboundState,
  decodePausedStream,
  feedKeysOf,
  feedProjectsKeyOf,
  outboundKeyOf,
  pausedStreamsKeyOf,
  apiKeysKeyOf,
  rateLimitKeyOf,
} from './layout.js';
import * as scripts from './generated/scripts.js';
import { locateScriptError, type Script } from './script.js';

const DAY_MS = 86_400_000;

export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` client. It stays the caller's: the store never closes it. */
  client: Redis | Cluster;
  /**
   * Starts every key and the invalidation channel, e.g. `'mailwarden:'`, so several stores (or other
   * data) can share one Redis. No braces: the store adds the `{projectId}` hash tag after it.
   */
  keyPrefix: string;
  /**
   * Optional message retention: each message, and each event's dedup key, expires `messagesMs` after
   * its last write (Redis PEXPIRE). Suppressions and tracking-ID counters never expire.
   */
  retention?: { messagesMs: number };
  /**
   * Index entries one listing call reads at most (default 20 000) when a filter (a message status, a
   * tracking-ID search, a partial search of addresses) skips entries: it bounds how long one script blocks Redis. A sparser match
   * takes further calls, each resuming where the last stopped.
   */
  scanBudget?: number;
  /**
   * Keep a change feed (docs/storage.md, "The change feed, alerts and outbound state (Redis)"): every write appends what it changed to
   * its project's feed, in the same script. Absent: no feed, and writes cost what they did.
   */
  changes?: ChangeFeedOptions;
}

/** A `Store` whose optional parts this store always has, and a probe of its invalidation subscribers. */
export type RedisStore = Store &
  Required<Pick<Store, 'subscribeInvalidations' | 'claimWebhookToken' | 'purgeExpired' | 'hitRateLimits'>> & {
    /**
     * Whether invalidations reach this store's subscriptions now: publishes a probe on the invalidation
     * channel (other subscribers ignore it) and resolves `true` once every subscription has heard it, or
     * `false` if one has not within `timeoutMs`: its connection is down or not subscribed again yet, and
     * invalidations published meanwhile are lost to it. `true` at once without subscriptions. Rejects
     * with `store_unavailable` when the probe cannot be published. For readiness checks.
     */
    probeInvalidations(timeoutMs: number): Promise<boolean>;
    /**
     * Moves a project's suppressions that a release before the order blocks wrote (a HASH field per
     * 64-hex hash and the `so` ZSET) to the current layout, in script calls of `UPGRADE_PER_CALL`,
     * each whole: it may stop anywhere (a failure, `close()`, a crash) and resume later. Reads and
     * writes see every suppression meanwhile. The store starts it by itself the first time a check
     * finds the old layout (again 10 s after one failed); call it to upgrade ahead, e.g. after a
     * deploy. Resolves once none remain; rejects as a write does when Redis refuses a step.
     */
    upgradeSuppressions(projectId: string): Promise<void>;
  };

/** Expired suppressions one `purgeExpired` call deletes at most, over every project (each script call its share). */
export const PURGE_PER_CALL = 1000;
/** Records per script call of the bulk suppression writes (`mergeSuppressions`, `removeSuppressions`). */
const RECORDS_PER_CALL = 1000;
/**
 * Events per applyEvents script call. Each event is its own atomic step, so a batch may be cut
 * between any two events: 100 new SendGrid-like events hold Redis 2–4 ms (8 at most under load), and
 * other clients' commands run between the calls. Fewer per call cost no throughput (measured).
 */
export const EVENTS_PER_SCRIPT = 100;
const DEFAULT_SCAN_BUDGET = 20_000;
/** Suppressions one upgradeSuppressions call moves to the current layout: 5–7 ms of Redis (about 13 µs each). */
export const UPGRADE_PER_CALL = 500;
/** How long after a failed background upgrade checks leave it alone. */
const UPGRADE_RETRY_MS = 10_000;
/** Changes older than the feed's `maxAgeMs` one `purgeExpired` call deletes at most, over every project. */
export const PURGE_CHANGES_PER_CALL = 10_000;
/** Changes a filtered page of the feed looks at, at least (10 × its limit otherwise). */
const CHANGE_SCAN_MIN = 1000;
/** How long a rate-limit window's count outlives the window (the callers' clocks differ a little). */
const RATE_LIMIT_MARGIN_MS = 1000;
/** A text as a SCAN pattern that matches exactly it (`*`, `?`, `[`, `]` and `\` escaped). */
const globEscape = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');
/** Scopes as `syncApiKeys` stores them (`,`-separated), as a list. */
const scopeList = (stored: string): string[] => (stored === '' ? [] : stored.split(','));

/** Tracking IDs one call of buildSearchBlocks puts in blocks at most: about 1 µs each. */
const BUILD_PER_CALL = 5000;

/** Per status, as `messageStatus` derives it: facts that must be absent (a stronger status) and the one that must be present. */
const statusMasks = (() => {
  const masks = new Map<MessageStatus | undefined, { stronger: number; want: number }>([[undefined, { stronger: 0, want: 0 }]]);
  let stronger = 0;
  for (const status of messageStatuses) {
    // `sent` is the fallback: none of the stronger facts, whatever else the message has.
    const want = status === 'sent' ? 0 : statusFacts[status];
    masks.set(status, { stronger, want });
    stronger |= statusFacts[status];
  }
  return masks;
})();

/**
 * Where a newest-first walk starts: strictly after the page's `after` member, or at the first entry of
 * a time before `to` (exclusive), whichever is further along.
 */
function latestStart(afterStart: string, to: number | undefined): string {
  if (to === undefined) return afterStart;
  const toStart = `[${orderOf(Math.max(to - 1, -Number.MAX_SAFE_INTEGER))}`;
  return afterStart === '-' || toStart.slice(1) > afterStart.slice(1) ? toStart : afterStart;
}

/** `latestStart` for the binary members of the suppression order blocks. */
function latestSuppressionStart(after: SuppressionPosition | undefined, to: number | undefined): Buffer | string {
  const afterMember = after === undefined ? undefined : suppressionMember(after.createdAt, after.hash);
  if (to === undefined) return afterMember === undefined ? '-' : Buffer.concat([EXCLUSIVE, afterMember]);
  const toStart = orderBytes(Math.max(to - 1, -Number.MAX_SAFE_INTEGER));
  return afterMember === undefined || Buffer.compare(toStart, afterMember) > 0
    ? Buffer.concat([INCLUSIVE, toStart])
    : Buffer.concat([EXCLUSIVE, afterMember]);
}
const EXCLUSIVE = Buffer.from('(');
const INCLUSIVE = Buffer.from('[');

const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
// ioredis's messages for a connection that is gone or not ready, and Redis's replies that mean "not now".
const UNAVAILABLE_MESSAGES =
  /^(?:Connection is closed|Stream isn't writeable|Cluster isn't ready|None of startup nodes|Cluster is disconnect|Too many Cluster redirections|Command timed out|Node is disconnected|Socket timeout|connect ETIMEDOUT|(?:LOADING|BUSY|CLUSTERDOWN|MASTERDOWN|TRYAGAIN|READONLY|NOREPLICAS) )/;

/** A driver error meaning "Redis cannot be reached now" becomes `store_unavailable`; anything else is thrown as is. */
function fail(error: unknown): never {
  if (
    error instanceof Error &&
    (UNAVAILABLE_NAMES.has(error.name) ||
      UNAVAILABLE_CODES.has((error as { code?: string }).code ?? '') ||
      UNAVAILABLE_MESSAGES.test(error.message))
  ) {
    throw new MailwardenError('store_unavailable', 'The Redis store cannot be reached; try again later.', { cause: error });
  }
  throw error;
}

function assertTime(time: number, what: string): void {
  if (!Number.isSafeInteger(time)) throw new RangeError(`${what} is not an integer number of milliseconds: ${time}`);
}

/**
 * A suppression as the scripts take it (`mergeSuppression` in lua/include/mergeSuppression.lua), checked
 * first. `listIndex` gives the index in KEYS of a stream list's HASH, its heads right after it.
 */
function scriptSuppression(suppression: SuppressionRecord, listIndex: (stream: string) => number): ScriptSuppression {
  assertSuppression(suppression);
  const encoded: ScriptSuppression = {
    h: suppression.hash,
    r: reasonRank(suppression.reason),
    c: suppression.createdAt,
    e: suppression.email,
  };
  if (suppression.provenance !== undefined) encoded.p = packProvenance(suppression.provenance);
  if (suppression.expiresAt !== undefined) encoded.x = suppression.expiresAt;
  if (suppression.stream !== undefined) {
    encoded.t = suppression.stream;
    encoded.k = listIndex(suppression.stream);
  }
  return encoded;
}

function assertSuppression(record: SuppressionRecord): void {
  if (!isEmailHash(record.hash)) throw new TypeError(`not a suppression hash: ${JSON.stringify(record.hash)}`);
  assertTime(record.createdAt, 'createdAt');
  if (record.expiresAt !== undefined) assertTime(record.expiresAt, 'expiresAt');
  if (record.stream !== undefined) assertStream(record.stream);
}

/** A record as a read at `now` sees it: absent once expired (docs/decisions.md, "Suppressions that expire"). */
function live(record: SuppressionRecord | undefined, now: number | undefined): SuppressionRecord | undefined {
  return record?.expiresAt !== undefined && now !== undefined && record.expiresAt <= now ? undefined : record;
}

/** The soft-bounce rule as the applyEvents script reads it (lua/include/softBounceRule.lua). */
function scriptRule(rule: StoredSoftBounceRule): string {
  const encoded: Record<string, unknown> = { n: rule.bounces, w: rule.windowMs, r: rule.resetOnDelivery, k: rule.keepMs, p: rule.packed };
  if (rule.expiresAfterMs !== null) encoded.x = rule.expiresAfterMs;
  return JSON.stringify(encoded);
}

/** The alert rule as the applyEvents script reads it (lua/include/alertWindows.lua), checked first. */
function scriptAlertRule(rule: StoredAlertRule): string {
  const counts = [
    rule.window,
    rule.minMessages,
    rule.bounce.firePpm,
    rule.bounce.resolvePpm,
    rule.complaint.firePpm,
    rule.complaint.resolvePpm,
  ];
  if (!counts.every((count) => Number.isSafeInteger(count) && count >= 0) || rule.window < 1) {
    throw new RangeError(`alert rule numbers are not non-negative integers: ${JSON.stringify(rule)}`);
  }
  return JSON.stringify({
    w: rule.window,
    m: rule.minMessages,
    b: [rule.bounce.firePpm, rule.bounce.resolvePpm],
    c: [rule.complaint.firePpm, rule.complaint.resolvePpm],
    t: rule.trackingIds,
    p: rule.pause,
  });
}

/** An event's `ruleInput` as the applyEvents script reads it, checked first. */
function scriptRuleInput(input: NonNullable<StoredEvent['ruleInput']>): ScriptRuleInput {
  if (!isEmailHash(input.hash)) throw new TypeError(`not a suppression hash: ${JSON.stringify(input.hash)}`);
  assertTime(input.at, 'at');
  if (input.kind === 'delivery') return { d: 1, h: input.hash, t: input.at };
  if (!/^[0-9a-f]{32}$/.test(input.cause.eventId)) throw new TypeError(`not an event id: ${JSON.stringify(input.cause.eventId)}`);
  return { h: input.hash, e: input.email, t: input.at, i: input.cause.eventId, m: input.message, q: input.packed };
}

/** A rule input as the applyEvents script reads it: a delivery (`d`) or a soft bounce. */
interface ScriptRuleInput {
  d?: 1;
  h: string;
  t: number;
  e?: string;
  i?: string;
  m?: string;
  q?: string;
}

/** A list's stream names keys: anything but a stream name (`isStreamName`) could name another list's. */
function assertStream(stream: string): void {
  if (!isStreamName(stream)) throw new TypeError(`not a stream name: ${JSON.stringify(stream)}`);
}

/**
 * The index in KEYS of each stream list's HASH, its heads key pushed right after it: `keyIndex` gives a
 * key's index, adding it when new.
 */
const streamListIndex =
  (prefix: string, keyIndex: (key: string) => number) =>
  (stream: string): number => {
    const list = streamSuppressionKeys(prefix, stream);
    const index = keyIndex(list.suppressions);
    keyIndex(list.suppressionHeads);
    return index;
  };

/** An event as the applyEvents script reads it: short names, key arguments by their index in KEYS. */
interface ScriptEvent {
  d: number;
  m?: {
    k: number;
    key: string;
    p: string;
    i: string;
    r: string;
    f: number;
    a: number;
    /** `orderOf(a)`, so the script need not format it. */
    o: string;
    b: number;
    t?: string;
    /** The stream, absent for none. */
    s?: string;
    q?: string;
    x?: number;
    /** The timeline's key index, the entry's time as a string (exact for every safe integer) and its member. */
    l?: number;
    z?: string;
    e?: string;
    /** The entry's event type, with the feed on. */
    y?: string;
  };
  s?: ScriptSuppression;
  u?: ScriptRuleInput;
  /** The event's actor (`StoredEvent.actor`), with the feed on. */
  a?: string;
}

/**
 * A suppression as the scripts take it: hash, reason rank, createdAt, email, packed provenance, and for
 * a stream's list the stream and the index in KEYS of its HASH (its heads the next key).
 */
interface ScriptSuppression {
  h: string;
  r: number;
  c: number;
  e: string;
  p?: string;
  /** expiresAt, absent for never. */
  x?: number;
  t?: string;
  k?: number;
}

/**
 * A store on Redis or Redis Cluster, over an ioredis client you create and close. Reads are single
 * commands (HGET, HMGET) or read-only scripts; every write is one Lua script call, so it is atomic;
 * `applyEvents` sends a batch as script calls of 100 events, in turn, each event whole in one call, so
 * each event is atomic and no call holds Redis long. Every key of a project carries the
 * `{projectId}` hash tag. Needs Redis 7.0 or later.
 *
 * @example
 * import { createMailwarden } from '@mailwarden/core';
 * import { createRedisStore } from '@mailwarden/redis';
 * import { Redis } from 'ioredis';
 *
 * const client = new Redis(process.env.REDIS_URL!);
 * const mailwarden = createMailwarden({ store: createRedisStore({ client, keyPrefix: 'mailwarden:' }) });
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const { client, keyPrefix } = options;
  if (typeof keyPrefix !== 'string' || /[{}]/.test(keyPrefix)) {
    throw new TypeError('keyPrefix must be a string without braces: the store adds the {projectId} hash tag after it.');
  }
  const clientOptions = client.options as { keyPrefix?: string; redisOptions?: { keyPrefix?: string } };
  if (clientOptions.keyPrefix || clientOptions.redisOptions?.keyPrefix) {
    // Scripts derive keys from stored data, which ioredis would not prefix: one prefix, the store's.
    throw new TypeError('The ioredis client has a keyPrefix option; set keyPrefix on createRedisStore instead.');
  }
  const retentionMs = options.retention?.messagesMs;
  if (retentionMs !== undefined && !(Number.isSafeInteger(retentionMs) && retentionMs > 0)) {
    throw new RangeError(`retention.messagesMs must be a positive integer: ${retentionMs}`);
  }
  const scanBudget = options.scanBudget ?? DEFAULT_SCAN_BUDGET;
  if (!(Number.isSafeInteger(scanBudget) && scanBudget > 0)) throw new RangeError(`scanBudget must be a positive integer: ${scanBudget}`);
  const channel = `${keyPrefix}invalidations`;
  const retention = options.changes === undefined ? undefined : changeFeedRetention(options.changes);
  /** Projects this store has listed in the registry whose feeds `purgeExpired` trims by age (`feedProjectsKeyOf`). */
  const feedRegistered = new Set<string>();
  /**
   * The scripts' feed argument: the feed's maxLength, or '' without a feed (then they append nothing).
   * The first write of a project lists it for `purgeExpired` (outside its slot, so not in the script).
   */
  const feedArg = async (projectId: string): Promise<string> => {
    if (retention === undefined) return '';
    if (!feedRegistered.has(projectId)) {
      projectPrefix(keyPrefix, projectId);
      await client.sadd(feedProjectsKeyOf(keyPrefix), projectId).catch(fail);
      feedRegistered.add(projectId);
    }
    return String(retention.maxLength);
  };
  /** Each subscription, by the function that stops it. */
  const subscriptions = new Set<() => Promise<void>>();
  /** Probes on their way: the subscriptions that have not heard each yet, and what to call when none is left. */
  const probes = new Map<string, { unheard: Set<() => Promise<void>>; heard: () => void }>();
  const hear = (probe: string, subscription: () => Promise<void>) => {
    const waiting = probes.get(probe);
    if (waiting?.unheard.delete(subscription) && waiting.unheard.size === 0) waiting.heard();
  };

  /**
   * EVALSHA; EVAL once per server that does not have the script yet (NOSCRIPT), which caches it there.
   * With `buffers`, bulk replies come back as Buffers (binary members), not UTF-8 strings. A Lua error
   * names the file and line of lua/ it comes from (locateScriptError).
   */
  const run = async (
    script: Script,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
    buffers = false,
  ): Promise<unknown> => {
    try {
      try {
        if (buffers) return await client.callBuffer(script.readOnly ? 'evalsha_ro' : 'evalsha', script.sha, keys.length, ...keys, ...args);
        return script.readOnly
          ? await client.evalsha_ro(script.sha, keys.length, ...keys, ...args)
          : await client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
        if (buffers) return await client.callBuffer(script.readOnly ? 'eval_ro' : 'eval', script.lua, keys.length, ...keys, ...args);
        return script.readOnly
          ? await client.eval_ro(script.lua, keys.length, ...keys, ...args)
          : await client.eval(script.lua, keys.length, ...keys, ...args);
      }
    } catch (error) {
      return fail(locateScriptError(script, error));
    }
  };

  /**
   * The keys every suppression script takes, in this order: of the project-wide list, or of `stream`'s
   * (its HASH and heads; no old layout).
   */
  const suppressionKeys = (projectId: string, stream?: string): string[] => {
    const keys = projectKeys(keyPrefix, projectId);
    if (stream === undefined) return [keys.suppressions, keys.suppressionHeads, keys.legacySuppressionOrder];
    assertStream(stream);
    const list = streamSuppressionKeys(keys.prefix, stream);
    return [list.suppressions, list.suppressionHeads];
  };
  /** Projects this store has listed in the registry `purgeExpired` visits (`expiringProjectsKeyOf`). */
  const registered = new Set<string>();
  /**
   * Lists a project for `purgeExpired` before a write that may store a suppression that expires: the
   * registry is outside the project's slot, so no script can write both. Once per project and store:
   * nothing removes a project from it.
   */
  const registerExpiring = async (projectId: string): Promise<void> => {
    if (registered.has(projectId)) return;
    projectPrefix(keyPrefix, projectId);
    await client.sadd(expiringProjectsKeyOf(keyPrefix), projectId).catch(fail);
    registered.add(projectId);
  };
  /**
   * Every key matching a SCAN pattern, of every master on a Cluster (a pattern with a project's hash
   * tag matches keys of one node only). Walks the whole keyspace: for erasures, not for hot paths.
   */
  const scanKeys = async (pattern: string): Promise<string[]> => {
    const nodes: (Redis | Cluster)[] = client.isCluster ? (client as Cluster).nodes('master') : [client];
    const found: string[] = [];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000).catch(fail);
        cursor = next;
        found.push(...keys);
      } while (cursor !== '0');
    }
    return found;
  };
  /** The keys of a project's messages to `recipient`, read from its message order `scanBudget` members a call. */
  const recipientMessages = async (projectId: string, recipient: string): Promise<string[]> => {
    const keys = projectKeys(keyPrefix, projectId);
    const found: string[] = [];
    let start = '-';
    for (;;) {
      const [resume, ...messageKeys] = (await run(
        scripts.findRecipientMessages,
        [keys.messageOrder],
        [keys.prefix, start, scanBudget, recipient],
      )) as string[];
      found.push(...messageKeys);
      if (!resume) return found;
      start = `(${resume}`;
    }
  };
  /** Adds `hits[i]` to key i (INCRBY, then PEXPIRE `ttl`) in one pipeline: the keys share a node. */
  const countHits = async (keys: readonly string[], hits: readonly number[], ttl: number): Promise<number[]> => {
    const pipeline = client.pipeline();
    keys.forEach((key, i) => pipeline.incrby(key, hits[i]!).pexpire(key, ttl));
    const results = (await pipeline.exec().catch(fail)) ?? [];
    return keys.map((_, i) => {
      const [error, count] = results[2 * i] ?? [new Error('Connection is closed.'), 0];
      if (error) fail(error);
      return Number(count);
    });
  };
  /**
   * Deletes changes older than `before` from the feeds of the projects in the registry, from each
   * feed's front, at most PURGE_CHANGES_PER_CALL a sweep (the next sweep deletes the rest).
   */
  const purgeChanges = async (before: number): Promise<void> => {
    let budget = PURGE_CHANGES_PER_CALL;
    let cursor = '0';
    do {
      const [next, projectIds] = await client.sscan(feedProjectsKeyOf(keyPrefix), cursor, 'COUNT', 100).catch(fail);
      cursor = next;
      for (const projectId of projectIds) {
        if (budget <= 0) return;
        const feed = feedKeysOf(projectPrefix(keyPrefix, projectId));
        budget -= Number(await run(scripts.purgeChanges, [feed.counter, feed.changes], [before, budget]));
      }
    } while (cursor !== '0');
  };
  /** Projects this store saw without suppressions of the old layout: their checks are plain HGET/HMGET. */
  const upgraded = new Set<string>();
  /** Upgrades under way in this store, by project. */
  const upgrades = new Map<string, Promise<void>>();
  /** When a check may start the upgrade of a project again after one failed. */
  const upgradeRetryAt = new Map<string, number>();
  let closed = false;
  const upgradeSuppressions = (projectId: string): Promise<void> => {
    let upgrade = upgrades.get(projectId);
    if (upgrade === undefined) {
      upgrade = (async () => {
        try {
          while (!closed) {
            if (Number(await run(scripts.upgradeSuppressions, suppressionKeys(projectId), [UPGRADE_PER_CALL])) === 0) {
              upgraded.add(projectId);
              return;
            }
          }
        } finally {
          upgrades.delete(projectId);
        }
      })();
      upgrades.set(projectId, upgrade);
    }
    return upgrade;
  };
  /**
   * The stored values of some hashes. A project not yet seen upgraded is read with the old layout's
   * fields too, in one atomic script; finding the old layout starts its upgrade (best effort: a failed
   * one starts again at a later check).
   */
  const storedValues = async (projectId: string, hashes: readonly string[]): Promise<(string | null)[]> => {
    const keys = projectKeys(keyPrefix, projectId);
    const fields = suppressionFields(hashes);
    if (fields === undefined) {
      // Anything but 64 lower-case hex is stored under no field (decoded, 'ABC…' would read as 'abc…').
      const valid = hashes.filter(isEmailHash);
      const values = valid.length === 0 ? [] : await storedValues(projectId, valid);
      let at = 0;
      return hashes.map((hash) => (isEmailHash(hash) ? values[at++]! : null));
    }
    if (upgraded.has(projectId)) {
      return fields.length === 1
        ? [await client.hget(keys.suppressions, fields[0]!).catch(fail)]
        : client.hmget(keys.suppressions, ...fields).catch(fail);
    }
    const [legacy, ...values] = (await run(scripts.getLegacySuppressions, [keys.suppressions, keys.legacySuppressionOrder], hashes)) as [
      number,
      ...(string | null)[],
    ];
    noteLegacy(projectId, legacy);
    return values;
  };
  /** What a check's read of the old layout found (`legacy`: 1 while it remains): it starts the upgrade. */
  const noteLegacy = (projectId: string, legacy: number): void => {
    if (legacy === 0) upgraded.add(projectId);
    else if (!closed && !(Date.now() < (upgradeRetryAt.get(projectId) ?? 0))) {
      // A refused upgrade (a read-only replica, out of memory) is tried again at a check a while later.
      upgradeSuppressions(projectId).catch(() => upgradeRetryAt.set(projectId, Date.now() + UPGRADE_RETRY_MS));
    }
  };

  /**
   * The checks of some hashes in a stream: per hash the project-wide record when there is one, else the
   * stream's (`stream` set), else undefined. One read-only script call that reads both lists (their
   * keys share the project's slot); while the project may hold the old layout, one that reads the old
   * fields too. A script, not a pipeline of two HMGETs: the second command cost the client as much as
   * the first (measured: 19 µs against 28 a check, 14 without a stream).
   */
  const checksInStream = async (
    projectId: string,
    hashes: readonly string[],
    stream: string,
    now?: number,
  ): Promise<(SuppressionRecord | undefined)[]> => {
    assertStream(stream);
    const keys = projectKeys(keyPrefix, projectId);
    const fields = suppressionFields(hashes);
    if (fields === undefined) {
      // Anything but 64 lower-case hex is stored under no field, as in storedValues.
      const valid = hashes.filter(isEmailHash);
      const records = valid.length === 0 ? [] : await checksInStream(projectId, valid, stream, now);
      let at = 0;
      return hashes.map((hash) => (isEmailHash(hash) ? records[at++] : undefined));
    }
    const streamList = streamSuppressionKeys(keys.prefix, stream).suppressions;
    let values: (string | null)[];
    if (upgraded.has(projectId)) {
      values = (await run(scripts.getStreamSuppressions, [keys.suppressions, streamList], fields)) as (string | null)[];
    } else {
      const [legacy, ...reply] = (await run(
        scripts.getLegacySuppressions,
        [keys.suppressions, keys.legacySuppressionOrder, streamList],
        hashes,
      )) as [number, ...(string | null)[]];
      values = reply;
      noteLegacy(projectId, legacy);
    }
    // An expired project-wide record does not hide the stream's.
    return hashes.map((hash, i) => {
      const projectWide = values[i];
      const record = projectWide == null ? undefined : live(unpackSuppression(hash, projectWide), now);
      if (record !== undefined) return record;
      const inStream = values[hashes.length + i];
      return inStream == null ? undefined : live(unpackSuppression(hash, inStream, stream), now);
    });
  };

  /** One applyEvents script call's KEYS and ARGV. Throws on a malformed event, before anything is sent. */
  function encodeEvents(
    projectId: string,
    events: readonly StoredEvent[],
    options: ApplyEventsOptions,
    rule: string,
    feed: string,
    alerts: string,
  ): { keys: string[]; args: (string | number)[] } {
    const keys = projectKeys(keyPrefix, projectId);
    const keyList = [
      keys.suppressions,
      keys.suppressionHeads,
      keys.legacySuppressionOrder,
      keys.messageOrder,
      keys.trackingIds,
      keys.trackingIdOrder,
      keys.searchBlockHeads,
      keys.searchBuildCursor,
    ];
    const indexes = new Map<string, number>();
    /** The 1-based index of a key in KEYS, each key listed once. */
    const keyIndex = (key: string): number => {
      let index = indexes.get(key);
      if (index === undefined) {
        index = keyList.push(key);
        indexes.set(key, index);
      }
      return index;
    };
    const listIndex = streamListIndex(keys.prefix, keyIndex);
    // Built whole before the call: a malformed event throws here, before anything is written.
    const encoded = events.map((event): ScriptEvent => {
      const encodedEvent: ScriptEvent = { d: keyIndex(eventKeyOf(keys.prefix, event.key)) };
      const message = event.message;
      if (message !== null) {
        assertTime(message.firstEventAt, 'firstEventAt');
        assertTime(message.lastEventAt, 'lastEventAt');
        if (!Number.isSafeInteger(message.facts) || message.facts < 0) throw new RangeError(`facts is not a bit set: ${message.facts}`);
        const { trackingId } = message;
        encodedEvent.m = {
          k: keyIndex(messageKeyOf(keys.prefix, message.key)),
          key: message.key,
          p: message.provider,
          i: message.messageId,
          r: message.recipient,
          f: message.facts,
          a: message.firstEventAt,
          o: orderOf(message.firstEventAt),
          b: message.lastEventAt,
        };
        if (message.stream !== null) encodedEvent.m.s = message.stream;
        if (trackingId !== null) {
          const searchKey = event.trackingIdSearchKey ?? trackingIdSearchKey(trackingId);
          encodedEvent.m.t = trackingId;
          // Usually the ID itself (already lower-case): then the script takes `t`.
          if (searchKey !== trackingId) encodedEvent.m.q = searchKey;
          encodedEvent.m.x = keyIndex(trackingIdMessagesKeyOf(keys.prefix, trackingId));
        }
        const entry = event.timelineEntry;
        if (entry !== undefined) {
          assertTime(entry.occurredAt, 'occurredAt');
          if (!/^[0-9a-f]{32}$/.test(entry.id)) throw new TypeError(`not a timeline entry id: ${JSON.stringify(entry.id)}`);
          encodedEvent.m.l = keyIndex(timelineKeyOf(keys.prefix, message.key));
          encodedEvent.m.z = String(entry.occurredAt);
          encodedEvent.m.e = timelineMember(entry);
          // The feed's status changes name the event's type.
          if (feed !== '') encodedEvent.m.y = entry.type;
        }
      }
      if (event.suppression !== null) encodedEvent.s = scriptSuppression(event.suppression, listIndex);
      // Without a rule the input is ignored (ApplyEventsOptions.softBounces), so it is not sent.
      if (event.ruleInput !== undefined && rule !== '') encodedEvent.u = scriptRuleInput(event.ruleInput);
      // Only the feed stores it: without one, the events cost what they did.
      if (event.actor !== undefined && feed !== '') encodedEvent.a = event.actor;
      return encodedEvent;
    });
    return {
      keys: keyList,
      args: [JSON.stringify(encoded), keys.prefix, retentionMs ?? '', channel, projectId, options.now ?? '', rule, feed, alerts],
    };
  }

  return {
    async getSuppression(projectId, hash, stream, now) {
      if (stream !== undefined) return (await checksInStream(projectId, [hash], stream, now))[0];
      const [value] = await storedValues(projectId, [hash]);
      return value == null ? undefined : live(unpackSuppression(hash, value), now);
    },

    async getSuppressions(projectId, hashes, stream, now) {
      if (stream !== undefined) {
        assertStream(stream);
        return hashes.length === 0 ? [] : checksInStream(projectId, hashes, stream, now);
      }
      if (hashes.length === 0) return [];
      const values = await storedValues(projectId, hashes);
      return values.map((value, index) => (value == null ? undefined : live(unpackSuppression(hashes[index]!, value), now)));
    },

    async addSuppression(projectId, record, now, actor) {
      assertSuppression(record);
      const { hash, email, reason, createdAt, provenance, stream, expiresAt } = record;
      if (expiresAt !== undefined) await registerExpiring(projectId);
      const feed = await feedArg(projectId);
      const existing = (await run(scripts.addSuppression, suppressionKeys(projectId, stream), [
        hash,
        packSuppression(record),
        createdAt,
        channel,
        projectId,
        stream ?? '',
        now ?? '',
        expiresAt ?? '',
        feed,
        actor ?? '',
      ])) as string | null;
      if (existing !== null) return { record: unpackSuppression(hash, existing, stream), created: false };
      return {
        record: {
          hash,
          email,
          reason,
          createdAt,
          ...(provenance && { provenance: structuredClone(provenance) }),
          ...(stream !== undefined && { stream }),
          ...(expiresAt !== undefined && { expiresAt }),
        },
        created: true,
      };
    },

    async removeSuppression(projectId, hash, stream, now, actor) {
      const keys = suppressionKeys(projectId, stream);
      if (!isEmailHash(hash)) return undefined;
      if (now !== undefined) assertTime(now, 'now');
      const args = [hash, channel, projectId, stream ?? '', now ?? '', await feedArg(projectId), actor ?? ''];
      const removed = (await run(scripts.removeSuppression, keys, args)) as string | null;
      return removed === null ? undefined : unpackSuppression(hash, removed, stream);
    },

    async mergeSuppressions(projectId, records, now, actor) {
      const outcomes: SuppressionMergeOutcome[] = [];
      if (records.some((record) => record.expiresAt !== undefined)) await registerExpiring(projectId);
      const feed = await feedArg(projectId);
      for (let from = 0; from < records.length; from += RECORDS_PER_CALL) {
        // The project-wide list's keys, then those of each stream's list the batch names.
        const keys = suppressionKeys(projectId);
        const indexes = new Map<string, number>();
        const keyIndex = (key: string): number => {
          let index = indexes.get(key);
          if (index === undefined) indexes.set(key, (index = keys.push(key)));
          return index;
        };
        const listIndex = streamListIndex(projectPrefix(keyPrefix, projectId), keyIndex);
        // Encoded whole before the call: a malformed record throws here, before anything is written.
        const batch = JSON.stringify(records.slice(from, from + RECORDS_PER_CALL).map((record) => scriptSuppression(record, listIndex)));
        const codes = (await run(scripts.mergeSuppressions, keys, [batch, channel, projectId, now ?? '', feed, actor ?? ''])) as string;
        for (const code of codes) outcomes.push(eventOutcomeOfCode(code) as SuppressionMergeOutcome);
      }
      return outcomes;
    },

    async removeSuppressions(projectId, hashes, stream, now, actor) {
      const keys = suppressionKeys(projectId, stream);
      if (now !== undefined) assertTime(now, 'now');
      const feed = await feedArg(projectId);
      const removed: (SuppressionRecord | undefined)[] = [];
      for (let from = 0; from < hashes.length; from += RECORDS_PER_CALL) {
        const batch = hashes.slice(from, from + RECORDS_PER_CALL);
        // Only well-formed hashes reach the script: any other is stored under no field.
        const values = (await run(scripts.removeSuppressions, keys, [
          channel,
          projectId,
          stream ?? '',
          now ?? '',
          feed,
          actor ?? '',
          ...batch.filter(isEmailHash),
        ])) as (string | null)[];
        let at = 0;
        for (const hash of batch) {
          const value = isEmailHash(hash) ? values[at++] : null;
          removed.push(value == null ? undefined : unpackSuppression(hash, value, stream));
        }
      }
      return removed;
    },

    async listSuppressions(projectId, { stream, reason, emailPrefix = '', from, to, expiring, now, limit, after }) {
      const keys = suppressionKeys(projectId, stream);
      // An email holds no control character: a prefix with NUL or \1 finds none (and the script needs none:
      // they start the provenance and the expiry).
      if (limit < 1 || /[\0\x01]/.test(emailPrefix)) return [];
      // A time range of createdAt is a range of the order itself: createdAt < to starts at the order of
      // to − 1, createdAt ≥ from stops before the order of from − 1 (every member extends its order).
      let start = latestSuppressionStart(after, to);
      const stop = from === undefined ? '+' : Buffer.concat([EXCLUSIVE, orderBytes(from - 1)]);
      const rank = reason === undefined ? '' : String(reasonRank(reason));
      const page: SuppressionRecord[] = [];
      // One call, unless a filter skips more than the scan budget: then the next call resumes there.
      for (;;) {
        const args = [
          start,
          stop,
          limit - page.length,
          rank,
          scanBudget,
          emailPrefix,
          now ?? '',
          expiring === undefined ? '' : expiring ? '1' : '0',
        ];
        if (stream !== undefined) args.push(stream);
        const reply = (await run(scripts.listSuppressions, keys, args, true)) as Buffer[];
        for (let at = 1; at < reply.length; at += 2)
          page.push(unpackSuppression(hashOfSuppressionMember(reply[at]!), reply[at + 1]!.toString(), stream));
        if (reply[0]!.length === 0 || page.length >= limit) return page;
        start = Buffer.concat([EXCLUSIVE, reply[0]!]);
      }
    },

    async applyEvents(projectId, events, options = {}) {
      const rule = options.softBounces === undefined ? '' : scriptRule(options.softBounces);
      const alerts = options.alerts === undefined ? '' : scriptAlertRule(options.alerts);
      const feed = await feedArg(projectId);
      // Every call encoded first: a malformed event anywhere fails the batch before anything is written.
      const calls: { keys: string[]; args: (string | number)[] }[] = [];
      for (let from = 0; from < events.length; from += EVENTS_PER_SCRIPT) {
        calls.push(encodeEvents(projectId, events.slice(from, from + EVENTS_PER_SCRIPT), options, rule, feed, alerts));
      }
      // A batch that may store a suppression that expires (its own, or the rule's) lists its project first.
      const ruleExpires = options.softBounces !== undefined && options.softBounces.expiresAfterMs !== null;
      if (events.some((event) => event.suppression?.expiresAt !== undefined || (ruleExpires && event.ruleInput?.kind === 'soft_bounce'))) {
        await registerExpiring(projectId);
      }
      const outcomes: EventOutcome[] = [];
      // Awaited in turn, not pipelined: calls already in Redis's input buffer would run back to back,
      // and a failed call stops the ones after it (those before stay applied; a retry finds them
      // duplicates).
      for (const { keys, args } of calls) {
        const applied = (await run(scripts.applyEvents, keys, args)) as string;
        for (const outcome of applied) outcomes.push(eventOutcomeOfCode(outcome));
      }
      return outcomes;
    },

    async listMessages(
      projectId,
      { trackingId, status, recipient, recipientPrefix, recipientDomain, provider, stream, from, to, limit, after },
    ) {
      if (limit < 1) return [];
      const prefix = projectPrefix(keyPrefix, projectId);
      const index = trackingId === undefined ? `${prefix}mo` : trackingIdMessagesKeyOf(prefix, trackingId);
      const { stronger, want } = statusMasks.get(status)!;
      // firstEventAt ≤ lastEventAt < to: the walk starts at the order of to − 1.
      let start = latestStart(after === undefined ? '-' : `(${orderMember(after.firstEventAt, after.key)}`, to);
      const filters = [
        provider ?? '',
        recipient ?? '',
        from === undefined ? '' : String(from),
        to === undefined ? '' : String(to),
        recipientPrefix ?? '',
        // After an '@', so that '' (no filter) differs from a domain of ''.
        recipientDomain === undefined ? '' : `@${recipientDomain}`,
        stream ?? '',
      ];
      const page: MessageRecord[] = [];
      // One call, unless a filter skips more than the scan budget: then the next call resumes there.
      for (;;) {
        const reply = (await run(
          scripts.listMessages,
          [index],
          [prefix, start, limit - page.length, stronger, want, trackingId ?? '', scanBudget, ...filters],
        )) as (string | null)[];
        for (let at = 1; at < reply.length; at += 9) page.push(decodeMessage(reply, at));
        if (!reply[0] || page.length >= limit) return page;
        start = `(${reply[0]}`;
      }
    },

    async listTrackingIds(projectId, { search, limit, after }) {
      if (limit < 1) return [];
      const keys = projectKeys(keyPrefix, projectId);
      let start = after ?? '';
      const page: TrackingIdRecord[] = [];
      let unbuilt = false;
      // One call, unless a search skips more than the scan budget: then the next call resumes there.
      for (;;) {
        const reply = (await run(
          scripts.listTrackingIds,
          [keys.trackingIds, keys.trackingIdOrder, keys.searchBlockHeads, keys.searchBuildCursor],
          [start, limit - page.length, search ?? '', scanBudget],
        )) as string[];
        unbuilt ||= reply[1] === '1';
        for (let at = 2; at < reply.length; at += 2) page.push(decodeTrackingIdRow(reply[at]!, reply[at + 1]!));
        if (!reply[0] || page.length >= limit) break;
        start = reply[0];
      }
      // IDs stored before search blocks existed: each search page builds blocks for the next scanBudget
      // of them, in calls of at most BUILD_PER_CALL (about 5 ms of Redis each), until searches no longer
      // read every ID.
      // Best effort: the page is already right, and a build refused (out of memory, a read-only
      // replica) is retried by the next search.
      const buildKeys = [keys.trackingIdOrder, keys.searchBlockHeads, keys.searchBuildCursor];
      try {
        for (let built = 0; unbuilt && built < scanBudget; built += BUILD_PER_CALL) {
          unbuilt = (await run(scripts.buildSearchBlocks, buildKeys, [Math.min(BUILD_PER_CALL, scanBudget)])) === 1;
        }
      } catch {
        // The blocks stay as they were: consistent, only not complete yet.
      }
      return page;
    },

    async getMessage(projectId, key) {
      const prefix = projectPrefix(keyPrefix, projectId);
      const reply = (await run(scripts.getMessage, [messageKeyOf(prefix, key), timelineKeyOf(prefix, key)], [])) as
        | (string | null)[]
        | null;
      if (reply === null) return undefined;
      return { ...decodeMessage([key, ...reply.slice(0, 8)], 0), timeline: (reply.slice(8) as string[]).map(decodeTimelineMember) };
    },

    async getTrackingId(projectId, trackingId) {
      return client
        .hget(projectKeys(keyPrefix, projectId).trackingIds, trackingId)
        .then((value) => (value === null ? undefined : decodeTrackingIdRow(trackingId, value)), fail);
    },

    async getStats(projectId, { trackingId, interval, from, to }) {
      assertTime(from, 'from');
      assertTime(to, 'to');
      const prefix = projectPrefix(keyPrefix, projectId);
      // The day HASHes that hold the hours of [from, to): one read of each, in one call.
      const days: number[] = [];
      for (let day = Math.floor(from / DAY_MS); day * DAY_MS < to; day++) days.push(day);
      if (days.length === 0) return [];
      const reply = (await run(
        scripts.getStats,
        days.map((day) => statsKeyOf(prefix, day, trackingId)),
        [],
      )) as string[][];
      const hours: [number, number[]][] = [];
      reply.forEach((fields, i) => {
        for (let at = 0; at < fields.length; at += 2) {
          const [hour, column] = fields[at]!.split(':').map(Number) as [number, number];
          const counts = statFacts.map(() => 0);
          counts[column] = Number(fields[at + 1]);
          hours.push([days[i]! * 24 + hour, counts]);
        }
      });
      return sumHours(hours, interval, from, to);
    },

    async listAllowlist(projectId, { limit, after }) {
      if (limit < 1) return [];
      // Strictly after every member of `after` (its entry, NUL, …): no entry holds a control character.
      const start = after === undefined ? '-' : `[${after}\x01`;
      const members = await client
        .zrange(projectKeys(keyPrefix, projectId).allowlistOrder, start, '+', 'BYLEX', 'LIMIT', 0, limit)
        .catch(fail);
      return members.map(decodeAllowlistMember);
    },

    async addAllowlistEntry(projectId, entry, actor) {
      assertTime(entry.createdAt, 'createdAt');
      const keys = projectKeys(keyPrefix, projectId);
      const existing = (await run(
        scripts.addAllowlistEntry,
        [keys.allowlist, keys.allowlistOrder],
        [entry.key, entry.entry, entry.createdAt, keys.prefix, await feedArg(projectId), actor ?? ''],
      )) as string | null;
      if (existing !== null) return { entry: decodeAllowlistValue(entry.key, existing), created: false };
      return { entry: { key: entry.key, entry: entry.entry, createdAt: entry.createdAt }, created: true };
    },

    async removeAllowlistEntry(projectId, key, now, actor) {
      if (now !== undefined) assertTime(now, 'now');
      const keys = projectKeys(keyPrefix, projectId);
      const removed = (await run(
        scripts.removeAllowlistEntry,
        [keys.allowlist, keys.allowlistOrder],
        [key, now ?? '', keys.prefix, await feedArg(projectId), actor ?? ''],
      )) as string | null;
      return removed === null ? undefined : decodeAllowlistValue(key, removed);
    },

    async findAllowlisted(projectId, recipients) {
      if (recipients.length === 0) return [];
      // Per recipient its hash, then '@' and the text after its address's last '@'.
      const fields = recipients.flatMap(({ hash, email }) => [hash, `@${email.slice(email.lastIndexOf('@') + 1)}`]);
      const values = await client.hmget(projectKeys(keyPrefix, projectId).allowlist, ...fields).catch(fail);
      return recipients.map((_, i) => values[2 * i] != null || values[2 * i + 1] != null);
    },

    async purgeExpired(now) {
      assertTime(now, 'now');
      const registry = expiringProjectsKeyOf(keyPrefix);
      let deleted = 0;
      let cursor = '0';
      // Bounded: at most PURGE_PER_CALL suppressions a sweep; the next sweep deletes the rest.
      suppressions: do {
        const [next, projectIds] = await client.sscan(registry, cursor, 'COUNT', 100).catch(fail);
        cursor = next;
        for (const projectId of projectIds) {
          if (deleted >= PURGE_PER_CALL) break suppressions;
          const keys = projectKeys(keyPrefix, projectId);
          deleted += Number(
            await run(
              scripts.purgeExpired,
              [keys.suppressions, keys.suppressionHeads, keys.legacySuppressionOrder, keys.expiryIndex],
              [now, PURGE_PER_CALL - deleted, channel, projectId, retention === undefined ? '' : String(retention.maxLength)],
            ),
          );
        }
      } while (cursor !== '0');
      if (retention !== undefined) await purgeChanges(now - retention.maxAgeMs);
      return deleted;
    },

    ...(retention !== undefined && { changes: retention }),

    async listChanges(projectId, { after, limit, kinds, actors, hash }) {
      if (!Number.isSafeInteger(after) || after < 0) throw new RangeError(`after is not a non-negative integer: ${after}`);
      if (retention === undefined) return { changes: [], next: after, last: 0 };
      const feed = feedKeysOf(projectPrefix(keyPrefix, projectId));
      const filter = kinds === undefined || kinds.length === 0 ? '' : `,${kinds.join(',')},`;
      const reply = (await run(
        scripts.listChanges,
        [feed.counter, feed.changes],
        [after, limit, filter, Math.max(CHANGE_SCAN_MIN, 10 * limit), hash ?? '', ...(actors ?? [])],
        false,
      )) as [number, number, number?, [string, string[]][]?];
      const [last, trimmed, next, entries] = reply;
      if (next === undefined) {
        throw new MailwardenError(
          'change_cursor_expired',
          `Changes after ${after} are no longer kept (retention deleted up to ${trimmed}); start again from the listings.`,
        );
      }
      return { changes: entries!.map(([id, fields]) => decodeChange(id, fields)), next, last };
    },

    async getAlertWindows(projectId, trackingIds) {
      if (trackingIds.length === 0) return [];
      const prefix = projectPrefix(keyPrefix, projectId);
      const reply = (await run(
        scripts.getAlertWindows,
        trackingIds.map((trackingId) => alertWindowKeyOf(prefix, trackingId)),
        [],
      )) as (string | null)[][];
      return reply.map(([messages, bounced, complained, bounceFiring, complaintFiring], i): AlertWindow | undefined =>
        messages == null
          ? undefined
          : {
              trackingId: trackingIds[i]!,
              messages: Number(messages),
              bounced: Number(bounced),
              complained: Number(complained),
              bounceFiring: bounceFiring != null,
              complaintFiring: complaintFiring != null,
            },
      );
    },

    async listPausedStreams(projectId) {
      const paused = await client.hgetall(pausedStreamsKeyOf(projectPrefix(keyPrefix, projectId))).catch(fail);
      return Object.keys(paused)
        .sort(compareCodePoints)
        .map((stream) => decodePausedStream(stream, paused[stream]!));
    },

    async pauseStream(projectId, stream, now, actor) {
      assertTime(now, 'now');
      const prefix = projectPrefix(keyPrefix, projectId);
      const existing = (await run(
        scripts.pauseStream,
        [pausedStreamsKeyOf(prefix)],
        [stream, now, prefix, await feedArg(projectId), actor ?? ''],
      )) as string | null;
      if (existing !== null) return { paused: decodePausedStream(stream, existing), created: false };
      return { paused: { stream, pausedAt: now, cause: 'operator' }, created: true };
    },

    async resumeStream(projectId, stream, now, actor) {
      assertTime(now, 'now');
      const prefix = projectPrefix(keyPrefix, projectId);
      const removed = (await run(
        scripts.resumeStream,
        [pausedStreamsKeyOf(prefix)],
        [stream, now, prefix, await feedArg(projectId), actor ?? ''],
      )) as string | null;
      return removed === null ? undefined : decodePausedStream(stream, removed);
    },

    async leaseOutbound(projectId, endpoint, owner, now, until) {
      assertTime(now, 'now');
      assertTime(until, 'until');
      const prefix = projectPrefix(keyPrefix, projectId);
      const reply = (await run(scripts.leaseOutbound, [outboundKeyOf(prefix, endpoint)], [owner, now, until, prefix])) as
        | (string | null)[]
        | null;
      return reply === null ? undefined : decodeOutboundState(endpoint, reply);
    },

    async saveOutbound(projectId, endpoint, owner, progress, until) {
      assertTime(until, 'until');
      const prefix = projectPrefix(keyPrefix, projectId);
      const nulls: string[] = [];
      const values: (string | number)[] = [];
      for (const [name, value] of outboundFields(progress)) {
        if (value === null) nulls.push(name);
        else values.push(name, value);
      }
      const written = await run(
        scripts.saveOutbound,
        [outboundKeyOf(prefix, endpoint)],
        [owner, until, endpoint, prefix, await feedArg(projectId), nulls.join(' '), ...values],
      );
      return written === 1;
    },

    async getOutbound(projectId, endpoints) {
      if (endpoints.length === 0) return [];
      const prefix = projectPrefix(keyPrefix, projectId);
      const reply = (await run(
        scripts.getOutbound,
        endpoints.map((endpoint) => outboundKeyOf(prefix, endpoint)),
        [],
      )) as (string | null)[][];
      return reply.map((state, i) => decodeOutboundState(endpoints[i]!, state));
    },

    async resumeOutbound(projectId, endpoint, now, actor) {
      assertTime(now, 'now');
      const prefix = projectPrefix(keyPrefix, projectId);
      const reply = (await run(
        scripts.resumeOutbound,
        [outboundKeyOf(prefix, endpoint)],
        [now, endpoint, prefix, await feedArg(projectId), actor ?? ''],
      )) as (string | null)[] | null;
      return reply === null ? undefined : decodeOutboundState(endpoint, reply);
    },

    async eraseAddress(projectId, { hash, email, forms, suppression, now, actor }) {
      if (!isEmailHash(hash)) throw new TypeError(`not a suppression hash: ${JSON.stringify(hash)}`);
      assertTime(now, 'now');
      assertSuppression(suppression);
      const keys = projectKeys(keyPrefix, projectId);
      const feed = await feedArg(projectId);
      // What the one step needs to know beforehand (docs/decisions.md, "Redis: erasure and actors
      // (issue 27)"): the stream lists, the messages to the address, and dedup keys holding a form of it.
      const glob = globEscape(keys.prefix);
      const streams = (await scanKeys(`${glob}s.*`))
        .map((key) => key.slice(keys.prefix.length + 2))
        .filter(isStreamName)
        .sort(compareCodePoints);
      const messageKeys = await recipientMessages(projectId, email);
      const dedupKeys = new Set<string>();
      for (const form of new Set(forms)) {
        if (form !== '') for (const key of await scanKeys(`${glob}e:*${globEscape(form)}*`)) dedupKeys.add(key);
      }
      const streamKeys = streams.flatMap((stream) => {
        const list = streamSuppressionKeys(keys.prefix, stream);
        return [list.suppressions, list.suppressionHeads];
      });
      const reply = (await run(
        scripts.eraseAddress,
        [keys.suppressions, keys.suppressionHeads, keys.legacySuppressionOrder, keys.messageOrder, ...streamKeys],
        [
          keys.prefix,
          hash,
          email,
          now,
          actor ?? '',
          feed,
          channel,
          projectId,
          suppression.email,
          packSuppression({ ...suppression, expiresAt: undefined }),
          suppression.createdAt,
          JSON.stringify(streams),
          JSON.stringify(messageKeys),
          JSON.stringify([...dedupKeys]),
        ],
      )) as (string | number)[];
      const records: SuppressionRecord[] = [];
      for (let at = 2; at < reply.length; at += 2) {
        const stream = String(reply[at]);
        records.push(unpackSuppression(hash, String(reply[at + 1]), stream === '' ? undefined : stream));
      }
      return { records, messages: Number(reply[0]), changes: Number(reply[1]) };
    },

    async syncApiKeys(projectId, apiKeys, now, actor) {
      assertTime(now, 'now');
      const prefix = projectPrefix(keyPrefix, projectId);
      const given = apiKeys.flatMap((key) => [key.name, `${key.version}|${key.scopes.join(',')}`]);
      const reply = (await run(scripts.syncApiKeys, [apiKeysKeyOf(prefix)], [prefix, await feedArg(projectId), actor, now, ...given])) as (
        | string
        | number
      )[];
      const changes: KeyChange[] = [];
      for (let at = 0; at < reply.length; at += 5) {
        const kind = reply[at] as KeyChange['kind'];
        const key = { name: String(reply[at + 2]), scopes: scopeList(String(reply[at + 3])) };
        changes.push({
          seq: Number(reply[at + 1]),
          at: now,
          actor,
          kind,
          key,
          ...(kind === 'key.updated' && { previous: { name: key.name, scopes: scopeList(String(reply[at + 4])) } }),
        });
      }
      return changes;
    },

    async hitRateLimits(buckets, windowMs, now, counts) {
      assertTime(now, 'now');
      if (!(Number.isSafeInteger(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be a positive integer: ${windowMs}`);
      if (buckets.length === 0) return [];
      const window = Math.floor(now / windowMs);
      const ttl = (window + 1) * windowMs - now + RATE_LIMIT_MARGIN_MS;
      const keys = buckets.map((bucket) => rateLimitKeyOf(keyPrefix, bucket, window));
      const hits = buckets.map((_, i) => counts?.[i] ?? 1);
      // A Cluster spreads the buckets over slots: one pipeline per bucket, in parallel.
      if (!client.isCluster) return countHits(keys, hits, ttl);
      return (await Promise.all(keys.map((key, i) => countHits([key], [hits[i]!], ttl)))).map(([count]) => count!);
    },

    async claimWebhookToken(projectId, token, digest, expiresAt) {
      assertTime(expiresAt, 'expiresAt');
      // One key in the project's slot; the script's GET and SET run with nothing in between.
      const key = webhookTokenKeyOf(projectPrefix(keyPrefix, projectId), token);
      return (await run(scripts.claimWebhookToken, [key], [digest, expiresAt])) as WebhookTokenClaim;
    },

    async subscribeInvalidations(listener) {
      // A connection of its own: one in subscriber mode takes no other commands.
      const subscriber = client.duplicate();
      const stop = async () => {
        if (!subscriptions.delete(stop)) return;
        // A probe under way no longer waits for this one.
        for (const probe of probes.keys()) hear(probe, stop);
        await subscriber.quit().catch(() => subscriber.disconnect());
      };
      // Best effort (the check cache's TTLs bound what a lost message costs); ioredis reconnects and resubscribes.
      subscriber.on('error', () => {});
      subscriber.on('message', (from: string, message: string) => {
        if (from !== channel) return;
        const parsed = parseMessage(message);
        if (parsed === undefined) return;
        if ('probe' in parsed) hear(parsed.probe, stop);
        else listener(parsed);
      });
      try {
        await subscriber.subscribe(channel);
      } catch (error) {
        subscriber.disconnect();
        fail(error);
      }
      subscriptions.add(stop);
      return stop;
    },

    async probeInvalidations(timeoutMs) {
      if (subscriptions.size === 0) return true;
      const probe = randomUUID();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const heard = new Promise<boolean>((resolve) => probes.set(probe, { unheard: new Set(subscriptions), heard: () => resolve(true) }));
      try {
        await client.publish(channel, JSON.stringify({ probe })).catch(fail);
        return await Promise.race([heard, new Promise<boolean>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)))]);
      } finally {
        clearTimeout(timer);
        probes.delete(probe);
      }
    },

    upgradeSuppressions,

    async close() {
      closed = true;
      await Promise.all([...subscriptions].map((stop) => stop()));
      await Promise.all([...upgrades.values()].map((upgrade) => upgrade.catch(() => {})));
    },
  } satisfies RedisStore;
}

/** An endpoint's progress as the fields of its HASH (lua/include/outboundState.lua), null for a field to delete. */
function outboundFields(progress: OutboundProgress): [string, number | string | null][] {
  const times = [
    progress.cursor,
    progress.failures,
    progress.nextAttemptAt,
    progress.failingSince,
    progress.pausedAt,
    progress.lastSuccessAt,
  ];
  for (const time of times) if (time !== null) assertTime(time, 'an outbound time or count');
  return [
    ['c', progress.cursor],
    ['f', progress.failures],
    ['fs', progress.failingSince],
    ['n', progress.nextAttemptAt],
    ['p', progress.pausedAt],
    ['e', progress.lastError],
    ['s', progress.lastSuccessAt],
  ];
}

/** A message on the invalidation channel: an invalidation, a readiness probe, or (anything else) undefined. */
function parseMessage(message: string): SuppressionInvalidation | { probe: string } | undefined {
  try {
    const parsed = JSON.parse(message) as { projectId?: unknown; hashes?: unknown; probe?: unknown };
    if (typeof parsed.probe === 'string') return { probe: parsed.probe };
    if (typeof parsed.projectId !== 'string' || !Array.isArray(parsed.hashes)) return undefined;
    return { projectId: parsed.projectId, hashes: parsed.hashes.filter((hash): hash is string => typeof hash === 'string') };
  } catch {
    return undefined;
  }
}
