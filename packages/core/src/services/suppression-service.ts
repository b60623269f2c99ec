import { z } from 'zod';
import type { MailwardenContext } from './context.js';
import { formatTimestamp } from '../timestamp.js';
import { tryNormalizeEmail } from '../email/normalize.js';
import { normalizeEmail } from '../email/normalize.js';
import { normalizeAddressPrefix } from '../email/search.js';
import { isEmailHash } from '../email/hash.js';
import { MailwardenError } from '../errors.js';
import { suppressedNotice, unsuppressedNotice, type HookCall } from './hooks.js';
import { isRecord } from '../json/record.js';
import type { SuppressionReason } from '../vocabulary.js';
import { messageKey } from '../messages/message.js';
import { assertProjectId, parseInput, parseTimeRange } from '../input.js';
import { definedFilters, paginate } from '../pagination.js';
import {
  MAX_BULK_SIZE,
  bulkAddItemSchema,
  isRequestTime,
  type BulkAddItem,
  type BulkAddResult,
  type BulkRemoveItem,
  type BulkRemoveResult,
  listSuppressionsQuerySchema,
  type BatchCheckResult,
  type ListSuppressionsQuery,
  type Suppression,
  type SuppressionCheck,
  type SuppressionPage,
} from '../api-schemas.js';
import type { Store, SuppressionRecord } from '../store/store.js';
import { assertStreamName } from '../stream.js';
import { actorOf, type ActorOption } from './actor-option.js';
import { ruleExpiresAt } from '../suppressions/rules.js';
import type { SuppressionProvenance } from '../suppressions/provenance.js';

const position = z.object({ c: z.int(), h: z.string().regex(/^[0-9a-f]{64}$/) });

/**
 * The list a call names: a stream's, or the project-wide list when `stream` is absent. Every method takes
 * it; without it each answers exactly as before streams existed (docs/decisions.md, "Streams").
 */
export interface StreamOption {
  /** A stream name (`isStreamName`); `invalid_stream` otherwise, `''` included. Absent: the project-wide list. */
  stream?: string;
}

/** Who asked for a suppression added by hand: recorded as its provenance's `source`. */
export type AddSource = 'api' | 'import' | 'unsubscribe';

/** A removal's options: the list, and who removes (`actor`, for the audit trail). */
export interface RemoveOptions extends StreamOption, ActorOption {}

export interface AddOptions extends StreamOption, ActorOption {
  /**
   * `api` by default; `import` for bulk imports such as the CLI's; `unsubscribe` when the recipient
   * asked (a sender's own preference page, an imported unsubscribe list): still reason `manual`, told
   * apart by this source (docs/decisions.md, "How an unsubscribe is shown").
   */
  source?: AddSource;
  /**
   * When it stops suppressing: a `Date` or an ISO 8601 time after now. Not with `ttl`. Without either,
   * the project's expiry rules decide (`MailwardenOptions.rules`), else never.
   */
  expiresAt?: Date | string;
  /** Seconds from now until it stops suppressing: an integer, at least 1. Not with `expiresAt`. */
  ttl?: number;
}

