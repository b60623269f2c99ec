import { isDeepStrictEqual } from 'node:util';
import {
  actorMatches,
  changeFeedRetention,
  compareCodePoints,
  ruleActors,
  type KeyChange,
  type SyncedKey,
  Fact,
  MailwardenError,
  insertTimelineEntry,
  mergeFactTimes,
  statFacts,
  statsMoves,
  sumHours,
  type FactTimes,
  mergeMessage,
  messageStatus,
  provenanceWins,
  recipientDomainOf,
  strongerReason,
  trackingIdDeltas,
  trackingIdSearchKey,
  type EventOutcome,
  type SuppressionMergeOutcome,
  type MessagePosition,
  type MessageRecord,
  type Store,
  type StoredEvent,
  type SuppressionPosition,
  type SuppressionRecord,
  type TimelineEntry,
  type TrackingIdRecord,
  type AllowlistEntry,
  type StoredSoftBounceRule,
  type Change,
  type ChangeFeedOptions,
  type OutboundState,
  type PausedStream,
  type StoredAlertRule,
  unpackProvenance,
} from '@mailwarden/core/store';

/** A kept soft bounce: what the rule compares, and the parts of the provenance it may make. */
interface KeptBounce {
  at: number;
  eventId: string;
  message: string;
  packed: string;
  causeJson: string;
}

/** One project's tables. A real store keeps them in its database, keyed by project first. */
interface Tables {
  /** Every list's suppressions (the project-wide one and one per stream), by `slot(stream, hash)`. */
  suppressions: Map<string, SuppressionRecord>;
  eventKeys: Set<string>;
  messages: Map<string, MessageRecord>;
  timelines: Map<string, TimelineEntry[]>;
  factTimes: Map<string, FactTimes>;
  /** Hour buckets by scope ('' the project, else a tracking ID) and hour. */
  buckets: Map<string, Map<number, number[]>>;
  trackingIds: Map<string, TrackingIdRecord>;
  webhookTokens: Map<string, string>;
  /** The allowlist by key (a hash, or `@domain`). */
  allowlist: Map<string, AllowlistEntry>;
  /** The soft-bounce rule's history by hash: bounces in (at, eventId) order, and the latest delivery. */
  history: Map<string, { bounces: KeptBounce[]; lastDelivery: number | null }>;
  /** The change feed, oldest first: the counter, and the highest seq retention deleted. */
  feed: { changes: Change[]; last: number; trimmed: number };
  /** Alert windows by scope (null: the project's, else a tracking ID's). */
  windows: Map<string | null, AlertWindowTable>;
  paused: Map<string, PausedStream>;
  /** Outbound delivery state by endpoint, with the lease's owner and end. */
  outbound: Map<string, OutboundState & { owner: string; until: number }>;
  /** The keys that open the project, by name, as `syncApiKeys` last made them. */
  keys: Map<string, SyncedKey>;
}

/** A window's messages in a ring (`head`: the oldest once full), a slot per key, and its counts. */
interface AlertWindowTable {
  slots: { key: string; bounced: boolean; complained: boolean }[];
  head: number;
  slotOf: Map<string, number>;
  bounced: number;
  complained: number;
  bounceFiring: boolean;
  complaintFiring: boolean;
}

/** A change before the feed numbers it. */
type NewChange = Change extends infer C ? (C extends Change ? Omit<C, 'seq'> : never) : never;

// The listing orders of the contract: a real store keeps an index in each.
const newestSuppressionFirst = (a: SuppressionPosition, b: SuppressionPosition) =>
  b.createdAt - a.createdAt || compareCodePoints(a.hash, b.hash);
const newestMessageFirst = (a: MessagePosition, b: MessagePosition) => b.firstEventAt - a.firstEventAt || compareCodePoints(a.key, b.key);

/** Where a suppression lives: its list (a stream's, or '' for the project-wide one, which no stream is named) and its hash. */
const slot = (stream: string | undefined, hash: string) => `${stream ?? ''}/${hash}`;

/** A record at `now`: an expired one (`expiresAt <= now`) is absent. */
const alive = (record: SuppressionRecord | undefined, now: number | undefined) =>
  record === undefined || (now !== undefined && record.expiresAt !== undefined && record.expiresAt <= now) ? undefined : record;

/** The check rule: the project-wide entry; else, for a stream, that stream's; expired ones absent. */
const check = (t: Tables, hash: string, stream: string | undefined, now: number | undefined) =>
  alive(t.suppressions.get(slot(undefined, hash)), now) ??
  (stream === undefined ? undefined : alive(t.suppressions.get(slot(stream, hash)), now));

