import { messageStatuses, type DeliveryEventType, type Provider } from '@mailwarden/core';
import {
  statusFacts,
  type Change,
  type ChangeKind,
  type MessageStatusChange,
  type OutboundState,
  type AuditedKey,
  type PausedStream,
  packProvenance,
  unpackProvenance,
  reasonFromRank,
  reasonRank,
  type AllowlistEntry,
  type MessageRecord,
  type SuppressionRecord,
  type TimelineEntry,
  type TrackingIdRecord,
} from '@mailwarden/core/store';

/**
 * The keys of one project, all under `${keyPrefix}{${projectId}}:`: the `{projectId}` hash tag puts a
 * whole project in one Redis Cluster slot, so every script of a project runs on one node. The Lua
 * scripts (lua/) derive `m:<key>` and `mt:<trackingId>` from `prefix` with the same names.
 */
export interface ProjectKeys {
  /** `${keyPrefix}{${projectId}}:` */
  prefix: string;
  /** HASH: `suppressionField(hash)` (the hash's first bytes, binary) → packed record (`packSuppression`). */
  suppressions: string;
  /**
   * ZSET, all scores 0: the heads of the suppression order blocks (`suppressionBlockKeyOf`), `''` and
   * `suppressionMember`s. A block holds the members from its head to the next head.
   */
  suppressionHeads: string;
  /**
   * ZSET, all scores 0, written by releases before the order blocks: `orderMember(createdAt, hash)` of
   * each suppression whose HASH field is still the 64-hex hash. Only while such remain: the upgrade
   * (lua/upgradeSuppressions.lua) moves them to the blocks, oldest data first, and it goes.
   */
  legacySuppressionOrder: string;
  /** ZSET, all scores 0: `orderMember(firstEventAt, key)` of every message, newest first. */
  messageOrder: string;
  /** HASH: tracking ID → packed counters and search key (`decodeTrackingIdRow`). */
  trackingIds: string;
  /**
   * ZSET, all scores 0: every tracking ID in byte order (= code-point order of UTF-8), each member the
   * ID (NULs escaped), a NUL and its search key, so a search reads members only (lua/include/trackingIdMember.lua `encodeId`).
   */
  trackingIdOrder: string;
  /**
   * ZSET, all scores 0: the heads of the search blocks, `''` and `trackingIdOrder` members. A block
   * covers the members from its head to the next head.
   */
  searchBlockHeads: string;
  /** STRING, only while blocks are built for IDs stored before them: the last member built. */
  searchBuildCursor: string;
  /**
   * ZSET, only while the project has suppressions that expire: score `expiresAt`, member the hash (64
   * hex), then `.` and the stream for a stream's list. What `purgeExpired` reads.
   */
  expiryIndex: string;
  /** HASH, the allowlist: key (a hash, or `@domain`) → `createdAt:entry`. */
  allowlist: string;
  /** ZSET, all scores 0: `allowlistMember` of every entry, in the entries' byte (code-point) order. */
  allowlistOrder: string;
}

export function projectKeys(keyPrefix: string, projectId: string): ProjectKeys {
  const prefix = projectPrefix(keyPrefix, projectId);
  return {
    prefix,
    suppressions: `${prefix}s`,
    suppressionHeads: `${prefix}sk`,
    legacySuppressionOrder: `${prefix}so`,
    messageOrder: `${prefix}mo`,
    trackingIds: `${prefix}t`,
    trackingIdOrder: `${prefix}to`,
    searchBlockHeads: `${prefix}tk`,
    searchBuildCursor: `${prefix}tc`,
    expiryIndex: `${prefix}x`,
    allowlist: `${prefix}al`,
    allowlistOrder: `${prefix}ao`,
  };
}

/**
 * SET, outside every project's slot: the IDs of projects that have had a suppression that expires,
 * which `purgeExpired` visits. Added before a write that may store such a suppression; never removed
 * (a project's ID is a few bytes).
 */
export const expiringProjectsKeyOf = (keyPrefix: string): string => `${keyPrefix}expiring-projects`;

/**
 * SET, outside every project's slot: the IDs of projects whose feed this store has written, which
 * `purgeExpired` visits to delete changes older than the feed's `maxAgeMs`. Added before a project's
 * first feed write of each store instance; never removed.
 */