export interface SuppressionService {
  /**
   * A page of the project's suppressions, newest first, optionally of one reason, whose address starts
   * with `emailPrefix` (any text is a search, compared lower-cased as addresses are stored: see
   * `normalizeAddressPrefix`), and created in a time range (`from` inclusive, `to` exclusive, ISO 8601).
   *
   * @example
   * const lastWeek = await mailwarden.suppressions.list('acme', { reason: 'complaint', from: '2026-11-16', to: '2026-11-23' });
   * const janes = await mailwarden.suppressions.list('acme', { emailPrefix: 'Jane' });
   * const marketing = await mailwarden.suppressions.list('acme', { stream: 'marketing' });
   *
   * `stream` picks the list: that stream's (its items carry `stream`), else the project-wide one
   * (`''` too, as an empty filter is none). A listing never mixes lists; a cursor stays with its list.
   */
  list(projectId: string, query?: ListSuppressionsQuery): Promise<SuppressionPage>;
  /**
   * Whether one address is suppressed; echoes the address as given. With a `stream`: whether mail of
   * that stream may not reach it, that is whether the project-wide list or that stream's holds it, and
   * `stream` says which (`null`: the project-wide list, which answers when both do).
   *
   * @example
   * await mailwarden.suppressions.check('acme', 'jane@example.com', { stream: 'marketing' });
   * // { email: 'jane@example.com', suppressed: true, reason: 'manual', …, source: 'unsubscribe', cause: null, stream: 'marketing' }
   */
  check(projectId: string, email: string, options?: StreamOption): Promise<SuppressionCheck>;
  /**
   * Checks up to 1 000 addresses in one store round trip; one result per input, in input order. (Over
   * HTTP, `POST …/suppressions/check` takes 100, as the spec says, and `…/bulk-check` takes 1 000.)
   * With a `stream`, each as `check` answers it, a suppressed one with `stream`.
   */
  checkMany(projectId: string, emails: readonly string[], options?: StreamOption): Promise<{ results: BatchCheckResult[] }>;
  /**
   * Suppresses an address by hand (`manual`), in the project-wide list or in `stream`'s. `created` is
   * false when that list already held it (the existing suppression, provenance and all, is kept).
   * `source` is recorded as its provenance (`AddOptions.source`).
   */
  add(projectId: string, email: string, options?: AddOptions): Promise<{ suppression: Suppression; created: boolean }>;
  /**
   * Removes a suppression by its hash from one list (the project-wide one, or `stream`'s, never both),
   * or throws `suppression_not_found`. With a stream the answer names it.
   */
  remove(projectId: string, hash: string, options?: RemoveOptions): Promise<{ deleted: true; hash: string; stream?: string }>;
  /**
   * Suppresses up to 1 000 addresses in one store round trip, each with its reason (default `manual`)
   * and time (default now), joined as events join: a stronger reason upgrades, the earliest time
   * stays. For moving a list from a provider (`reason: 'hard_bounce'`, the provider's time). One result
   * per item, in order; an invalid item is reported and the others applied. Throws `batch_too_large`
   * past 1 000 items. Every item goes to the list of `stream` (the project-wide one without it).
   *
   * @example
   * const { results } = await mailwarden.suppressions.addMany('acme', [
   *   { email: 'gone@example.com', reason: 'hard_bounce', created_at: '2025-06-01T10:00:00Z' },
   *   { email: 'angry@example.com', reason: 'complaint' },
   * ], { source: 'import' });
   */
  addMany(projectId: string, items: readonly BulkAddItem[], options?: AddOptions): Promise<{ results: BulkAddResult[] }>;
  /**
   * Removes up to 1 000 suppressions from one list (the project-wide one, or `stream`'s), each named by
   * its address or its hash, in one store round trip; one result per item, in order.
   */
  removeMany(projectId: string, items: readonly BulkRemoveItem[], options?: RemoveOptions): Promise<{ results: BulkRemoveResult[] }>;
  /** The hash of an address, as the store and the API use it. Throws `invalid_email`. */
  hashOf(email: string): string;
}

export function toSuppression(record: SuppressionRecord): Suppression {
  return {
    hash: record.hash,
    email: record.email,
    reason: record.reason,
    created_at: formatTimestamp(record.createdAt),
    ...provenanceView(record),
    ...expiryView(record),
    // Last, and only in a stream's list: a project-wide suppression is shown as it always was.
    ...(record.stream === undefined ? {} : { stream: record.stream }),
  };
}

/** The stream a call names, checked: `undefined` for the project-wide list, `invalid_stream` for anything but a stream name. */
export function streamOf(options: StreamOption | undefined): string | undefined {
  const stream = options?.stream;
  return stream === undefined ? undefined : assertStreamName(stream);
}

function sourceOf(options: AddOptions | undefined): AddSource {
  const source = options?.source;
  return source === 'import' || source === 'unsubscribe' ? source : 'api';
}

/** Provenance as the API shows it, beside the spec's fields: `source: null` for records stored before it. */
export function provenanceView(record: SuppressionRecord): Pick<Suppression, 'source' | 'cause'> {
  const provenance = record.provenance;
  if (provenance === undefined) return { source: null, cause: null };
  const event = provenance.event;
  return {
    source: provenance.source,
    cause:
      event === undefined
        ? null
        : {
            provider: event.provider,
            message_id: event.messageId,
            message: event.messageId === null ? null : messageKey(event.provider, event.messageId, record.email),
            event_id: event.eventId,
            event_at: formatTimestamp(provenance.at),
            diagnostic: event.diagnostic,
          },
  };
}

/**
 * What issue 25 added to a suppression's answer, each only when set (so answers without them are as
 * they were): `expires_at`, the soft-bounce `rule` with its bounces, `allowlisted`.
 */
