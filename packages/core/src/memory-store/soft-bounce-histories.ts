import type { DeliveryInput, SoftBounceInput, StoredSoftBounceRule, SuppressionMergeOutcome, SuppressionRecord } from '../store/store.js';
import type { SuppressionCause, SuppressionProvenance } from '../suppressions/provenance.js';
import { ruleActors } from '../store/actor.js';
import type { SuppressionTable } from './suppression-table.js';

/** A soft bounce the rule keeps: its time, its message and the cause a rule's provenance lists. */
interface KeptBounce {
  at: number;
  message: string;
  cause: SuppressionCause;
}

/** One address's history: bounces sorted by (at, eventId), the latest delivery, and when nothing of it is left. */
interface History {
  bounces: KeptBounce[];
  lastDelivery: number | undefined;
  /** The latest time kept plus the rule's `keepMs`: after it, pruning by any `now` leaves nothing. */
  until: number;
}

/** What the rule reads and writes in its project beside the history. */
export interface RuleProject {
  /** The project-wide list (step 3d reads it). */
  readonly suppressions: SuppressionTable;
  isAllowlisted(hash: string, email: string): boolean;
  /** Joins a record into its list as an event's suppression joins; `actor` for the feed. */
  mergeSuppression(record: SuppressionRecord, now: number | undefined, actor: string | undefined): SuppressionMergeOutcome;
  /** Replaces the provenance (and `expiresAt`, when given) of the project-wide entry of `hash`; `at` for the feed. */
  replaceRuleProvenance(hash: string, provenance: SuppressionProvenance, expiresAt: number | undefined, at: number): void;
}

/** Whether a kept bounce sorts after (`at`, `eventId`): by time, then event ID. */
function isAfter(bounce: KeptBounce, at: number, eventId: string): boolean {
  return bounce.at > at || (bounce.at === at && bounce.cause.eventId > eventId);
}

/**
 * One project's soft-bounce histories by address hash, and the rule that counts them, exactly as
 * docs/decisions.md, "The soft-bounce rule", states it (the steps below are its numbers). A history
 * saved is moved to the end of the map, so the map is roughly least recently written first.
 */
export class SoftBounceHistories {
  private readonly histories = new Map<string, History>();

  get size(): number {
    return this.histories.size;
  }

  /** Forgets an address's history (its project-wide suppression was removed: the rule counts afresh). */
  forget(hash: string): void {
    this.histories.delete(hash);
  }