export const feedProjectsKeyOf = (keyPrefix: string): string => `${keyPrefix}feed-projects`;

/**
 * The change feed of one project (docs/storage-internals.md, "The change feed"), both in its slot:
 * - `counter`, a HASH: `seq`, the last change's number, and `trimmed`, the highest deleted by retention.
 * - `changes`, a STREAM: one entry per change, ID `<seq>-0`, fields `k` (the kind) and `a` (its `at`)
 *   first, then the kind's own (`decodeChange`).
 * The Lua scripts (lua/include/feed.lua) name them the same way.
 */
export const feedKeysOf = (prefix: string): { counter: string; changes: string } => ({
  counter: `${prefix}feed`,
  changes: `${prefix}changes`,
});

/**
 * HASH, one alert window (lua/include/alertWindows.lua): the project's (`aw`) or one tracking ID's
 * (`aw:<trackingId>`). Fields `n` messages, `b` bounced, `c` complained, `bf`/`cf` firing (1 or absent),
 * `i` messages that ever entered, `s<entry number>` a slot (a flags digit, then the message key) and
 * `k<message key>` its slot's number.
 */
export const alertWindowKeyOf = (prefix: string, trackingId: string | null): string =>
  trackingId === null ? `${prefix}aw` : `${prefix}aw:${trackingId}`;

/**
 * HASH, the project's API keys as the audit trail last recorded them (`Store.syncApiKeys`): name →
 * `version|scope,scope` (never the key nor its hash). lua/syncApiKeys.lua names it the same way.
 */
export const apiKeysKeyOf = (prefix: string): string => `${prefix}keys`;

/**
 * STRING, one rate-limit bucket's count in one fixed window (`Store.hitRateLimits`): outside every
 * project's slot, expiring a little after its window ends.
 */
export const rateLimitKeyOf = (keyPrefix: string, bucket: string, window: number): string => `${keyPrefix}rl:${bucket}:${window}`;

/** HASH, the project's paused streams: stream → `pausedAt|cause`. */
export const pausedStreamsKeyOf = (prefix: string): string => `${prefix}paused`;

/**
 * HASH, one outbound endpoint's delivery state: `c` cursor, `f` failures, `fs` failingSince, `n`
 * nextAttemptAt, `p` pausedAt, `e` lastError, `s` lastSuccessAt (each absent for null), `o` the lease's
 * owner and `u` its end.
 */
export const outboundKeyOf = (prefix: string, endpoint: string): string => `${prefix}ob:${endpoint}`;

/**
 * Per status in `messageStatuses`' precedence, the fact that gives it (`statusFacts`): the Lua scripts
 * take a message's status as the first whose fact it has (the last, `sent`, as the fallback), and
 * the feed stores its 1-based index.
 */
export const STATUS_FACTS: readonly number[] = messageStatuses.map((status) => statusFacts[status]);

/**
 * STRING, the soft-bounce history of one address (lua/include/softBounceRule.lua), `hash` in hex. Kept
 * only while it holds something, with a TTL past the time the rule forgets it.
 */
export const softBounceHistoryKeyOf = (prefix: string, hash: string): string => `${prefix}sh:${hash}`;

/** An allowlist entry's member of `allowlistOrder`: the entry, NUL, `createdAt,key`. */
export const allowlistMember = (entry: AllowlistEntry): string => `${entry.entry}\0${entry.createdAt},${entry.key}`;

export function decodeAllowlistMember(member: string): AllowlistEntry {
  const nul = member.indexOf('\0');
  const comma = member.indexOf(',', nul);
  return { entry: member.slice(0, nul), createdAt: Number(member.slice(nul + 1, comma)), key: member.slice(comma + 1) };
}

/** An allowlist HASH value (`createdAt:entry`) as the entry of `key`. */
export function decodeAllowlistValue(key: string, value: string): AllowlistEntry {
  const colon = value.indexOf(':');
  return { key, entry: value.slice(colon + 1), createdAt: Number(value.slice(0, colon)) };
}

/**
 * STRING, one search block: the number of IDs in its range of `trackingIdOrder` in 3 digits, then
 * `\xFE` + search key per ID, in any order. A search finds whether a range can hold a match with one
 * plain find, and walks only those ranges. The scripts name it from `searchBlockHeads` the same way.
 */
