import type { Provider } from '../events/delivery-event.js';
import type { SuppressionReason } from '../vocabulary.js';
import { reasonRank } from './reason.js';

export const suppressionSources = ['api', 'webhook', 'import', 'unsubscribe'] as const;

/**
 * How a suppression came to be: added through the API (`suppressions.add`), by a webhook event (a bounce or
 * a complaint), imported by the CLI, or asked for by the recipient (`unsubscribe`: a provider's
 * unsubscribe event, whose `event` is the cause, a one-click unsubscribe link, or an unsubscribe recorded
 * or imported as such). An unsubscribe's reason is `manual`; this source is what tells it apart
 * (docs/decisions.md, "How an unsubscribe is shown").
 */
export type SuppressionSource = (typeof suppressionSources)[number];

/**
 * How a suppression came to be: its source and, for a webhook one, the event that caused it (the event of
 * the strongest reason, the earliest of those; see `joinSuppressions`). Records stored before provenance
 * existed have none.
 */
export interface SuppressionProvenance {
  source: SuppressionSource;
  /** Epoch milliseconds the cause happened: the event's time when an event caused it, the add's time otherwise. */
  at: number;
  /** The event that caused it (a `webhook` suppression, or an `unsubscribe` one from a provider's event); absent otherwise. */
  event?: SuppressionCause;
  /**
   * When the soft-bounce rule made it (source `webhook`, reason `hard_bounce`): the rule and the bounces
   * that met it. `event` is then the last of them, and `at` its time.
   */
  rule?: SoftBounceRuleCause;
  /** Set when it was added through the API or an import while the address was allowlisted (automatic rules never suppress it). */
  allowlisted?: true;
}

/** The soft-bounce rule as it made a suppression: the rule as configured, and the window of bounces. */
export interface SoftBounceRuleCause {
  bounces: number;
  days: number;
  resetOnDelivery: boolean;
  /** The `bounces` soft bounces of distinct messages that fell within `days`, oldest first. */
  events: RuleBounce[];
}

/** One soft bounce of a rule's window: the event, as a cause, and its time. */
export interface RuleBounce extends SuppressionCause {
  /** Epoch milliseconds of the event. */
  at: number;
}

/** The event that caused a webhook suppression, enough to find it again (a join, not a copy). */
export interface SuppressionCause {
  provider: Provider;
  /** The provider's message ID, `null` when the event named none. */
  messageId: string | null;
  /** The event's timeline entry ID (`timelineEntryId` of its stored key): 32 hex. */
  eventId: string;
  /** What the receiving server or the complainant said: the SMTP reply for a bounce, the feedback type for a complaint. */
  diagnostic: string | null;
}

/** What a join compares: the reason, then the provenance. */
export interface ProvenanceCandidate {
  reason: SuppressionReason;
  provenance?: SuppressionProvenance;
}

/**
 * Whether `candidate`'s provenance beats `current`'s: a stronger reason wins; for the same reason the
 * earlier cause (`at`) wins, a record without provenance (stored before it existed) counting as the
 * latest of all, so the first known cause of its reason replaces it; at the same time the smaller event
 * ID (byte order, ASCII), none sorting first; then the smaller source (`api` < `import` < `unsubscribe` < `webhook`).
 * A total order on distinct causes, so any order of the same records keeps the same provenance (an
 * added and an imported suppression of the same time and reason once kept whichever came first).
 */
export function provenanceWins(candidate: ProvenanceCandidate, current: ProvenanceCandidate): boolean {
  const rank = reasonRank(candidate.reason) - reasonRank(current.reason);
  if (rank !== 0) return rank > 0;
  const at = candidate.provenance?.at ?? Infinity;
  const currentAt = current.provenance?.at ?? Infinity;
  if (at !== currentAt) return at < currentAt;
  const id = candidate.provenance?.event?.eventId ?? '';
  const currentId = current.provenance?.event?.eventId ?? '';
  if (id !== currentId) return id < currentId;
  return (candidate.provenance?.source ?? '~') < (current.provenance?.source ?? '~');
}