  /**
   * Counts one applied event's `ruleInput` and returns what the rule did to the project-wide list:
   * `suppressed`, `upgraded_from_<reason>`, or `applied` (nothing, or a join that raised nothing).
   */
  count(
    input: SoftBounceInput | DeliveryInput,
    rule: StoredSoftBounceRule,
    now: number | undefined,
    project: RuleProject,
  ): SuppressionMergeOutcome {
    const horizon = now === undefined ? -Infinity : now - rule.keepMs;
    const stored = this.histories.get(input.hash);
    // Step 1: prune by `now`.
    let bounces = stored === undefined ? [] : stored.bounces.filter((bounce) => bounce.at >= horizon);
    let lastDelivery = stored?.lastDelivery !== undefined && stored.lastDelivery >= horizon ? stored.lastDelivery : undefined;
    let outcome: SuppressionMergeOutcome = 'applied';

    if (input.kind === 'delivery') {
      // Step 2.
      if (input.at >= horizon) {
        const latest = Math.max(lastDelivery ?? -Infinity, input.at);
        lastDelivery = latest;
        bounces = bounces.filter((bounce) => bounce.at >= latest);
      }
    } else if (this.counts(input, bounces, lastDelivery, horizon, rule, now, project)) {
      const { at } = input;
      const { eventId } = input.cause;
      // Step 3e's replacement: a later bounce of the same message gives way to this one.
      const same = bounces.findIndex((bounce) => bounce.message === input.message);
      if (same >= 0) bounces.splice(same, 1);
      // Step 4: insert in order, then the earliest-ending window of `bounces` consecutive ones that holds it.
      let i = bounces.length;
      while (i > 0 && isAfter(bounces[i - 1]!, at, eventId)) i--;
      bounces.splice(i, 0, { at, message: input.message, cause: { ...input.cause } });
      const n = rule.bounces;
      for (let j = Math.max(0, i - n + 1); j <= i && j + n - 1 < bounces.length; j++) {
        const last = bounces[j + n - 1]!;
        if (last.at - bounces[j]!.at > rule.windowMs) continue;
        // A window whose suppression would already be expired at `now` does not count: a later one may.
        if (now !== undefined && rule.expiresAfterMs !== null && last.at + rule.expiresAfterMs <= now) continue;
        // Step 5: the window makes a hard_bounce in the project-wide list.
        const candidate: SuppressionRecord = {
          hash: input.hash,
          email: input.email,
          reason: 'hard_bounce',
          createdAt: last.at,
          provenance: {
            source: 'webhook',
            at: last.at,
            event: { ...last.cause },
            rule: {
              bounces: rule.bounces,
              days: rule.days,
              resetOnDelivery: rule.resetOnDelivery,
              events: bounces.slice(j, j + n).map((bounce) => ({ ...bounce.cause, at: bounce.at })),
            },
          },
          ...(rule.expiresAfterMs !== null && { expiresAt: last.at + rule.expiresAfterMs }),
        };
        const held = project.suppressions.get(input.hash, now)?.provenance;
        if (held?.rule !== undefined && held.at === last.at && held.event?.eventId === last.cause.eventId) {
          // The stored window ends at the same bounce (this one arrived between its members): the
          // window of the bounces kept now replaces it, which a join would not do (same time, same event).
          project.replaceRuleProvenance(input.hash, candidate.provenance!, candidate.expiresAt, now ?? candidate.createdAt);
        } else {
          outcome = project.mergeSuppression(candidate, now, ruleActors.softBounces);
        }
        // Bounces after the suppression cannot move it (step 3d): they need not be kept.
        bounces = bounces.filter((bounce) => bounce.at <= last.at);
        break;
      }
    }
    this.save(input.hash, bounces, lastDelivery, rule.keepMs);
    return outcome;
  }

  /**
   * Deletes up to `budget` histories that nothing is left of at `now` (each history's `until`), looking
   * at no more than `budget` of them: the ones looked at and kept move to the end, so repeated calls go
   * round the whole map. Returns how many it deleted.
   */
  purge(now: number, budget: number): number {
    const visited: [string, History][] = [];
    for (const entry of this.histories) {
      if (visited.length === budget) break;
      visited.push(entry);
    }
    let deleted = 0;
    for (const [hash, history] of visited) {
      this.histories.delete(hash);
      if (history.until < now) deleted++;
      else this.histories.set(hash, history);
    }
    return deleted;
  }

  /** Step 3: whether a soft bounce is kept (3e's "the kept one is after it" case is kept: it replaces that one). */
  private counts(
    input: SoftBounceInput,
    bounces: readonly KeptBounce[],
    lastDelivery: number | undefined,
    horizon: number,
    rule: StoredSoftBounceRule,
    now: number | undefined,
    project: RuleProject,
  ): boolean {
    const { at } = input;
    if (project.isAllowlisted(input.hash, input.email)) return false; // a
    if (at < horizon) return false; // b
    if (rule.resetOnDelivery && lastDelivery !== undefined && at < lastDelivery) return false; // c
    const held = project.suppressions.get(input.hash, now);
    if (
      held !== undefined &&
      (held.reason === 'hard_bounce' || held.reason === 'complaint') &&
      held.provenance !== undefined &&
      held.provenance.at < at
    ) {
      return false; // d
    }
    const same = bounces.find((bounce) => bounce.message === input.message);
    return same === undefined || isAfter(same, at, input.cause.eventId); // e
  }

  /** Step 7: an empty history is deleted; any other is saved at the end of the map. */
  private save(hash: string, bounces: KeptBounce[], lastDelivery: number | undefined, keepMs: number): void {
    this.histories.delete(hash);
    if (bounces.length === 0 && lastDelivery === undefined) return;
    const latest = Math.max(lastDelivery ?? -Infinity, bounces[bounces.length - 1]?.at ?? -Infinity);
    this.histories.set(hash, { bounces, lastDelivery, until: latest + keepMs });
  }
}