export function expiryView(record: SuppressionRecord): Pick<Suppression, 'expires_at' | 'rule' | 'allowlisted'> {
  const view: Pick<Suppression, 'expires_at' | 'rule' | 'allowlisted'> = {};
  if (record.expiresAt !== undefined) view.expires_at = formatTimestamp(record.expiresAt);
  const provenance = record.provenance;
  if (provenance?.rule !== undefined) view.rule = ruleView(provenance.rule, record.email);
  if (provenance?.allowlisted === true) view.allowlisted = true;
  return view;
}

/** Whether a record has none of `expiryView`'s fields: the check path then answers as it always did. */
const plainRecord = (record: SuppressionRecord) =>
  record.expiresAt === undefined && record.provenance?.rule === undefined && record.provenance?.allowlisted === undefined;

function ruleView(rule: NonNullable<SuppressionProvenance['rule']>, email: string): NonNullable<Suppression['rule']> {
  return {
    bounces: rule.bounces,
    days: rule.days,
    reset_on_delivery: rule.resetOnDelivery,
    events: rule.events.map((bounce) => ({
      provider: bounce.provider,
      message_id: bounce.messageId,
      message: bounce.messageId === null ? null : messageKey(bounce.provider, bounce.messageId, email),
      event_id: bounce.eventId,
      event_at: formatTimestamp(bounce.at),
      diagnostic: bounce.diagnostic,
    })),
  };
}

/**
 * When an added suppression expires (epoch ms), from `expiresAt` or `ttl` as given (never both; after
 * `now`), or `undefined` when neither is given. Throws `invalid_request` naming the field as `field`s name it.
 */
export function givenExpiry(
  given: { expiresAt?: Date | string | undefined; ttl?: number | undefined },
  now: number,
  names: { expiresAt: string; ttl: string },
): number | undefined {
  const { expiresAt, ttl } = given;
  if (expiresAt === undefined && ttl === undefined) return undefined;
  if (expiresAt !== undefined && ttl !== undefined)
    throw new MailwardenError('invalid_request', `Give ${names.expiresAt} or ${names.ttl}, not both.`);
  if (ttl !== undefined) {
    if (!Number.isSafeInteger(ttl) || ttl < 1)
      throw new MailwardenError('invalid_request', `Invalid ${names.ttl}: expected a whole number of seconds, at least 1.`);
    return now + ttl * 1000;
  }
  const at =
    expiresAt instanceof Date
      ? expiresAt.getTime()
      : typeof expiresAt === 'string' && isRequestTime(expiresAt)
        ? Date.parse(expiresAt)
        : Number.NaN;
  if (Number.isNaN(at))
    throw new MailwardenError('invalid_request', `Invalid ${names.expiresAt}: expected a Date or an ISO 8601 time (2026-12-01T00:00:00Z).`);
  // Whole milliseconds, as every stored time is.
  const ms = Math.trunc(at);
  if (ms <= now)
    throw new MailwardenError('invalid_request', `Invalid ${names.expiresAt}: it must be after now (${formatTimestamp(now)}).`);
  return ms;
}

/** Which of `records` are allowlisted, marked so in their provenance: one round trip, only when there are records. */
async function markAllowlisted(store: Store, projectId: string, records: SuppressionRecord[]): Promise<void> {
  if (records.length === 0) return;
  const allowlisted = await store.findAllowlisted(projectId, records);
  records.forEach((record, index) => {
    if (allowlisted[index] === true && record.provenance !== undefined) record.provenance.allowlisted = true;
  });
}

