import { MailwardenError } from '../errors.js';
import type { Change, ChangeFeedOptions, ChangePage, ChangeQuery } from '../store/changes.js';

/** A change as a write makes it: the feed gives it its `seq`. */
export type NewChange = Change extends infer C ? (C extends Change ? Omit<C, 'seq'> : never) : never;

/** How many changes a filtered page looks at, at least (docs/storage.md, "Change feed (memory store)"). */
const LOOK_AHEAD_MIN = 1_000;
/** And per change asked for: a page of `limit` looks at `LOOK_AHEAD_PER_ITEM × limit`, if that is more. */
const LOOK_AHEAD_PER_ITEM = 10;

/**
 * One project's change feed in memory (docs/storage.md, "Change feed (memory store)"): the changes
 * kept, oldest first, their `seq` gapless from `trimmed + 1` to `last`, so a cursor finds its place by
 * arithmetic. Retention deletes from the front only: by length on append, by age in `purge`.
 */
export class ChangeFeed {
  /** Kept changes from `head` on; the slots before it were deleted and are reclaimed in bulk. */
  private entries: (Change | undefined)[] = [];
  private head = 0;
  /** The latest `seq` given (0 before the first change). */
  last = 0;
  /** The highest `seq` retention deleted (0 when none): a cursor before it missed changes. */
  trimmed = 0;

  constructor(private readonly retention: Required<ChangeFeedOptions>) {}

  get size(): number {
    return this.entries.length - this.head;
  }

  /** Appends a change the caller made for the feed alone: the feed keeps that very object, its `seq` set. */
  append(change: NewChange): void {
    // Numbered in place, not copied: one object per change, kept until retention drops it.
    const numbered = change as Change;
    numbered.seq = ++this.last;
    this.entries.push(numbered);
    if (this.size > this.retention.maxLength) this.dropOldest();
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
    const lookAt = kinds === undefined ? limit : Math.max(LOOK_AHEAD_MIN, LOOK_AHEAD_PER_ITEM * limit);
    const changes: Change[] = [];
    let next = after;
    // The change after `after` is at `head + (after - trimmed)`: seqs are gapless.
    const start = this.head + Math.max(0, Math.floor(after) - this.trimmed);
    const end = Math.min(this.entries.length, start + lookAt);
    for (let i = start; i < end && changes.length < limit; i++) {
      const change = this.entries[i]!;
      next = change.seq;
      if (kinds === undefined || kinds.has(change.kind)) changes.push(structuredClone(change));
    }
    return { changes, next, last: this.last };
  }

  /** Deletes up to `budget` changes older than the retention's age at `now`, oldest first. Returns how many. */
  purge(now: number, budget: number): number {
    const cutoff = now - this.retention.maxAgeMs;
    let deleted = 0;
    while (deleted < budget && this.size > 0 && this.entries[this.head]!.at < cutoff) {
      this.dropOldest();
      deleted++;
    }
    return deleted;
  }

  private dropOldest(): void {
    this.trimmed = this.entries[this.head]!.seq;
    this.entries[this.head++] = undefined;
    // Reclaimed once the deleted slots are half of the array: each deletion costs O(1), amortized.
    if (this.head >= 1024 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
