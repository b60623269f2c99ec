/** Items per chunk at most; a fuller chunk is split in two. */
const CHUNK_SIZE = 512;

/**
 * A list kept sorted by `compare`, for the memory store's listings. Items that compare equal are the
 * same item (every order ends on a unique key).
 *
 * The items live in chunks of at most 512, each sorted, the chunks in order. An insert or a removal
 * anywhere moves at most one chunk's items, so a project of a million messages takes an event that is
 * older than the newest (a backfill, a late provider retry) as fast as a new one; one flat array
 * moved half its elements on every such insert.
 */
export class SortedList<T extends K, K = T> {
  /** Non-empty chunks, each sorted ascending by `compare`, every chunk before the next. */
  private readonly chunks: T[][] = [];
  private size = 0;

  constructor(private readonly compare: (a: K, b: K) => number) {}

  get length(): number {
    return this.size;
  }

  insert(item: T): void {
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
    } else {
      // The memory store's lists are newest first, and a new item is most often the newest: one
      // comparison places it.
      const first = this.compare(item, this.chunks[0]![0]!) < 0;
      const chunkIndex = first ? 0 : this.chunkOf(item);
      const chunk = this.chunks[chunkIndex]!;
      chunk.splice(first ? 0 : this.firstAbove(chunk, item), 0, item);
      if (chunk.length > CHUNK_SIZE) this.chunks.splice(chunkIndex + 1, 0, chunk.splice(CHUNK_SIZE / 2));
    }
    this.size++;
  }

  /** Removes the item that compares equal to `item`; returns whether there was one. */
  remove(item: K): boolean {
    const found = this.find(item);
    if (found === undefined) return false;
    const chunk = this.chunks[found.chunk]!;
    chunk.splice(found.index, 1);
    if (chunk.length === 0) this.chunks.splice(found.chunk, 1);
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

  /** The items strictly after `position` (all of them when it is undefined), in order. */
  *after(position: K | undefined): Generator<T> {
    let chunkIndex = position === undefined ? 0 : this.chunkOf(position);
    let index = position === undefined ? 0 : this.firstAbove(this.chunks[chunkIndex] ?? [], position);
    for (; chunkIndex < this.chunks.length; chunkIndex++, index = 0) {
      const chunk = this.chunks[chunkIndex]!;
      for (; index < chunk.length; index++) yield chunk[index]!;
    }
  }

  /** Where the item equal to `item` is, if any. */
  private find(item: K): { chunk: number; index: number } | undefined {
    if (this.chunks.length === 0) return undefined;
    const chunk = this.chunkOf(item);
    const index = this.firstAbove(this.chunks[chunk]!, item) - 1;
    const found = this.chunks[chunk]![index];
    return found !== undefined && this.compare(found, item) === 0 ? { chunk, index } : undefined;
  }

  /** The first chunk whose last item compares >= `item`, or the last chunk: where `item` belongs. */
  private chunkOf(item: K): number {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (this.compare(chunk[chunk.length - 1]!, item) >= 0) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** The index of the first item of `chunk` that compares above `item`. */
  private firstAbove(chunk: readonly T[], item: K): number {
    let low = 0;
    let high = chunk.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(chunk[middle]!, item) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
