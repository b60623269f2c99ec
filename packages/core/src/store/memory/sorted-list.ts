/**
 * An array kept sorted by `compare`, for the memory store's listings. Items that compare equal are the
 * same item (every order ends on a unique key). The array is stored back to front: listings are newest
 * first, so a new item, the common case, is an append rather than a shift of the whole array.
 */
export class SortedList<T extends K, K = T> {
  /** Sorted by `compare` descending: the first item in order is the last element. */
  private readonly items: T[] = [];

  constructor(private readonly compare: (a: K, b: K) => number) {}

  get length(): number {
    return this.items.length;
  }

  insert(item: T): void {
    const first = this.items[this.items.length - 1];
    if (first === undefined || this.compare(item, first) < 0) this.items.push(item);
    else this.items.splice(this.indexAfter(item), 0, item);
  }

  /** Removes the item that compares equal to `item`; returns whether there was one. */
  remove(item: K): boolean {
    const index = this.indexAfter(item) - 1;
    const found = this.items[index];
    if (found === undefined || this.compare(found, item) !== 0) return false;
    this.items.splice(index, 1);
    return true;
  }

  /** Replaces `before` by `after`, moving it if its key changed. */
  replace(before: T, after: T): void {
    if (this.compare(before, after) === 0) {
      const index = this.indexAfter(before) - 1;
      const found = this.items[index];
      if (found !== undefined && this.compare(found, before) === 0) {
        this.items[index] = after;
        return;
      }
    } else {
      this.remove(before);
    }
    this.insert(after);
  }

  /** The items strictly after `position` (all of them when it is undefined), in order. */
  *after(position: K | undefined): Generator<T> {
    let index = this.items.length - 1;
    if (position !== undefined) {
      // Items strictly after `position` in order compare above it: they sit at the front of the
      // descending array, before the elements that compare <= it.
      index = this.indexAfter(position) - 1;
      if (index >= 0 && this.compare(this.items[index]!, position) === 0) index--;
    }
    for (; index >= 0; index--) yield this.items[index]!;
  }

  /** The number of elements that compare >= `item` in the descending array: where `item` goes after its equals. */
  private indexAfter(item: K): number {
    let low = 0;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(this.items[middle]!, item) >= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