export const searchBlockKeyOf = (prefix: string, head: string): string => `${prefix}tb:${head}`;
/** IDs a search block holds at most: one over splits it in two. */
export const SEARCH_BLOCK_MAX = 256;
/** IDs per block when blocks are built from stored IDs: room for new ones before a split. */
export const SEARCH_BLOCK_FILL = 192;

/**
 * The keys of one stream's suppression list (docs/storage-internals.md, "Lists per stream"), beside
 * the project-wide list's `suppressions` and `suppressionHeads` and laid out as they are: a HASH
 * `s.<stream>`, the heads `sk.<stream>` and the blocks `sb.<stream>:<head>`, all under the project's
 * prefix, so in its slot. A stream name holds no `.` or `:` (`isStreamName`), so no name of one list
 * is a name of another. No legacy order: stream lists came after the order blocks. The scripts name
 * the blocks the same way (lua/include/suppressionLayout.lua).
 */
export interface StreamSuppressionKeys {
  /** HASH, as `ProjectKeys.suppressions`. */
  suppressions: string;
  /** ZSET, as `ProjectKeys.suppressionHeads`. */
  suppressionHeads: string;
}

export function streamSuppressionKeys(prefix: string, stream: string): StreamSuppressionKeys {
  return { suppressions: `${prefix}s.${stream}`, suppressionHeads: `${prefix}sk.${stream}` };
}

export function projectPrefix(keyPrefix: string, projectId: string): string {
  // A brace in the ID would end the hash tag early and scatter the project over slots.
  if (projectId.includes('{') || projectId.includes('}')) throw new TypeError(`project ID contains a brace: ${JSON.stringify(projectId)}`);
  return `${keyPrefix}{${projectId}}:`;
}

/** HASH of one message: fields p, i, r, t (absent for none), f, a, b, s (the stream, absent for none; see `decodeMessage`). */
export const messageKeyOf = (prefix: string, key: string): string => `${prefix}m:${key}`;
/**
 * ZSET of one message's timeline: score the event time, member `timelineMember(entry)`, so ties fall
 * to the entry id in byte order (`compareTimelineEntries`). Expires with its message.
 */
export const timelineKeyOf = (prefix: string, key: string): string => `${prefix}tl:${key}`;
/** A timeline member: the entry's 32-character id, then the entry as JSON. */
export const timelineMember = (entry: TimelineEntry): string => entry.id + JSON.stringify(entry);
export const decodeTimelineMember = (member: string): TimelineEntry => JSON.parse(member.slice(32)) as TimelineEntry;
/** ZSET of the messages of one tracking ID, like `messageOrder`. */
export const trackingIdMessagesKeyOf = (prefix: string, trackingId: string): string => `${prefix}mt:${trackingId}`;
/**
 * HASH of one UTC day's hour buckets (days since the epoch): the project's (`sp:<day>`) or one
 * tracking ID's (`st:<day>:<id>`), field `<hour of the day>:<column>` (core `statColumns` index), value
 * the count. No TTL: counts outlive the messages counted. The applyEvents script writes the same names.
 */
export const statsKeyOf = (prefix: string, day: number, trackingId?: string): string =>
  trackingId === undefined ? `${prefix}sp:${day}` : `${prefix}st:${day}:${trackingId}`;
/** STRING, set once: the dedup key of an event. */
export const eventKeyOf = (prefix: string, key: string): string => `${prefix}e:${key}`;
/** STRING, set once with PXAT: the body digest of the request that first used a one-time webhook token. */
export const webhookTokenKeyOf = (prefix: string, token: string): string => `${prefix}wt:${token}`;

// --- newest-first order ----------------------------------------------------------------------------

/** The largest time an order member holds: 2^53 − 1. The Lua scripts (lua/) take it from here. */
export const ORDER_MAX = Number.MAX_SAFE_INTEGER;

/**
 * A time as 17 characters whose byte order is the time's descending order: '0' and (2^53 − 1 − t) for
 * t ≥ 0, '1' and −t below, each 16 digits. The Lua `order` function writes the same.
 */
export function orderOf(time: number): string {
  if (!Number.isSafeInteger(time)) throw new RangeError(`not an integer time in milliseconds: ${time}`);
  return time >= 0 ? `0${String(ORDER_MAX - time).padStart(16, '0')}` : `1${String(-time).padStart(16, '0')}`;
}