const isAllowlisted = (t: Tables, hash: string, email: string) =>
  t.allowlist.has(hash) || t.allowlist.has(`@${email.slice(email.lastIndexOf('@') + 1)}`);

const before = (a: KeptBounce, b: KeptBounce) => a.at - b.at || compareCodePoints(a.eventId, b.eventId);

/** The address hash a change is about (`ChangeQuery.hash`): a suppression's, an allowlist entry's key, an erasure's. */
const hashOf = (change: Change) =>
  'record' in change
    ? change.record.hash
    : 'entry' in change
      ? change.entry.key
      : change.kind === 'address.erased'
        ? change.hash
        : undefined;

/** A suppression as an erasure keeps it: the placeholder email, no diagnostic; project-wide, no expiry. */
function erased(record: SuppressionRecord, email: string): SuppressionRecord {
  const kept = structuredClone({ ...record, email });
  if (kept.stream === undefined) delete kept.expiresAt;
  if (kept.provenance?.event !== undefined) kept.provenance.event.diagnostic = null;
  for (const bounce of kept.provenance?.rule?.events ?? []) bounce.diagnostic = null;
  return kept;
}

/** The Map store: a `Store`, and everything it holds as text (the conformance suite's `dump`). */
export type MapStore = Store & { dump(): Promise<string> };

