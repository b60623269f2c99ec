/**
 * An array kept sorted by `compare`, for the memory store's listings. Items that compare equal are the
 * same item (every order ends on a unique key). Inserting at the end, the common case for new items, is
 * cheap; elsewhere it shifts the tail.
 */
export class SortedList<T extends K, K = T> {
  private readonly items: T[] = [];

  constructor(private readonly compare: (a: K, b: K) => number) {}

  get length(): number {
    return this.items.length;
  }

  insert(item: T): void {
    const last = this.items[this.items.length - 1];
    if (last === undefined || this.compare(last, item) < 0) this.items.push(item);
    else this.items.splice(this.lowerBound(item), 0, item);
  }

  /** Removes the item that compares equal to `item`; returns whether there was one. */
  remove(item: T): boolean {
    const position = this.lowerBound(item);
    const found = this.items[position];
    if (found === undefined || this.compare(found, item) !== 0) return false;
    this.items.splice(position, 1);
    return true;
  }

  /** Replaces `before` by `after`, moving it if its key changed. */
  replace(before: T, after: T): void {
    if (this.compare(before, after) === 0) {
      const position = this.lowerBound(before);
      if (this.items[position] !== undefined && this.compare(this.items[position], before) === 0) {
        this.items[position] = after;
        return;
      }
    } else {
      this.remove(before);
    }
    this.insert(after);
  }

  /** The items strictly after `position` (all of them when it is undefined), in order. */
  *after(position: K | undefined): Generator<T> {
    let i = 0;
    if (position !== undefined) {
      i = this.lowerBound(position);
      if (i < this.items.length && this.compare(this.items[i]!, position) === 0) i++;
    }
    for (; i < this.items.length; i++) yield this.items[i]!;
  }

  /** First index whose item is >= `item`. */
  private lowerBound(item: K): number {
    let low = 0;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(this.items[middle]!, item) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
