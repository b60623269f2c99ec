/** Items per chunk at most; a fuller chunk is split in two. */
const CHUNK_SIZE = 512;

/**
 * Two numbers that order items as `compare` does wherever they differ (ties, and `NaN`, are left to
 * `compare`). Kept beside the items, so a search compares numbers in two arrays instead of reaching
 * into objects scattered over the heap.
 */
export type SortRanks<K> = (item: K) => readonly [number, number];

/**
 * A list kept sorted by `compare`, for the memory store's listings. Items that compare equal are the
 * same item (every order ends on a unique key).
 *
 * The items live in chunks of at most 512, each sorted, the chunks in order. An insert or a removal
 * anywhere moves at most one chunk's items, so a project of a million messages takes an event that is
 * older than the newest (a backfill, a late provider retry) as fast as a new one; one flat array
 * moved half its elements on every such insert.
 *
 * With `ranks`, each chunk also keeps its items' two numbers, and a search compares those first:
 * placing a message touched about fifteen items through `compare`, each a cache miss, which made
 * inserts most of the memory store's time on a webhook batch.
 */
export class SortedList<T extends K, K = T> {
  /** Non-empty chunks, each sorted ascending by `compare`, every chunk before the next. */
  private readonly chunks: T[][] = [];
  /** With `ranks`: each chunk's items' first and second numbers, index for index. */
  private readonly firsts: number[][] = [];
  private readonly seconds: number[][] = [];
  private size = 0;

  constructor(
    private readonly compare: (a: K, b: K) => number,
    private readonly ranks?: SortRanks<K>,
  ) {}

  get length(): number {
    return this.size;
  }

  insert(item: T): void {
    const [first, second] = this.ranks?.(item) ?? [NaN, NaN];
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.firsts.push([first]);
      this.seconds.push([second]);
    } else {
      // The memory store's lists are newest first, and a new item is most often the newest: one
      // comparison places it.
      const front = this.order(0, 0, item, first, second) > 0;
      const chunkIndex = front ? 0 : this.chunkOf(item, first, second);
      const at = front ? 0 : this.firstAbove(chunkIndex, item, first, second);
      this.chunks[chunkIndex]!.splice(at, 0, item);
      this.firsts[chunkIndex]!.splice(at, 0, first);
      this.seconds[chunkIndex]!.splice(at, 0, second);
      if (this.chunks[chunkIndex]!.length > CHUNK_SIZE) {
        this.chunks.splice(chunkIndex + 1, 0, this.chunks[chunkIndex]!.splice(CHUNK_SIZE / 2));
        this.firsts.splice(chunkIndex + 1, 0, this.firsts[chunkIndex]!.splice(CHUNK_SIZE / 2));
        this.seconds.splice(chunkIndex + 1, 0, this.seconds[chunkIndex]!.splice(CHUNK_SIZE / 2));
      }
    }
    this.size++;
  }

  /** Removes the item that compares equal to `item`; returns whether there was one. */
  remove(item: K): boolean {
    const found = this.find(item);
    if (found === undefined) return false;
    const { chunk, index } = found;
    this.chunks[chunk]!.splice(index, 1);
    this.firsts[chunk]!.splice(index, 1);
    this.seconds[chunk]!.splice(index, 1);
    if (this.chunks[chunk]!.length === 0) {
      this.chunks.splice(chunk, 1);
      this.firsts.splice(chunk, 1);
      this.seconds.splice(chunk, 1);
    }
    this.size--;
    return true;
  }

  /** Replaces `before` by `after`, moving it if its key changed. */
  replace(before: T, after: T): void {
    if (this.compare(before, after) === 0) {
      const found = this.find(before);
      if (found !== undefined) {
        this.chunks[found.chunk]![found.index] = after;
        return;
      }
    } else {
      this.remove(before);
    }
    this.insert(after);
  }

  /** The last item in order, or `undefined` when the list is empty. */
  last(): T | undefined {
    const chunk = this.chunks[this.chunks.length - 1];
    return chunk?.[chunk.length - 1];
  }

  /**
   * The items strictly after `position` (all of them when it is undefined), in order. A position is
   * found through `compare` alone: it may come from outside (a cursor), where ranks promise nothing.
   */
  *after(position: K | undefined): Generator<T> {
    let chunkIndex = position === undefined ? 0 : this.chunkOf(position, NaN, NaN);
    let index = position === undefined || chunkIndex >= this.chunks.length ? 0 : this.firstAbove(chunkIndex, position, NaN, NaN);
    for (; chunkIndex < this.chunks.length; chunkIndex++, index = 0) {
      const chunk = this.chunks[chunkIndex]!;
      for (; index < chunk.length; index++) yield chunk[index]!;
    }
  }

  /** Where the item equal to `item` is, if any. */
  private find(item: K): { chunk: number; index: number } | undefined {
    if (this.chunks.length === 0) return undefined;
    const [first, second] = this.ranks?.(item) ?? [NaN, NaN];
    const chunk = this.chunkOf(item, first, second);
    const index = this.firstAbove(chunk, item, first, second) - 1;
    return index >= 0 && this.order(chunk, index, item, first, second) === 0 ? { chunk, index } : undefined;
  }

  /**
   * How the item at (`chunk`, `index`) compares with `item`, whose ranks are `first` and `second`:
   * by the numbers where they differ, else by `compare`.
   */
  private order(chunk: number, index: number, item: K, first: number, second: number): number {
    const a = this.firsts[chunk]![index]!;
    if (a < first) return -1;
    if (a > first) return 1;
    const b = this.seconds[chunk]![index]!;
    if (a === first && b < second) return -1;
    if (a === first && b > second) return 1;
    return this.compare(this.chunks[chunk]![index]!, item);
  }

  /** The first chunk whose last item compares >= `item`, or the last chunk: where `item` belongs. */
  private chunkOf(item: K, first: number, second: number): number {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.order(middle, this.chunks[middle]!.length - 1, item, first, second) >= 0) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** The index of the first item of chunk `chunk` that compares above `item`. */
  private firstAbove(chunk: number, item: K, first: number, second: number): number {
    let low = 0;
    let high = this.chunks[chunk]!.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.order(chunk, middle, item, first, second) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