/** A `Store` over Maps: core's functions decide every merge, the store only keeps and orders. */
export function createMapStore(options: { changes?: ChangeFeedOptions } = {}): MapStore {
  const retention = options.changes === undefined ? undefined : changeFeedRetention(options.changes);
  const projects = new Map<string, Tables>();
  const tables = (projectId: string): Tables => {
    let found = projects.get(projectId);
    if (found === undefined) {
      found = {
        suppressions: new Map(),
        eventKeys: new Set(),
        messages: new Map(),
        timelines: new Map(),
        factTimes: new Map(),
        buckets: new Map(),
        trackingIds: new Map(),
        webhookTokens: new Map(),
        allowlist: new Map(),
        history: new Map(),
        feed: { changes: [], last: 0, trimmed: 0 },
        windows: new Map(),
        paused: new Map(),
        outbound: new Map(),
        keys: new Map(),
      };
      projects.set(projectId, found);
    }
    return found;
  };
  const copy = <T extends object>(record: T | undefined): T | undefined => (record === undefined ? undefined : { ...record });
  // The feed: only when the store keeps one, in the same step as the write (here: the same call).
  // A change's actor only when the write named one (docs/decisions.md in the mailwarden repository, "The audit trail").
  const append = (t: Tables, change: NewChange, actor: string | undefined) => {
    if (retention === undefined) return;
    t.feed.last += 1;
    t.feed.changes.push(structuredClone({ ...change, seq: t.feed.last, ...(actor === undefined ? {} : { actor }) }) as Change);
  };
  /** Rate-limit counters by bucket: the window counted, and its count. */
  const rates = new Map<string, { window: number; count: number }>();

  // One event, wholly: a real store makes this one transaction.
  function apply(
    t: Tables,
    event: StoredEvent,
    now: number | undefined,
    rule: StoredSoftBounceRule | undefined,
    alerts: StoredAlertRule | undefined,
  ): EventOutcome {
    if (t.eventKeys.has(event.key)) return 'duplicate';
    t.eventKeys.add(event.key);
    let moved: { before: MessageRecord | undefined; after: MessageRecord } | undefined;
    if (event.message !== null) {
      const before = t.messages.get(event.message.key);
      const after = mergeMessage(before, { ...event.message });
      moved = { before, after };
      t.messages.set(after.key, after);
      const beforeTimes = t.factTimes.get(after.key);
      const afterTimes = mergeFactTimes(before, beforeTimes, event.message);
      t.factTimes.set(after.key, afterTimes);
      for (const move of statsMoves(before?.trackingId ?? null, beforeTimes, after.trackingId, afterTimes)) {
        const hours = t.buckets.get(move.trackingId ?? '') ?? new Map<number, number[]>();
        const counts = hours.get(move.hour) ?? statFacts.map(() => 0);
        counts[move.column]! += move.delta;
        hours.set(move.hour, counts);
        t.buckets.set(move.trackingId ?? '', hours);
      }
      if (event.timelineEntry !== undefined) {
        const timeline = t.timelines.get(after.key) ?? [];
        insertTimelineEntry(timeline, { ...event.timelineEntry });
        t.timelines.set(after.key, timeline);
      }
      for (const delta of trackingIdDeltas(before, after)) {
        const empty = {
          trackingId: delta.trackingId,
          messages: 0,
          delivered: 0,
          bounced: 0,
          complained: 0,
          lastEventAt: -Infinity,
          opened: 0,
          clicked: 0,
          unsubscribed: 0,
        };
        const current = t.trackingIds.get(delta.trackingId) ?? empty;
        const messages = current.messages + delta.messages;
        if (messages === 0) {
          t.trackingIds.delete(delta.trackingId);
          continue;
        }
        const lastEventAt =
          delta.lastEventAt === 'recompute'
            ? Math.max(...[...t.messages.values()].filter((m) => m.trackingId === delta.trackingId).map((m) => m.lastEventAt))
            : Math.max(current.lastEventAt, delta.lastEventAt.raise);
        t.trackingIds.set(delta.trackingId, {
          trackingId: delta.trackingId,
          messages,
          delivered: current.delivered + delta.delivered,
          bounced: current.bounced + delta.bounced,
          complained: current.complained + delta.complained,
          lastEventAt,
          opened: current.opened + delta.opened,
          clicked: current.clicked + delta.clicked,
          unsubscribed: current.unsubscribed + delta.unsubscribed,
        });
      }
    }
    const own = event.suppression;
    // The allowlist blocks what the provider reports, not what the recipient asks (an unsubscribe).
    const ownOutcome =
      own === null
        ? undefined
        : own.provenance?.source === 'webhook' && isAllowlisted(t, own.hash, own.email)
          ? 'applied'
          : merge(t, own, now, event.actor);
    const ruleOutcome = rule === undefined || event.ruleInput === undefined ? 'applied' : countRule(t, event.ruleInput, rule, now);
    if (moved !== undefined) {
      // Without `now`, the event's own time.
      const at = now ?? moved.after.lastEventAt;
      const from = moved.before === undefined ? null : messageStatus(moved.before.facts);
      const to = messageStatus(moved.after.facts);
      const entry = event.timelineEntry;
      if (entry !== undefined && from !== to)
        append(
          t,
          {
            kind: 'message.status_changed',
            at,
            message: moved.after,
            from,
            to,
            event: { id: entry.id, type: entry.type, occurredAt: entry.occurredAt },
          },
          event.actor,
        );
      if (alerts !== undefined) moveWindows(t, alerts, moved.after, moved.before === undefined, at);
    }
    return ownOutcome ?? ruleOutcome;
  }

  // Deliverability alerts (docs/decisions.md in the mailwarden repository, "Deliverability alerts").
  function moveWindows(t: Tables, alerts: StoredAlertRule, message: MessageRecord, created: boolean, at: number) {
    const bounced = (message.facts & Fact.hard_bounced) !== 0;
    const complained = (message.facts & Fact.complained) !== 0;
    const crossedUp: string[] = [];
    for (const scope of alerts.trackingIds && message.trackingId !== null ? [null, message.trackingId] : [null]) {
      let window = t.windows.get(scope);
      if (created) {
        window ??= { slots: [], head: 0, slotOf: new Map(), bounced: 0, complained: 0, bounceFiring: false, complaintFiring: false };
        t.windows.set(scope, window);
        const slot = { key: message.key, bounced, complained };
        if (window.slots.length < alerts.window) {
          window.slotOf.set(message.key, window.slots.length);
          window.slots.push(slot);
        } else {
          // Full: the oldest leaves, with its counts.
          const oldest = window.slots[window.head]!;
          window.slotOf.delete(oldest.key);
          window.bounced -= Number(oldest.bounced);
          window.complained -= Number(oldest.complained);
          window.slots[window.head] = slot;
          window.slotOf.set(message.key, window.head);
          window.head = (window.head + 1) % window.slots.length;
        }
        window.bounced += Number(bounced);
        window.complained += Number(complained);
      } else {
        const index = window?.slotOf.get(message.key);
        const slot = index === undefined ? undefined : window!.slots[index]!;
        if (slot === undefined || window === undefined || ((!bounced || slot.bounced) && (!complained || slot.complained))) continue;
        window.bounced += Number(bounced && !slot.bounced);
        window.complained += Number(complained && !slot.complained);
        slot.bounced ||= bounced;
        slot.complained ||= complained;
      }
      if (window === undefined) continue;
      const messages = window.slots.length;
      const rates = [
        { kind: 'alert.bounce_rate' as const, count: window.bounced, firing: window.bounceFiring, ...alerts.bounce },
        { kind: 'alert.complaint_rate' as const, count: window.complained, firing: window.complaintFiring, ...alerts.complaint },
      ];
      for (const { kind, count, firing, firePpm, resolvePpm } of rates) {
        // Integers only, so every store decides alike.
        const up = !firing && messages >= alerts.minMessages && count * 1e6 >= firePpm * messages;
        if (!up && !(firing && count * 1e6 < resolvePpm * messages)) continue;
        if (kind === 'alert.bounce_rate') window.bounceFiring = up;
        else window.complaintFiring = up;
        append(t, { kind, at, trackingId: scope, firing: up, messages, count, thresholdPpm: up ? firePpm : resolvePpm }, ruleActors.alerts);
        if (up && scope === null) crossedUp.push(kind);
      }
    }
    const cause = crossedUp[0] as PausedStream['cause'] | undefined;
    if (cause === undefined) return;
    for (const stream of alerts.pause) {
      if (t.paused.has(stream)) continue;
      t.paused.set(stream, { stream, pausedAt: at, cause });
      append(t, { kind: 'stream.paused', at, stream, cause }, ruleActors.alerts);
    }
  }

  // The soft-bounce rule (docs/decisions.md in the mailwarden repository, "The soft-bounce rule").
  function countRule(t: Tables, input: NonNullable<StoredEvent['ruleInput']>, rule: StoredSoftBounceRule, now: number | undefined) {
    const horizon = now === undefined ? -Infinity : now - rule.keepMs;
    const stored = t.history.get(input.hash);
    let lastDelivery = stored?.lastDelivery != null && stored.lastDelivery >= horizon ? stored.lastDelivery : null;
    let bounces = (stored?.bounces ?? []).filter((bounce) => bounce.at >= horizon);
    let outcome: SuppressionMergeOutcome = 'applied';
    if (input.kind === 'delivery') {
      if (input.at >= horizon && (lastDelivery === null || input.at > lastDelivery)) lastDelivery = input.at;
      if (lastDelivery !== null) bounces = bounces.filter((bounce) => bounce.at >= (lastDelivery as number));
    } else {
      const bounce: KeptBounce = {
        at: input.at,
        eventId: input.cause.eventId,
        message: input.message,
        packed: input.packed,
        causeJson: input.causeJson,
      };
      const wide = alive(t.suppressions.get(slot(undefined, input.hash)), now);
      const twin = bounces.findIndex((kept) => kept.message === bounce.message);
      const skip =
        isAllowlisted(t, input.hash, input.email) ||
        bounce.at < horizon ||
        (rule.resetOnDelivery && lastDelivery !== null && bounce.at < lastDelivery) ||
        (wide?.provenance !== undefined &&
          (wide.reason === 'hard_bounce' || wide.reason === 'complaint') &&
          wide.provenance.at < bounce.at) ||
        (twin !== -1 && before(bounces[twin]!, bounce) <= 0);
      if (!skip) {
        if (twin !== -1) bounces.splice(twin, 1);
        let i = bounces.findIndex((kept) => before(bounce, kept) < 0);
        if (i === -1) i = bounces.length;
        bounces.splice(i, 0, bounce);
        const n = rule.bounces;
        for (let j = Math.max(0, i - n + 1); j <= i && j + n - 1 < bounces.length; j++) {
          const end = bounces[j + n - 1]!;
          const expiresAt = rule.expiresAfterMs === null ? undefined : end.at + rule.expiresAfterMs;
          // Too wide, or its suppression already expired at now (then a later window may count).
          if (end.at - bounces[j]!.at > rule.windowMs || (expiresAt !== undefined && now !== undefined && expiresAt <= now)) continue;
          // The provenance as a Lua script would build it: the packed parts concatenated, then read back.
          const packed = `w${end.at},${end.eventId},${end.causeJson.slice(0, -1)},[${rule.packed},[${bounces
            .slice(j, j + n)
            .map((kept) => kept.packed)
            .join(',')}]]]`;
          const stored = alive(t.suppressions.get(slot(undefined, input.hash)), now);
          const candidate: SuppressionRecord = {
            hash: input.hash,
            email: input.email,
            reason: 'hard_bounce',
            createdAt: end.at,
            provenance: unpackProvenance(packed),
            ...(expiresAt === undefined ? {} : { expiresAt }),
          };
          // A window ending at the stored one's last bounce is that window with a late bounce between: it replaces it.
          if (
            stored?.provenance?.rule !== undefined &&
            stored.provenance.at === end.at &&
            stored.provenance.event?.eventId === end.eventId
          ) {
            const remade = { ...stored, provenance: candidate.provenance!, ...(expiresAt === undefined ? {} : { expiresAt }) };
            t.suppressions.set(slot(undefined, input.hash), remade);
            if (!isDeepStrictEqual(remade, stored))
              append(t, { kind: 'suppression.updated', at: now ?? end.at, record: remade, previous: stored }, ruleActors.softBounces);
          } else outcome = merge(t, candidate, now, ruleActors.softBounces);
          bounces = bounces.filter((kept) => kept.at <= end.at);
          break;
        }
      }
    }
    if (bounces.length === 0 && lastDelivery === null) t.history.delete(input.hash);
    else t.history.set(input.hash, { bounces, lastDelivery });
    return outcome;
  }

  // One suppression joined into its list, wholly: what an event's suppression and a bulk import both do.
  function merge(t: Tables, seen: SuppressionRecord, now: number | undefined, actor: string | undefined): SuppressionMergeOutcome {
    if (alive(seen, now) === undefined) return 'applied';
    const where = slot(seen.stream, seen.hash);
    const known = alive(t.suppressions.get(where), now);
    if (known === undefined) {
      add(t, where, seen, now ?? seen.createdAt, actor);
      return 'suppressed';
    }
    // The provenance, and its expiry, are the winner's (provenanceWins: the stronger reason's, then the earlier cause's).
    const reason = strongerReason(known.reason, seen.reason);
    const joined = {
      ...(provenanceWins(seen, known) ? seen : known),
      email: known.email,
      reason,
      createdAt: Math.min(known.createdAt, seen.createdAt),
    };
    t.suppressions.set(where, joined);
    // The feed tells an upgrade from any other change; the same record is no change.
    if (reason !== known.reason)
      append(t, { kind: 'suppression.upgraded', at: now ?? seen.createdAt, record: joined, previous: known }, actor);
    else if (!isDeepStrictEqual(joined, known))
      append(t, { kind: 'suppression.updated', at: now ?? seen.createdAt, record: joined, previous: known }, actor);
    // The outcome says what the event did to the address: here, raised its reason.
    return reason === known.reason ? 'applied' : `upgraded_from_${known.reason}`;
  }

  // A record into a list that has none alive: one there expired is reported as such first.
  function add(t: Tables, where: string, record: SuppressionRecord, at: number, actor: string | undefined) {
    const expired = t.suppressions.get(where);
    if (expired !== undefined) append(t, { kind: 'suppression.expired', at, record: expired }, ruleActors.expiry);
    t.suppressions.set(where, { ...record });
    append(t, { kind: 'suppression.added', at, record }, actor);
  }

  // Removal from the project-wide list also forgets the soft-bounce history: the rule counts afresh.
  function remove(t: Tables, hash: string, stream: string | undefined, now: number | undefined, actor: string | undefined) {
    const record = t.suppressions.get(slot(stream, hash));
    t.suppressions.delete(slot(stream, hash));
    if (stream === undefined) t.history.delete(hash);
    if (record !== undefined) append(t, { kind: 'suppression.removed', at: now ?? 0, record }, actor);
    return record;
  }

  const outboundOf = ({ owner: _owner, until: _until, ...state }: OutboundState & { owner: string; until: number }): OutboundState => state;

  return {
    async getSuppression(projectId, hash, stream, now) {
      return copy(check(tables(projectId), hash, stream, now));
    },
    async getSuppressions(projectId, hashes, stream, now) {
      return hashes.map((hash) => copy(check(tables(projectId), hash, stream, now)));
    },
    async addSuppression(projectId, record, now, actor) {
      const t = tables(projectId);
      const existing = alive(t.suppressions.get(slot(record.stream, record.hash)), now);
      if (existing !== undefined) return { record: { ...existing }, created: false };
      add(t, slot(record.stream, record.hash), record, now ?? record.createdAt, actor);
      return { record: { ...record }, created: true };
    },
    async removeSuppression(projectId, hash, stream, now, actor) {
      return remove(tables(projectId), hash, stream, now, actor);
    },
    async mergeSuppressions(projectId, records, now, actor) {
      return records.map((record) => merge(tables(projectId), record, now, actor));
    },
    async removeSuppressions(projectId, hashes, stream, now, actor) {
      return hashes.map((hash) => remove(tables(projectId), hash, stream, now, actor));
    },
    async listSuppressions(projectId, { stream, reason, emailPrefix, from, to, expiring, now, limit, after }) {
      return [...tables(projectId).suppressions.values()]
        .filter((record) => record.stream === stream && alive(record, now) !== undefined)
        .filter((record) => expiring === undefined || expiring === (record.expiresAt !== undefined))
        .filter((record) => reason === undefined || record.reason === reason)
        .filter((record) => emailPrefix === undefined || record.email.startsWith(emailPrefix))
        .filter((record) => (from === undefined || record.createdAt >= from) && (to === undefined || record.createdAt < to))
        .filter((record) => after === undefined || newestSuppressionFirst(record, after) > 0)
        .sort(newestSuppressionFirst)
        .slice(0, limit)
        .map((record) => ({ ...record }));
    },
    async applyEvents(projectId, events, options = {}) {
      return events.map((event) => apply(tables(projectId), event, options.now, options.softBounces, options.alerts));
    },
    async getStats(projectId, { trackingId, interval, from, to }) {
      return sumHours(tables(projectId).buckets.get(trackingId ?? '') ?? [], interval, from, to);
    },
    async getMessage(projectId, key) {
      const t = tables(projectId);
      const message = t.messages.get(key);
      return message === undefined ? undefined : { ...message, timeline: (t.timelines.get(key) ?? []).map((entry) => ({ ...entry })) };
    },
    async listMessages(
      projectId,
      { trackingId, status, recipient, recipientPrefix, recipientDomain, provider, stream, from, to, limit, after },
    ) {
      return [...tables(projectId).messages.values()]
        .filter((message) => trackingId === undefined || message.trackingId === trackingId)
        .filter((message) => status === undefined || messageStatus(message.facts) === status)
        .filter(
          (message) =>
            (recipient === undefined || message.recipient === recipient) && (provider === undefined || message.provider === provider),
        )
        .filter((message) => recipientPrefix === undefined || message.recipient.startsWith(recipientPrefix))
        .filter((message) => recipientDomain === undefined || recipientDomainOf(message.recipient) === recipientDomain)
        .filter((message) => stream === undefined || message.stream === stream)
        .filter((message) => (from === undefined || message.lastEventAt >= from) && (to === undefined || message.lastEventAt < to))
        .filter((message) => after === undefined || newestMessageFirst(message, after) > 0)
        .sort(newestMessageFirst)
        .slice(0, limit)
        .map((message) => ({ ...message }));
    },
    async listTrackingIds(projectId, { search, limit, after }) {
      return [...tables(projectId).trackingIds.values()]
        .filter((record) => search === undefined || trackingIdSearchKey(record.trackingId).includes(search))
        .filter((record) => after === undefined || compareCodePoints(record.trackingId, after) > 0)
        .sort((a, b) => compareCodePoints(a.trackingId, b.trackingId))
        .slice(0, limit)
        .map((record) => ({ ...record }));
    },
    async getTrackingId(projectId, trackingId) {
      return copy(tables(projectId).trackingIds.get(trackingId));
    },
    async listAllowlist(projectId, { limit, after }) {
      return [...tables(projectId).allowlist.values()]
        .filter((entry) => after === undefined || compareCodePoints(entry.entry, after) > 0)
        .sort((a, b) => compareCodePoints(a.entry, b.entry))
        .slice(0, limit)
        .map((entry) => ({ ...entry }));
    },
    async addAllowlistEntry(projectId, entry, actor) {
      const t = tables(projectId);
      const existing = t.allowlist.get(entry.key);
      if (existing !== undefined) return { entry: { ...existing }, created: false };
      t.allowlist.set(entry.key, { ...entry });
      append(t, { kind: 'allowlist.added', at: entry.createdAt, entry }, actor);
      return { entry: { ...entry }, created: true };
    },
    async removeAllowlistEntry(projectId, key, now, actor) {
      const t = tables(projectId);
      const entry = t.allowlist.get(key);
      t.allowlist.delete(key);
      if (entry !== undefined) append(t, { kind: 'allowlist.removed', at: now ?? 0, entry }, actor);
      return entry;
    },
    async findAllowlisted(projectId, recipients) {
      return recipients.map(({ hash, email }) => isAllowlisted(tables(projectId), hash, email));
    },
    async purgeExpired(now) {
      let deleted = 0;
      for (const t of projects.values()) {
        for (const [where, record] of t.suppressions) {
          if (alive(record, now) !== undefined) continue;
          t.suppressions.delete(where);
          append(t, { kind: 'suppression.expired', at: now, record }, ruleActors.expiry);
          deleted += 1;
        }
        if (retention === undefined) continue;
        // Retention deletes from the oldest end: the last `maxLength`, none older than `maxAgeMs`.
        const { feed } = t;
        let gone = Math.max(0, feed.changes.length - retention.maxLength);
        while (gone < feed.changes.length && feed.changes[gone]!.at < now - retention.maxAgeMs) gone += 1;
        if (gone > 0) feed.trimmed = feed.changes[gone - 1]!.seq;
        feed.changes.splice(0, gone);
      }
      return deleted;
    },
    ...(retention === undefined ? {} : { changes: retention }),
    async listChanges(projectId, { after, limit, kinds, actors, hash }) {
      if (retention === undefined) return { changes: [], next: after, last: 0 };
      const { feed } = tables(projectId);
      if (after < feed.trimmed) throw new MailwardenError('change_cursor_expired', `changes after ${after} are no longer kept`);
      // Erasures leave gaps in the seqs: the first change after `after` is searched for.
      let start = feed.changes.findIndex((change) => change.seq > after);
      if (start === -1) start = feed.changes.length;
      const matches = (change: Change) =>
        (kinds === undefined || kinds.length === 0 || kinds.includes(change.kind)) &&
        (actors === undefined || actors.length === 0 || actors.some((actor) => actorMatches(change.actor, actor))) &&
        (hash === undefined || hashOf(change) === hash);
      const filtered = (kinds !== undefined && kinds.length > 0) || (actors !== undefined && actors.length > 0) || hash !== undefined;
      const looked = feed.changes.slice(start, start + (filtered ? Math.max(10 * limit, 1000) : limit));
      const changes = filtered ? looked.filter(matches).slice(0, limit) : looked;
      const next = filtered && changes.length < limit ? (looked.at(-1)?.seq ?? after) : (changes.at(-1)?.seq ?? after);
      return { changes: structuredClone(changes), next: Math.max(next, after), last: feed.last };
    },
    async getAlertWindows(projectId, scopes) {
      const { windows } = tables(projectId);
      return scopes.map((trackingId) => {
        const window = windows.get(trackingId);
        if (window === undefined) return undefined;
        const { bounced, complained, bounceFiring, complaintFiring } = window;
        return { trackingId, messages: window.slots.length, bounced, complained, bounceFiring, complaintFiring };
      });
    },
    async listPausedStreams(projectId) {
      return [...tables(projectId).paused.values()].sort((a, b) => compareCodePoints(a.stream, b.stream)).map((paused) => ({ ...paused }));
    },
    async pauseStream(projectId, stream, now, actor) {
      const t = tables(projectId);
      const existing = t.paused.get(stream);
      if (existing !== undefined) return { paused: { ...existing }, created: false };
      t.paused.set(stream, { stream, pausedAt: now, cause: 'operator' });
      append(t, { kind: 'stream.paused', at: now, stream, cause: 'operator' }, actor);
      return { paused: { stream, pausedAt: now, cause: 'operator' }, created: true };
    },
    async resumeStream(projectId, stream, now, actor) {
      const t = tables(projectId);
      const paused = t.paused.get(stream);
      if (paused === undefined) return undefined;
      t.paused.delete(stream);
      append(t, { kind: 'stream.resumed', at: now, stream, cause: paused.cause }, actor);
      return { ...paused };
    },
    async leaseOutbound(projectId, endpoint, owner, now, until) {
      const t = tables(projectId);
      const known = t.outbound.get(endpoint);
      if (known !== undefined && known.owner !== owner && known.until > now) return undefined;
      const state = known ?? {
        endpoint,
        cursor: t.feed.last,
        failures: 0,
        failingSince: null,
        nextAttemptAt: 0,
        pausedAt: null,
        lastError: null,
        lastSuccessAt: null,
        owner,
        until,
      };
      t.outbound.set(endpoint, { ...state, owner, until });
      return outboundOf(state);
    },
    async saveOutbound(projectId, endpoint, owner, progress, until) {
      const t = tables(projectId);
      const known = t.outbound.get(endpoint);
      if (known?.owner !== owner) return false;
      t.outbound.set(endpoint, { ...progress, endpoint, owner, until });
      if (known.pausedAt === null && progress.pausedAt !== null)
        append(
          t,
          {
            kind: 'endpoint.paused',
            at: progress.pausedAt,
            endpoint,
            ...(progress.lastError === null ? {} : { error: progress.lastError }),
          },
          ruleActors.outbound,
        );
      return true;
    },
    async getOutbound(projectId, endpoints) {
      const { outbound } = tables(projectId);
      return endpoints.map((endpoint) => {
        const known = outbound.get(endpoint);
        return known === undefined ? undefined : outboundOf(known);
      });
    },
    async resumeOutbound(projectId, endpoint, now, actor) {
      const t = tables(projectId);
      const known = t.outbound.get(endpoint);
      if (known === undefined || known.pausedAt === null) return known === undefined ? undefined : outboundOf(known);
      const resumed = { ...known, failures: 0, failingSince: null, nextAttemptAt: 0, pausedAt: null, lastError: null };
      t.outbound.set(endpoint, resumed);
      append(t, { kind: 'endpoint.resumed', at: now, endpoint }, actor);
      return outboundOf(resumed);
    },
    async claimWebhookToken(projectId, token, digest) {
      const { webhookTokens } = tables(projectId);
      const known = webhookTokens.get(token);
      if (known === undefined) webhookTokens.set(token, digest);
      return known === undefined ? 'first' : known === digest ? 'same' : 'conflict';
    },
    // Erasure (docs/decisions.md in the mailwarden repository, "Erasure"): what blocks it stays, by hash; the rest goes.
    async eraseAddress(projectId, { hash, email, forms, suppression, now, actor }) {
      const t = tables(projectId);
      const wide = alive(t.suppressions.get(slot(undefined, hash)), now);
      t.suppressions.set(slot(undefined, hash), wide === undefined ? { ...suppression } : erased(wide, suppression.email));
      const streams = [...t.suppressions.values()]
        .filter((record) => record.hash === hash && record.stream !== undefined)
        .sort((a, b) => compareCodePoints(a.stream!, b.stream!));
      for (const record of streams) t.suppressions.set(slot(record.stream, hash), erased(record, suppression.email));
      const records = [undefined, ...streams.map((record) => record.stream)].map((stream) => ({
        ...t.suppressions.get(slot(stream, hash))!,
      }));
      t.allowlist.delete(hash);
      t.history.delete(hash);
      // Its messages with their timelines and their events' dedup keys; tracking-ID rows, stats and windows are counts and stay.
      const gone = [...t.messages.values()].filter((message) => message.recipient === email);
      for (const { key } of gone) {
        for (const entry of t.timelines.get(key) ?? []) t.eventKeys.delete(`${entry.provider}:${entry.eventKey}`);
        t.messages.delete(key);
        t.timelines.delete(key);
        t.factTimes.delete(key);
      }
      for (const key of t.eventKeys) if (forms.some((form) => key.includes(form))) t.eventKeys.delete(key);
      const about = (change: Change) =>
        change.kind === 'message.status_changed'
          ? change.message.recipient === email
          : change.kind !== 'address.erased' && hashOf(change) === hash;
      const kept = t.feed.changes.filter((change) => !about(change));
      const result = { records, messages: gone.length, changes: t.feed.changes.length - kept.length };
      t.feed.changes = kept;
      append(t, { kind: 'address.erased', at: now, hash, ...result }, actor);
      return structuredClone(result);
    },
    async syncApiKeys(projectId, keys, now, actor) {
      const t = tables(projectId);
      const given = new Map(keys.map((key) => [key.name, key]));
      const changes: KeyChange[] = [];
      for (const name of [...new Set([...t.keys.keys(), ...given.keys()])].sort(compareCodePoints)) {
        const [was, is] = [t.keys.get(name), given.get(name)];
        const key = is === undefined ? undefined : { name, scopes: [...is.scopes] };
        const previous = was === undefined ? undefined : { name, scopes: [...was.scopes] };
        const change: Omit<KeyChange, 'seq'> | undefined =
          previous === undefined
            ? { kind: 'key.added', at: now, key: key! }
            : key === undefined
              ? { kind: 'key.removed', at: now, key: previous }
              : was!.version !== is!.version || !isDeepStrictEqual(key.scopes, previous.scopes)
                ? { kind: 'key.updated', at: now, key, previous }
                : undefined;
        if (change === undefined) continue;
        append(t, change, actor);
        changes.push({ seq: retention === undefined ? 0 : t.feed.last, ...change, actor } as KeyChange);
      }
      t.keys = new Map([...given].map(([name, key]) => [name, { ...key, scopes: [...key.scopes] }]));
      return changes;
    },
    async hitRateLimits(buckets, windowMs, now, counts) {
      const window = Math.floor(now / windowMs);
      return buckets.map((bucket, i) => {
        const known = rates.get(bucket);
        const counter = known?.window === window ? known : { window, count: 0 };
        counter.count += counts?.[i] ?? 1;
        rates.set(bucket, counter);
        return counter.count;
      });
    },
    async dump() {
      // Maps and Sets as arrays of their entries: every key and value, as JSON text.
      return JSON.stringify([...projects], (_key, value) => (value instanceof Map || value instanceof Set ? [...value] : value));
    },
    async close() {},
  };
}