export function createSuppressionService(context: MailwardenContext): SuppressionService {
  const { store, hashEmail, cursors } = context;

  return {
    async list(projectId, query = {}) {
      assertProjectId(projectId);
      const parsed = parseInput(listSuppressionsQuerySchema, query, 'suppression list query');
      const { reason, limit, cursor, expiring } = parsed;
      // Empty is no filter, as for the other listing filters: the project-wide list.
      const stream = parsed.stream === '' || parsed.stream === undefined ? undefined : assertStreamName(parsed.stream);
      // Any text is a search (docs/http.md, "Partial search"); empty means no filter.
      const emailPrefix = normalizeAddressPrefix(parsed.emailPrefix, 'emailPrefix');
      const { from, to } = parseTimeRange(parsed);
      const now = Math.trunc(context.now());
      const page = await paginate(cursors, {
        // The stream joins the scope only when set: project-wide cursors issued before streams stay valid.
        scope: {
          listing: 'suppressions',
          projectId,
          filters: definedFilters({
            stream,
            reason,
            emailPrefix,
            from,
            to,
            expiring: expiring === undefined ? undefined : String(expiring),
          }),
        },
        limit,
        cursor,
        position,
        fetch: (size, after) =>
          store.listSuppressions(projectId, {
            limit: size,
            ...(stream === undefined ? {} : { stream }),
            ...(reason === undefined ? {} : { reason }),
            ...(emailPrefix === undefined ? {} : { emailPrefix }),
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
            ...(expiring === undefined ? {} : { expiring }),
            // Expired suppressions are not listed (docs/core.md, "Expiry").
            now,
            ...(after === undefined ? {} : { after: { createdAt: after.c, hash: after.h } }),
          }),
        positionOf: (record) => ({ c: record.createdAt, h: record.hash }),
      });
      const items = page.rows.map(toSuppression);
      return { items, next_cursor: page.next_cursor, count: items.length };
    },

    async check(projectId, email, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      const hash = hashEmail(normalizeEmail(email));
      // The clock is read only when the answer can expire (a clock read is 3 % of a check, and most
      // records never expire): an expired answer is none, or, for a stream, asked again with the clock,
      // so the stream's own entry answers when the project-wide one has expired.
      let record = await store.getSuppression(projectId, hash, stream);
      if (record?.expiresAt !== undefined) {
        const now = Math.trunc(context.now());
        if (record.expiresAt <= now) record = stream === undefined ? undefined : await store.getSuppression(projectId, hash, stream, now);
      }
      if (record === undefined) return { email, suppressed: false };
      const { source, cause } = provenanceView(record);
      const reason = record.reason;
      const created_at = formatTimestamp(record.createdAt);
      if (!plainRecord(record)) {
        const answer: SuppressionCheck = { email, suppressed: true, reason, created_at, source, cause, ...expiryView(record) };
        if (stream !== undefined) answer.stream = record.stream ?? null;
        return answer;
      }
      // Two literals rather than a spread: a spread of the answer cost a check in a stream 0.3 µs.
      if (stream === undefined) return { email, suppressed: true, reason, created_at, source, cause };
      return { email, suppressed: true, reason, created_at, source, cause, stream: record.stream ?? null };
    },

    async checkMany(projectId, emails, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      assertCheckSize(emails, MAX_BULK_SIZE);
      const hashes = hashAll(hashEmail, emails);
      const records = await store.getSuppressions(projectId, hashes, stream, Math.trunc(context.now()));
      const results = emails.map((email, index): BatchCheckResult => {
        const record = records[index];
        if (record === undefined) return { email, suppressed: false };
        if (record.expiresAt !== undefined) {
          const expires_at = formatTimestamp(record.expiresAt);
          return stream === undefined
            ? { email, suppressed: true, reason: record.reason, expires_at }
            : { email, suppressed: true, reason: record.reason, expires_at, stream: record.stream ?? null };
        }
        return stream === undefined
          ? { email, suppressed: true, reason: record.reason }
          : { email, suppressed: true, reason: record.reason, stream: record.stream ?? null };
      });
      return { results };
    },

    async add(projectId, email, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      const actor = actorOf(options);
      const normalized = normalizeEmail(email);
      // Whole milliseconds, as event times and the wire format have: a clock such as
      // `performance.timeOrigin + performance.now()` would otherwise put a fraction into cursors.
      const now = Math.trunc(context.now());
      const candidate: SuppressionRecord = {
        hash: hashEmail(normalized),
        email: normalized,
        reason: 'manual',
        createdAt: now,
        provenance: { source: sourceOf(options), at: now },
        ...(stream === undefined ? {} : { stream }),
      };
      const expiresAt =
        givenExpiry(options ?? {}, now, { expiresAt: 'expires_at', ttl: 'ttl' }) ?? ruleExpiresAt(context.rules?.(projectId), candidate);
      if (expiresAt !== undefined) candidate.expiresAt = expiresAt;
      await markAllowlisted(store, projectId, [candidate]);
      const { record, created } = await store.addSuppression(projectId, candidate, now, actor);
      if (created && context.hooks?.wants.suppressed)
        context.hooks.notify([{ hook: 'suppressed', notice: suppressedNotice(projectId, record, null) }]);
      return { suppression: toSuppression(record), created };
    },

    async remove(projectId, hash, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      const actor = actorOf(options);
      const key = typeof hash === 'string' ? hash.toLowerCase() : '';
      if (!isEmailHash(key)) {
        throw new MailwardenError('invalid_request', 'Invalid hash: expected 64 hexadecimal characters.');
      }
      // The clock goes with the removal: the feed records the change at it (docs/core.md, "Change feed").
      const now = Math.trunc(context.now());
      const removed = await store.removeSuppression(projectId, key, stream, now, actor);
      // An expired suppression was deleted all the same, but it no longer suppressed: there was none to remove.
      if (removed === undefined || isExpired(removed, now)) {
        if (stream !== undefined) {
          throw new MailwardenError('suppression_not_found', "No suppression has this hash in this stream's list.", {
            details: { hash: key, stream },
          });
        }
        throw new MailwardenError('suppression_not_found', 'No suppression has this hash in this project.', {
          details: { hash: key },
        });
      }
      if (context.hooks?.wants.unsuppressed) {
        context.hooks.notify([{ hook: 'unsuppressed', notice: unsuppressedNotice(projectId, removed, now) }]);
      }
      return stream === undefined ? { deleted: true, hash: key } : { deleted: true, hash: key, stream };
    },

    async addMany(projectId, items, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      const actor = actorOf(options);
      assertBulk(items);
      const now = Math.trunc(context.now());
      const source = sourceOf(options);
      const rules = context.rules?.(projectId);
      const results: BulkAddResult[] = [];
      const records: SuppressionRecord[] = [];
      const positions: number[] = [];
      items.forEach((item: unknown, index) => {
        const parsed = bulkAddItemSchema.safeParse(item);
        const email = isRecord(item) && typeof item.email === 'string' ? item.email : null;
        if (!parsed.success) return void results.push(invalidItem(email, 'invalid_request', issueText(parsed.error.issues[0]!)));
        const normalized = tryNormalizeEmail(parsed.data.email);
        if (!normalized.ok) return void results.push(invalidItem(email, 'invalid_email', `email: ${normalized.reason}`));
        const createdAt = parsed.data.created_at === undefined ? now : Date.parse(parsed.data.created_at);
        if (createdAt > now) return void results.push(invalidItem(email, 'invalid_request', 'created_at: must not be in the future'));
        let given: number | undefined;
        try {
          given = givenExpiry({ expiresAt: parsed.data.expires_at, ttl: parsed.data.ttl }, now, { expiresAt: 'expires_at', ttl: 'ttl' });
        } catch (error) {
          return void results.push(invalidItem(email, 'invalid_request', (error as Error).message));
        }
        const hash = hashEmail(normalized.email);
        positions.push(index);
        results.push({ email: parsed.data.email, status: 'present', hash });
        const record: SuppressionRecord = {
          hash,
          email: normalized.email,
          reason: parsed.data.reason ?? 'manual',
          createdAt,
          provenance: { source, at: createdAt },
          ...(stream === undefined ? {} : { stream }),
        };
        const expiresAt = given ?? ruleExpiresAt(rules, record);
        if (expiresAt !== undefined) record.expiresAt = expiresAt;
        records.push(record);
      });
      await markAllowlisted(store, projectId, records);
      const outcomes = records.length === 0 ? [] : await store.mergeSuppressions(projectId, records, now, actor);
      const notices: HookCall[] = [];
      outcomes.forEach((outcome, i) => {
        const result = results[positions[i]!] as Extract<BulkAddResult, { hash: string }>;
        if (outcome === 'applied') return;
        const previousReason = outcome === 'suppressed' ? null : (outcome.slice('upgraded_from_'.length) as SuppressionReason);
        result.status = previousReason === null ? 'created' : 'upgraded';
        if (previousReason !== null) result.previous_reason = previousReason;
        if (context.hooks?.wants.suppressed)
          notices.push({ hook: 'suppressed', notice: suppressedNotice(projectId, records[i]!, previousReason) });
      });
      if (notices.length > 0) context.hooks!.notify(notices);
      return { results };
    },

    async removeMany(projectId, items, options) {
      assertProjectId(projectId);
      const stream = streamOf(options);
      const actor = actorOf(options);
      assertBulk(items);
      const results: BulkRemoveResult[] = [];
      const hashes: string[] = [];
      const positions: number[] = [];
      items.forEach((item: unknown, index) => {
        let hash: string | undefined;
        if (isRecord(item) && typeof item.hash === 'string' && item.email === undefined) {
          hash = item.hash.toLowerCase();
          if (!isEmailHash(hash))
            return void results.push({
              status: 'invalid',
              error: { code: 'invalid_request', message: 'hash: expected 64 hexadecimal characters' },
            });
        } else if (isRecord(item) && typeof item.email === 'string' && item.hash === undefined) {
          const normalized = tryNormalizeEmail(item.email);
          if (!normalized.ok)
            return void results.push({ status: 'invalid', error: { code: 'invalid_email', message: `email: ${normalized.reason}` } });
          hash = hashEmail(normalized.email);
        } else {
          return void results.push({
            status: 'invalid',
            error: { code: 'invalid_request', message: 'an item is { "email": … } or { "hash": … }' },
          });
        }
        positions.push(index);
        hashes.push(hash);
        results.push({ hash, deleted: false });
      });
      const now = Math.trunc(context.now());
      const removed = hashes.length === 0 ? [] : await store.removeSuppressions(projectId, hashes, stream, now, actor);
      const notices: HookCall[] = [];
      removed.forEach((record, i) => {
        // An expired one no longer suppressed: it is gone, and was not removed by this call.
        if (record === undefined || isExpired(record, now)) return;
        (results[positions[i]!] as { deleted: boolean }).deleted = true;
        if (context.hooks?.wants.unsuppressed) notices.push({ hook: 'unsuppressed', notice: unsuppressedNotice(projectId, record, now) });
      });
      if (notices.length > 0) context.hooks!.notify(notices);
      return { results };
    },

    hashOf(email) {
      return hashEmail(normalizeEmail(email));
    },
  };
}

