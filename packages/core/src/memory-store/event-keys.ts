/** Forgotten entries at the front of the queue before it is compacted (also at least half of it). */
const COMPACT_AFTER = 1024;

/**
 * One project's dedup keys (event keys). With retention, each key is also queued with the clock's
 * reading when it was applied; readings never go back, so the queue is oldest first and retention
 * forgets keys from its front, in time proportional to what it forgets.
 */
export class EventKeys {
  private readonly keys = new Set<string>();
  private queue: string[] = [];
  private stamps: number[] = [];
  private head = 0;

  /** `stamped`: whether keys are queued for retention (without it they are kept for good). */
  constructor(private readonly stamped: boolean) {}

  get size(): number {
    return this.keys.size;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Records `key`, applied when the clock read `now`. */
  add(key: string, now: number): void {
    this.keys.add(key);
    if (!this.stamped) return;
    this.queue.push(key);
    this.stamps.push(now);
  }

  /** Forgets every key `erased` picks (an erasure: docs/decisions.md, "Memory store: erasure and actors"). Returns how many. */
  erase(erased: (key: string) => boolean): number {
    const gone = new Set<string>();
    for (const key of this.keys) if (erased(key)) gone.add(key);
    if (gone.size === 0) return 0;
    for (const key of gone) this.keys.delete(key);
    // Blanked in the queue too, as retention blanks what it forgets: the text must not stay.
    const { queue } = this;
    for (let i = this.head; i < queue.length; i++) if (gone.has(queue[i]!)) queue[i] = '';
    return gone.size;
  }

  /**
   * Forgets the keys applied before `time`. A key stamped before the clock started (`-Infinity`)
   * counts as applied at `startedAt`, the clock's first reading.
   */
  forgetAppliedBefore(time: number, startedAt: number): void {
    const { queue, stamps, keys } = this;
    let head = this.head;
    while (head < queue.length && Math.max(stamps[head]!, startedAt) < time) {
      keys.delete(queue[head]!);
      // Let the string go now rather than at the next compaction.
      queue[head++] = '';
    }
    if (head >= COMPACT_AFTER && head * 2 >= queue.length) {
      queue.splice(0, head);
      stamps.splice(0, head);
      head = 0;
    }
    this.head = head;
  }
}