/** A member of a newest-first ZSET: ties on time fall to the id in byte order, ascending. */
export const orderMember = (time: number, id: string): string => orderOf(time) + id;

// --- suppressions: HASH fields and order blocks ---------------------------------------------------

/**
 * Bytes of the SHA-256 a suppression's HASH field keeps: 30 of 32, so the field takes a 32-byte
 * allocation instead of 48 (Redis's 1-byte sds header below 32 bytes, jemalloc's size classes). Two
 * addresses would need the same first 240 bits to share one; the whole hash is in the order member.
 * The Lua scripts take it from here.
 */
export const SUPPRESSION_FIELD_BYTES = 30;
/** Members an order block holds at most: Redis's default `zset-max-listpack-entries`, so a block stays a listpack. */
export const SUPPRESSION_BLOCK_MAX = 128;

/** The HASH field of a suppression: the first `SUPPRESSION_FIELD_BYTES` of its hash, binary. */
export const suppressionField = (hash: string): Buffer => Buffer.from(hash.slice(0, 2 * SUPPRESSION_FIELD_BYTES), 'hex');

/**
 * `suppressionField` of each hash, from one hex decode of them all (a check of 100 spends half the time
 * of decoding each), or undefined when one is not 64 lower-case hex digits: no field holds such a hash.
 */
export function suppressionFields(hashes: readonly string[]): Buffer[] | undefined {
  const hex = hashes.join('');
  const bytes = Buffer.from(hex, 'hex');
  if (!hashes.every((hash) => hash.length === 64) || bytes.toString('hex') !== hex) return undefined;
  return hashes.map((_, i) => bytes.subarray(32 * i, 32 * i + SUPPRESSION_FIELD_BYTES));
}

/**
 * A time as 8 bytes whose byte order is the time's descending order: `orderOf`'s two parts in binary,
 * a byte 0 and 2^53 − 1 − t in 7 bytes big-endian for t ≥ 0, a byte 1 and −t below. The Lua
 * `orderBytes` writes the same.
 */
export function orderBytes(time: number): Buffer {
  if (!Number.isSafeInteger(time)) throw new RangeError(`not an integer time in milliseconds: ${time}`);
  const bytes = Buffer.alloc(8);
  const value = time >= 0 ? ORDER_MAX - time : -time;
  bytes[0] = time >= 0 ? 0 : 1;
  bytes.writeUIntBE(Math.floor(value / 2 ** 32), 1, 3);
  bytes.writeUInt32BE(value % 2 ** 32, 4);
  return bytes;
}

/**
 * A suppression's member in its order block: `orderBytes(createdAt)` then the 32 bytes of its hash, so
 * byte order is (createdAt desc, hash asc). 40 bytes: a listpack keeps members up to 64.
 */
export const suppressionMember = (createdAt: number, hash: string): Buffer =>
  Buffer.concat([orderBytes(createdAt), Buffer.from(hash, 'hex')]);
/** The hash of a `suppressionMember`. */
export const hashOfSuppressionMember = (member: Buffer): string => member.toString('hex', 8);

/**
 * ZSET, all scores 0, one order block: the `suppressionMember`s from its head (a member of
 * `suppressionHeads`) to the next head, at most `SUPPRESSION_BLOCK_MAX`; of the project-wide list, or
 * of `stream`'s (`sb.<stream>:<head>`). The scripts name it the same way.
 */
export const suppressionBlockKeyOf = (prefix: string, head: string | Buffer, stream?: string): Buffer =>
  Buffer.concat([Buffer.from(stream === undefined ? `${prefix}sb:` : `${prefix}sb.${stream}:`), Buffer.from(head)]);

// --- records ---------------------------------------------------------------------------------------

/**
 * A suppression as one HASH value: the reason's rank digit, createdAt, ':', the email, then NUL and the
 * packed provenance (`packProvenance`) when there is one, then \1 and `expiresAt` when there is one.
 * An email holds no control character and packed provenance is JSON (which escapes them), so the
 * first NUL ends the email and the only \1 starts the expiry; values written before provenance simply
 * end with the email, and those written before expiry have no \1.
 */
export function packSuppression(record: SuppressionRecord): string {
  let value = `${reasonRank(record.reason)}${record.createdAt}:${record.email}`;
  if (record.provenance !== undefined) value = `${value}\0${packProvenance(record.provenance)}`;
  return record.expiresAt === undefined ? value : `${value}\x01${record.expiresAt}`;
}