/** Whether a record has stopped suppressing at `now` (docs/core.md, "Expiry"). */
const isExpired = (record: SuppressionRecord, now: number) => record.expiresAt !== undefined && record.expiresAt <= now;

/**
 * Hashes a batch, or throws one `invalid_email` listing every bad entry as `{ index, email, reason }`.
 * An entry is echoed as given unless it is an array or an object: those are echoed as `null`, since
 * a client's arbitrarily deep structure in an error body could not even be serialized.
 */
export function hashAll(hashEmail: (email: string) => string, emails: readonly string[]): string[] {
  const hashes: string[] = [];
  const invalid: { index: number; email: unknown; reason: string }[] = [];
  emails.forEach((email: unknown, index) => {
    const result = tryNormalizeEmail(email as string);
    if (result.ok) hashes.push(hashEmail(result.email));
    else if (typeof email === 'object' && email !== null) {
      invalid.push({ index, email: null, reason: `not a string (${Array.isArray(email) ? 'an array' : 'an object'})` });
    } else invalid.push({ index, email, reason: result.reason });
  });
  if (invalid.length > 0) {
    throw new MailwardenError('invalid_email', `${invalid.length} of ${emails.length} addresses are invalid; see details.`, {
      details: invalid,
    });
  }
  return hashes;
}