/** A source as one letter, in the sources' order (`provenanceWins` compares them as the names compare). Persisted. */
const sourceLetters = { api: 'a', import: 'i', unsubscribe: 'u', webhook: 'w' } as const satisfies Record<SuppressionSource, string>;

/** One bounce of a rule's window as packed provenance lists it: `[provider, messageId, eventId, at, diagnostic]` as JSON. */
export function packRuleBounce(cause: SuppressionCause, at: number): string {
  return JSON.stringify([cause.provider, cause.messageId, cause.eventId, at, cause.diagnostic]);
}

/** A rule as packed provenance writes it: `bounces,days,0|1` (the reset). */
export function packRule(rule: { bounces: number; days: number; resetOnDelivery: boolean }): string {
  return `${rule.bounces},${rule.days},${rule.resetOnDelivery ? 1 : 0}`;
}

/**
 * Provenance packed as one string, for stores that keep it as a value: the source's letter, `at`, ',',
 * the event ID, ',', then the rest as JSON, or nothing when there is no rest. The rest is
 * `[provider, messageId, diagnostic]` of the event, then, only when there is one, the rule as
 * `[bounces, days, 0|1, [bounce, …]]` (each bounce `packRuleBounce`), then, only when set, `1` for
 * `allowlisted` (the rule `null` before it when there is none; provider, message and diagnostic `null`
 * when there is no event). The time and ID come first so a Lua script reads them with one pattern; a
 * store that makes a rule's provenance itself concatenates the parts (`SoftBounceInput.causeJson`,
 * `StoredSoftBounceRule.packed`, `SoftBounceInput.packed`), so this exact layout is persisted.
 */
export function packProvenance(provenance: SuppressionProvenance): string {
  const { source, at, event, rule, allowlisted } = provenance;
  const letter = sourceLetters[source];
  const head = `${letter}${at}`;
  // join makes one flat string: concatenation keeps a rope of the parts, about twice the memory per entry.
  if (rule === undefined && allowlisted !== true) {
    if (event === undefined) return [head, '', ''].join(',');
    return [head, event.eventId, JSON.stringify([event.provider, event.messageId, event.diagnostic])].join(',');
  }
  const cause = JSON.stringify([event?.provider ?? null, event?.messageId ?? null, event?.diagnostic ?? null]).slice(0, -1);
  const packedRule =
    rule === undefined ? 'null' : `[${packRule(rule)},[${rule.events.map((bounce) => packRuleBounce(bounce, bounce.at)).join(',')}]]`;
  return [head, event?.eventId ?? '', `${cause},${packedRule}${allowlisted === true ? ',1' : ''}]`].join(',');
}

type PackedBounce = [Provider, string | null, string, number, string | null];

export function unpackProvenance(packed: string): SuppressionProvenance {
  const first = packed.indexOf(',');
  const second = packed.indexOf(',', first + 1);
  const letter = packed[0];
  const source: SuppressionSource = letter === 'a' ? 'api' : letter === 'w' ? 'webhook' : letter === 'u' ? 'unsubscribe' : 'import';
  const at = Number(packed.slice(1, first));
  const rest = packed.slice(second + 1);
  if (rest === '') return { source, at };
  const [provider, messageId, diagnostic, rule, allowlisted] = JSON.parse(rest) as [
    Provider | null,
    string | null,
    string | null,
    [number, number, number, PackedBounce[]] | null | undefined,
    1 | undefined,
  ];
  const provenance: SuppressionProvenance = { source, at };
  if (provider !== null) provenance.event = { provider, messageId, eventId: packed.slice(first + 1, second), diagnostic };
  if (rule != null) {
    const [bounces, days, reset, events] = rule;
    provenance.rule = {
      bounces,
      days,
      resetOnDelivery: reset === 1,
      events: events.map(([provider, messageId, eventId, at, diagnostic]) => ({ provider, messageId, eventId, at, diagnostic })),
    };
  }
  if (allowlisted === 1) provenance.allowlisted = true;
  return provenance;
}