/** A stored value as a record of the list it was read from: `stream`'s, or the project-wide one (no `stream`). */
export function unpackSuppression(hash: string, value: string, stream?: string): SuppressionRecord {
  const colon = value.indexOf(':', 1);
  const expiry = value.indexOf('\x01', colon + 1);
  const end = expiry < 0 ? value.length : expiry;
  const nul = value.indexOf('\0', colon + 1);
  const record: SuppressionRecord = {
    hash,
    email: value.slice(colon + 1, nul < 0 ? end : nul),
    reason: reasonFromRank(value.charCodeAt(0) - 48),
    createdAt: Number(value.slice(1, colon)),
  };
  if (nul >= 0) record.provenance = unpackProvenance(value.slice(nul + 1, end));
  if (stream !== undefined) record.stream = stream;
  if (expiry >= 0) record.expiresAt = Number(value.slice(expiry + 1));
  return record;
}

/**
 * A tracking-ID row as one HASH value: `+messages,delivered,bounced,complained,opened,clicked,unsubscribed,lastEventAt,searchKey`,
 * or, written before opened, clicked and unsubscribed were counted, `messages,delivered,bounced,complained,lastEventAt,searchKey`
 * (those three read 0 until the row is next written, which rewrites it in the new form).
 */
export function decodeTrackingIdRow(trackingId: string, value: string): TrackingIdRecord {
  const fields = value.startsWith('+') ? value.slice(1).split(',', 8) : oldTrackingIdRow(value.split(',', 5));
  const [messages = 0, delivered = 0, bounced = 0, complained = 0, opened = 0, clicked = 0, unsubscribed = 0, lastEventAt = 0] =
    fields.map(Number);
  return { trackingId, messages, delivered, bounced, complained, lastEventAt, opened, clicked, unsubscribed };
}

/** The fields of a row of the old form in the new form's order, with opened, clicked and unsubscribed at 0. */
function oldTrackingIdRow([messages, delivered, bounced, complained, lastEventAt]: string[]): (string | undefined)[] {
  return [messages, delivered, bounced, complained, '0', '0', '0', lastEventAt];
}

/** A message from the 9 reply items the listing script sends: key, then fields p, i, r, t, f, a, b, s. */
export function decodeMessage(reply: readonly (string | null)[], at: number): MessageRecord {
  return {
    key: reply[at]!,
    provider: reply[at + 1] as Provider,
    messageId: reply[at + 2]!,
    recipient: reply[at + 3]!,
    trackingId: reply[at + 4] ?? null,
    facts: Number(reply[at + 5]),
    firstEventAt: Number(reply[at + 6]),
    lastEventAt: Number(reply[at + 7]),
    stream: reply[at + 8] ?? null,
  };
}

// --- the change feed -------------------------------------------------------------------------------

/**
 * A feed entry (an XRANGE item: ID `<seq>-0`, then its fields) as the change it records. Fields by
 * kind, as lua/include/feed.lua and the scripts write them: `k` kind, `a` at; suppressions `h` hash,
 * `v` packed value, `w` the value before, `t` stream; status changes `m` key, `mp mi mr mt mf m1 m2 ms`
 * the message's fields, `fr`/`to` status indexes (1-based, `messageStatuses`), `ei et eo` the event;
 * alerts `fi` firing, `n` messages, `c` count, `th` threshold, `tr` tracking ID; allowlist `ak` key, `v`
 * its HASH value; streams `st`, `ca` cause; endpoints `ep`, `er` error; erasures `h` hash, `n` messages,
 * `c` changes, `v` the project-wide record and `v.<stream>` each stream's; keys `kn` name, `ks`
 * scopes and `kw` those before. Every kind: `by` its actor, only when it has one.
 */
export function decodeChange(id: string, list: readonly string[]): Change {
  const fields = new Map<string, string>();
  for (let at = 0; at < list.length; at += 2) fields.set(list[at]!, list[at + 1]!);
  const change = decodeChangeFields(Number(id.slice(0, id.indexOf('-'))), fields);
  const actor = fields.get('by');
  // Placed after `at`, as `ChangeBase` lists it.
  if (actor === undefined) return change;
  const { seq, at, ...rest } = change;
  return { seq, at, actor, ...rest } as Change;
}