/**
 * A check takes an array of at most `max` addresses: 1 000 in process and over `…/bulk-check`, the
 * spec's 100 over `…/check`. Checked before the entries, so too many invalid ones are still too many.
 */
export function assertCheckSize(emails: unknown, max: number): asserts emails is readonly unknown[] {
  if (!Array.isArray(emails)) throw new MailwardenError('invalid_request', 'Invalid batch check: emails must be an array.');
  if (emails.length > max) {
    throw new MailwardenError('batch_too_large', `This check takes at most ${max} addresses; got ${emails.length}.`, {
      details: { max, received: emails.length },
    });
  }
}

/** A bulk call takes an array of at most `MAX_BULK_SIZE` items; its items are checked one by one after. */
function assertBulk(items: unknown): asserts items is readonly unknown[] {
  if (!Array.isArray(items)) throw new MailwardenError('invalid_request', 'Invalid bulk request: items must be an array.');
  if (items.length > MAX_BULK_SIZE) {
    throw new MailwardenError('batch_too_large', `A bulk request takes at most ${MAX_BULK_SIZE} items; got ${items.length}.`, {
      details: { max: MAX_BULK_SIZE, received: items.length },
    });
  }
}

function invalidItem(email: string | null, code: 'invalid_request' | 'invalid_email', message: string): BulkAddResult {
  return { email, status: 'invalid', error: { code, message } };
}

function issueText(issue: { path: PropertyKey[]; message: string }): string {
  return `${issue.path.map(String).join('.') || 'item'}: ${issue.message}`;
}
