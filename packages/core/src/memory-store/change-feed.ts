import { MailwardenError } from '../errors.js';
import { actorMatches } from '../store/actor.js';
import type { Change, ChangeFeedOptions, ChangePage, ChangeQuery } from '../store/changes.js';

/** A change as a write makes it: the feed gives it its `seq` (and its `actor`, when the write names one). */
export type NewChange = Change extends infer C ? (C extends Change ? Omit<C, 'seq' | 'actor'> : never) : never;

/** How many changes a filtered page looks at, at least (docs/storage.md, "Change feed (memory store)"). */
const LOOK_AHEAD_MIN = 1_000;
/** And per change asked for: a page of `limit` looks at `LOOK_AHEAD_PER_ITEM × limit`, if that is more. */
const LOOK_AHEAD_PER_ITEM = 10;

/** The hash a change is about, for `ChangeQuery.hash`: a suppression's, an allowlist entry's key, an erasure's. */
export function hashOf(change: Change): string | undefined {
  switch (change.kind) {
    case 'suppression.added':
    case 'suppression.upgraded':
    case 'suppression.updated':
    case 'suppression.removed':
    case 'suppression.expired':
      return change.record.hash;
    case 'allowlist.added':
    case 'allowlist.removed':
      return change.entry.key;
    case 'address.erased':
      return change.hash;
    default:
      return undefined;
  }
}

/**
 * One project's change feed in memory (docs/storage.md, "Change feed (memory store)"): the changes
 * kept, oldest first, one slot per `seq` from `base + 1` to `last`, so a cursor finds its place by
 * arithmetic. Retention deletes from the front only: by length on append, by age in `purge`. An
 * erasure empties the slots of the changes it deletes (`erase`): holes a page steps over.
 */
export class ChangeFeed {
  /** Slots from `head` on; the slots before it were deleted and are reclaimed in bulk. */
  private entries: (Change | undefined)[] = [];
  private head = 0;
  /** The `seq` of the slot before `entries[head]` (0 at first): slot `head + i` holds `seq` `base + 1 + i`. */
  private base = 0;
  /** Emptied slots from `head` on (erased changes). */
  private holes = 0;
  /** The latest `seq` given (0 before the first change). */
  last = 0;
  /** The highest `seq` retention deleted (0 when none): a cursor before it missed changes. */
  trimmed = 0;

  constructor(private readonly retention: Required<ChangeFeedOptions>) {}

  /** Changes kept. */
  get size(): number {
    return this.entries.length - this.head - this.holes;
  }

  /** Appends a change the caller made for the feed alone: the feed keeps that very object, its `seq` (and `actor`) set. */
  append(change: NewChange, actor?: string): Change {
    // Numbered in place, not copied: one object per change, kept until retention drops it.
    const numbered = change as Change;
    numbered.seq = ++this.last;
    // Only when named: a change without an actor stores no `actor` key (answers stay byte for byte).
    if (actor !== undefined) numbered.actor = actor;
    this.entries.push(numbered);
    if (this.size > this.retention.maxLength) this.dropOldest();
    return numbered;
  }

  /** `Store.listChanges`, on copies: a reader never holds what the feed keeps. */
  list(query: ChangeQuery): ChangePage {
    const { after, limit } = query;
    if (after < this.trimmed) {
      throw new MailwardenError(
        'change_cursor_expired',
        `Changes after ${after} are no longer kept: the feed keeps those after ${this.trimmed}. Start again from a listing.`,
        { details: { after, trimmed: this.trimmed } },
      );
    }
    const kinds = query.kinds !== undefined && query.kinds.length > 0 ? new Set<string>(query.kinds) : undefined;
    const actors = query.actors !== undefined && query.actors.length > 0 ? query.actors : undefined;
    const { hash } = query;
    const filtered = kinds !== undefined || actors !== undefined || hash !== undefined;
    // Holes are skipped as filtered changes are: a page looks ahead past them, boundedly.
    const lookAt = filtered || this.holes > 0 ? Math.max(LOOK_AHEAD_MIN, LOOK_AHEAD_PER_ITEM * limit) : limit;
    const changes: Change[] = [];
    let next = after;
    const start = this.head + Math.max(0, Math.floor(after) - this.base);
    const end = Math.min(this.entries.length, start + lookAt);
    for (let i = start; i < end && changes.length < limit; i++) {
      next = this.base + 1 + (i - this.head);
      const change = this.entries[i];
      if (change === undefined) continue;
      if (kinds !== undefined && !kinds.has(change.kind)) continue;
      if (actors !== undefined && !actors.some((actor) => actorMatches(change.actor, actor))) continue;
      if (hash !== undefined && hashOf(change) !== hash) continue;
      changes.push(structuredClone(change));
    }
    return { changes, next, last: this.last };
  }

  /** Deletes up to `budget` changes older than the retention's age at `now`, oldest first. Returns how many. */
  purge(now: number, budget: number): number {
    const cutoff = now - this.retention.maxAgeMs;
    let deleted = 0;
    for (;;) {
      this.dropHoles();
      if (deleted >= budget || this.size === 0 || this.entries[this.head]!.at >= cutoff) return deleted;
      this.dropOldest();
      deleted++;
    }
  }

  /** Empties the slots of the changes `erased` picks (docs/decisions.md, "Memory store: erasure and actors"). Returns how many. */
  erase(erased: (change: Change) => boolean): number {
    let deleted = 0;
    for (let i = this.head; i < this.entries.length; i++) {
      const change = this.entries[i];
      if (change === undefined || !erased(change)) continue;
      this.entries[i] = undefined;
      this.holes++;
      deleted++;
    }
    this.dropHoles();
    return deleted;
  }

  /** Deletes the oldest change kept (and the holes before it). */
  private dropOldest(): void {
    this.dropHoles();
    this.trimmed = this.entries[this.head]!.seq;
    this.dropSlot();
  }

  /** Drops the holes at the front: no change was there, so no cursor misses one. */
  private dropHoles(): void {
    while (this.head < this.entries.length && this.entries[this.head] === undefined) {
      this.holes--;
      this.dropSlot();
    }
  }

  private dropSlot(): void {
    this.entries[this.head++] = undefined;
    this.base++;
    // Reclaimed once the deleted slots are half of the array: each deletion costs O(1), amortized.
    if (this.head >= 1024 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