/** Scopes as stored (`,`-separated), as a list. */
const scopesOf = (stored: string): string[] => (stored === '' ? [] : stored.split(','));

function decodeChangeFields(seq: number, fields: ReadonlyMap<string, string>): Change {
  const field = (name: string): string => fields.get(name)!;
  const at = Number(field('a'));
  const kind = field('k') as ChangeKind;
  switch (kind) {
    case 'suppression.added':
    case 'suppression.upgraded':
    case 'suppression.updated':
    case 'suppression.removed':
    case 'suppression.expired': {
      const hash = field('h');
      const stream = fields.get('t');
      const previous = fields.get('w');
      return {
        seq,
        at,
        kind,
        record: unpackSuppression(hash, field('v'), stream),
        ...(previous !== undefined && { previous: unpackSuppression(hash, previous, stream) }),
      };
    }
    case 'message.status_changed': {
      const from = fields.get('fr');
      const change: MessageStatusChange = {
        seq,
        at,
        kind,
        message: decodeMessage(
          [
            field('m'),
            field('mp'),
            field('mi'),
            field('mr'),
            fields.get('mt') ?? null,
            field('mf'),
            field('m1'),
            field('m2'),
            fields.get('ms') ?? null,
          ],
          0,
        ),
        from: from === undefined ? null : messageStatuses[Number(from) - 1]!,
        to: messageStatuses[Number(field('to')) - 1]!,
        event: { id: field('ei'), type: field('et') as DeliveryEventType, occurredAt: Number(field('eo')) },
      };
      return change;
    }
    case 'alert.bounce_rate':
    case 'alert.complaint_rate':
      return {
        seq,
        at,
        kind,
        trackingId: fields.get('tr') ?? null,
        firing: field('fi') === '1',
        messages: Number(field('n')),
        count: Number(field('c')),
        thresholdPpm: Number(field('th')),
      };
    case 'allowlist.added':
    case 'allowlist.removed':
      return { seq, at, kind, entry: decodeAllowlistValue(field('ak'), field('v')) };
    case 'stream.paused':
    case 'stream.resumed':
      return { seq, at, kind, stream: field('st'), cause: field('ca') as PausedStream['cause'] };
    case 'endpoint.paused':
    case 'endpoint.resumed': {
      const error = fields.get('er');
      return { seq, at, kind, endpoint: field('ep'), ...(error !== undefined && { error }) };
    }
    case 'address.erased': {
      const hash = field('h');
      const records: SuppressionRecord[] = [];
      for (const [name, value] of fields) {
        if (name === 'v') records.push(unpackSuppression(hash, value));
        else if (name.startsWith('v.')) records.push(unpackSuppression(hash, value, name.slice(2)));
      }
      return { seq, at, kind, hash, records, messages: Number(field('n')), changes: Number(field('c')) };
    }
    case 'key.added':
    case 'key.updated':
    case 'key.removed': {
      const key: AuditedKey = { name: field('kn'), scopes: scopesOf(field('ks')) };
      const previous = fields.get('kw');
      return { seq, at, kind, key, ...(previous !== undefined && { previous: { name: key.name, scopes: scopesOf(previous) } }) };
    }
  }
}

/** A paused stream's HASH value (`pausedAt|cause`) as the paused stream. */
export function decodePausedStream(stream: string, value: string): PausedStream {
  const bar = value.indexOf('|');
  return { stream, pausedAt: Number(value.slice(0, bar)), cause: value.slice(bar + 1) as PausedStream['cause'] };
}

/** An endpoint's state as the scripts answer it (lua/include/outboundState.lua), or undefined when never leased. */
export function decodeOutboundState(endpoint: string, reply: readonly (string | null)[]): OutboundState | undefined {
  const [cursor, failures, failingSince, nextAttemptAt, pausedAt, lastError, lastSuccessAt] = reply;
  if (cursor == null) return undefined;
  const time = (value: string | null | undefined): number | null => (value == null ? null : Number(value));
  return {
    endpoint,
    cursor: Number(cursor),
    failures: Number(failures ?? 0),
    failingSince: time(failingSince),
    nextAttemptAt: Number(nextAttemptAt ?? 0),
    pausedAt: time(pausedAt),
    lastError: lastError ?? null,
    lastSuccessAt: time(lastSuccessAt),
  };
}
