/** How many event times the clock takes its reading from: it reads the earliest of the latest 100. */
export const CLOCK_EVENTS = 100;

/**
 * The memory store's notion of now, for forgetting only. A store reads no clock of its own, so this one
 * is told the time by what it receives: the 100th latest event time seen, or a later `now` passed to
 * `purgeExpired`, whichever is later. It never goes back.
 *
 * The 100th latest rather than the latest, so that a few events dated far ahead (a sender's unit bug,
 * a test payload) cannot make every other message look expired at once; under real traffic the reading
 * trails the newest event by the time the last 100 events took to arrive. Until 100 times were seen it
 * reads `-Infinity`, and nothing expires.
 */
export class EventClock {
  /** The latest times seen, at most `CLOCK_EVENTS` of them: a min-heap, so the earliest is at 0. */
  private readonly latest: number[] = [];
  private reading = -Infinity;
  private firstReading = -Infinity;

  /** Epoch milliseconds, or `-Infinity` before the clock has started. */
  get now(): number {
    return this.reading;
  }

  /**
   * The first reading the clock gave once started (`-Infinity` until then). Anything stamped with the
   * clock before it started counts as stamped then, so it is not forgotten early.
   */
  get startedAt(): number {
    return this.firstReading;
  }

  /** An event's time. */
  observe(time: number): void {
    if (!Number.isFinite(time)) return;
    const heap = this.latest;
    if (heap.length < CLOCK_EVENTS) {
      heap.push(time);
      this.siftUp(heap.length - 1);
      if (heap.length === CLOCK_EVENTS) this.advanceTo(heap[0]!);
    } else if (time > heap[0]!) {
      heap[0] = time;
      this.siftDown(0);
      this.advanceTo(heap[0]!);
    }
  }

  /** A time given as now (`purgeExpired`); an earlier one than the reading changes nothing. */
  advanceTo(now: number): void {
    if (!(now > this.reading)) return;
    this.reading = now;
    if (this.firstReading === -Infinity) this.firstReading = now;
  }

  private siftUp(index: number): void {
    const heap = this.latest;
    const time = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >>> 1;
      if (heap[parent]! <= time) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = time;
  }

  private siftDown(index: number): void {
    const heap = this.latest;
    const time = heap[index]!;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= time) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = time;
  }
}
