import {
  packProvenance,
  provenanceWins,
  unpackProvenance,
  type SuppressionProvenance,
  type SuppressionSource,
} from '../suppressions/provenance.js';
import { reasonFromRank, reasonRank, strongerReason } from '../suppressions/reason.js';
import type { SuppressionPosition, SuppressionRecord } from '../store/store.js';
import { SortedList } from './sorted-list.js';

const HASH_BYTES = 32;
const HASH_WORDS = HASH_BYTES / 4;
// One row per slot: the hash (bytes 0–31), the time (a float64 at byte 32), the reason (byte 40) and
// the source of a provenance kept in the row (byte 41), so a lookup that finds its hash finds the rest
// on the same cache line or the next.
const ROW_BYTES = 48;
const ROW_WORDS = ROW_BYTES / 4;
const ROW_TIMES = ROW_BYTES / 8;
const TIME_AT = 32 / 8;
const REASON_AT = 40;
const SOURCE_AT = 41;
/** Byte 41: no provenance (0), the source of one kept in the row (1–4), or `PACKED`: see `provenances`. */
const SOURCES: readonly (SuppressionSource | undefined)[] = [undefined, 'api', 'webhook', 'import', 'unsubscribe'];
const PACKED = SOURCES.length;
const EMPTY = 0;
const DELETED = -1;
/** An expiring entry's `expiresAt`, by slot: kept apart, so an entry that never expires costs nothing more. */
interface ExpiryMark {
  slot: number;
  expiresAt: number;
}

/** Latest expiry first, then by slot: the next entry to expire is the list's last. */
const compareExpiry = (a: ExpiryMark, b: ExpiryMark): number => b.expiresAt - a.expiresAt || b.slot - a.slot;
const expiryRanks = (mark: ExpiryMark): readonly [number, number] => [-mark.expiresAt, -mark.slot];

/** Values of the lower-case hex digits by character code; 0x100 (more than a byte) for every other code. */
const NIBBLE = new Uint16Array(128).fill(0x100);
for (let i = 0; i < 10; i++) NIBBLE[0x30 + i] = i;
for (let i = 0; i < 6; i++) NIBBLE[0x61 + i] = 10 + i;

/**
 * One project's suppressions in memory, laid out for a million entries: a row of bytes per slot
 * (hash, time, reason) in one typed array instead of an object per entry, an open-addressed hash
 * index over the hash bytes, and a slot order sorted oldest first for keyset listing.
 *
 * A removed entry stays in the order (its key still sorts) until enough removals pile up to compact;
 * only then is its slot reused, so the order never points at a slot holding another entry.
 *
 * One table is one list (docs/storage.md, "Suppression lists"): the project-wide one, or a stream's, whose name
 * every record it gives back carries (`SuppressionRecord.stream`) without a byte per row.
 */
export class SuppressionTable {
  /** `stream`: the stream whose list this is; absent for the project-wide list. */
  constructor(private readonly stream?: string) {}

  private capacity = 0;
  /** Three views of the same rows. A row's reason is its `reasonRank`, or 0 for a free or removed slot. */
  private rowWords = new Uint32Array(0);
  private rowBytes = new Uint8Array(0);
  private rowTimes = new Float64Array(0);
  private emails: (string | undefined)[] = [];
  /**
   * Packed provenance per slot (`packProvenance`): one string, not an object, per entry; only for one
   * that the row cannot hold (a cause, or a time other than the entry's). The common one, an add's
   * (`api` or `import`, at the entry's time), is a byte of the row: a string each was a third of the
   * table's memory.
   */
  private provenances: (string | undefined)[] = [];
  /** `expiresAt` of the entries that have one, by slot, and the same marks in the order they expire. */
  private readonly expiries = new Map<number, ExpiryMark>();
  private readonly expiryOrder = new SortedList<ExpiryMark>(compareExpiry, expiryRanks);
  private slotsUsed = 0;
  private freeSlots: number[] = [];

  /** Slot + 1 per bucket; EMPTY or DELETED otherwise. Never more than half full. */
  private index = new Int32Array(16);
  private indexFilled = 0;

  /** Slots in (createdAt asc, hash desc) order: newest-first listing reads it backwards. */
  private order = new Int32Array(0);
  private orderLength = 0;
  private removedInOrder = 0;
  /**
   * Slots inserted out of order, not yet in `order`: sorted and merged in one pass when anything reads
   * the order or when they grow past a share of it. Entries usually arrive newest last and are appended;
   * an import of old entries in any order would otherwise shift the order once per entry.
   */
  private pending: number[] = [];

  private readonly probe = new Uint32Array(HASH_WORDS);
  private readonly probeBytes = Buffer.from(this.probe.buffer);

  size = 0;

  /** How many entries have an `expiresAt` (expired or not, until removed). */
  get expiring(): number {
    return this.expiries.size;
  }

  /** The entry of `hash`; with `now`, `undefined` when it is expired at `now`. */
  get(hash: string, now?: number): SuppressionRecord | undefined {
    const slot = this.find(hash);
    return slot < 0 || this.expired(slot, now) ? undefined : this.record(slot, hash);
  }

  /** Insert-if-absent; with `now`, an entry expired at `now` counts as absent and is replaced. */
  add(record: SuppressionRecord, now?: number): { record: SuppressionRecord; created: boolean } {
    const slot = this.find(record.hash);
    if (slot >= 0) {
      if (!this.expired(slot, now)) return { record: this.record(slot, record.hash), created: false };
      this.remove(record.hash);
    }
    this.insert(record);
    return { record, created: true };
  }

  /**
   * Insert, or merge into the existing entry: the stronger reason and the earlier time win, and the
   * provenance `provenanceWins` picks, with its `expiresAt` (docs/decisions.md, "Suppressions that
   * expire"). With `now`, an entry expired at `now` counts as absent: `record` replaces it whole.
   * Returns the entry before (`undefined` when it was created or replaced).
   */
  upsert(record: SuppressionRecord, now?: number): SuppressionRecord | undefined {
    let slot = this.find(record.hash);
    if (slot >= 0 && this.expired(slot, now)) {
      this.remove(record.hash);
      slot = -1;
    }
    if (slot < 0) {
      this.insert(record);
      return undefined;
    }
    const before = this.record(slot, record.hash);
    const reason = strongerReason(before.reason, record.reason);
    const winner = provenanceWins(record, before) ? record : before;
    const { provenance, expiresAt } = winner;
    if (record.createdAt < before.createdAt) {
      // The entry moves in the order: re-insert it under its new key.
      this.remove(record.hash);
      this.insert({
        hash: record.hash,
        email: before.email,
        reason,
        createdAt: record.createdAt,
        ...(provenance && { provenance }),
        ...(expiresAt !== undefined && { expiresAt }),
      });
    } else {
      this.rowBytes[slot * ROW_BYTES + REASON_AT] = reasonRank(reason);
      this.setProvenance(slot, provenance);
      this.setExpiry(slot, expiresAt);
    }
    return before;
  }

  /**
   * Replaces the provenance of the entry of `hash`, and its `expiresAt` when one is given: for the
   * soft-bounce rule's window that ends at the same bounce as the stored one (docs/decisions.md, "The soft-bounce rule").
   */
  replaceProvenance(hash: string, provenance: SuppressionProvenance, expiresAt: number | undefined): void {
    const slot = this.find(hash);
    if (slot < 0) return;
    this.setProvenance(slot, provenance);
    if (expiresAt !== undefined) this.setExpiry(slot, expiresAt);
  }

  /**
   * Removes up to `budget` entries expired at `now`, soonest first, and returns their hashes: the
   * expiry order finds them without reading the others. `removing` sees each entry before it goes.
   */
  removeExpired(now: number, budget: number, removing?: (record: SuppressionRecord) => void): string[] {
    const removed: string[] = [];
    for (
      let mark = this.expiryOrder.last();
      mark !== undefined && mark.expiresAt <= now && removed.length < budget;
      mark = this.expiryOrder.last()
    ) {
      const hash = this.hashHex(mark.slot);
      removing?.(this.record(mark.slot, hash));
      this.remove(hash);
      removed.push(hash);
    }
    return removed;
  }

  remove(hash: string): boolean {
    const bucket = this.findBucket(hash);
    if (bucket < 0) return false;
    const slot = this.index[bucket]! - 1;
    this.index[bucket] = DELETED;
    this.rowBytes[slot * ROW_BYTES + REASON_AT] = 0;
    this.rowBytes[slot * ROW_BYTES + SOURCE_AT] = 0;
    this.emails[slot] = undefined;
    this.provenances[slot] = undefined;
    this.setExpiry(slot, undefined);
    this.size--;
    this.removedInOrder++;
    if (this.removedInOrder > 1024 && this.removedInOrder * 4 > this.orderLength) this.compact();
    return true;
  }

  /**
   * Up to `limit` entries newest first, strictly after `after`, that `filter` accepts (all by default);
   * with `now`, none expired at `now`.
   */
  list(limit: number, after?: SuppressionPosition, filter?: (record: SuppressionRecord) => boolean, now?: number): SuppressionRecord[] {
    this.mergePending();
    let i = this.orderLength - 1;
    if (after !== undefined) {
      this.loadProbe(after.hash);
      i = this.lowerBound(after.createdAt) - 1;
    }
    const page: SuppressionRecord[] = [];
    for (; i >= 0 && page.length < limit; i--) {
      const slot = this.order[i]!;
      if (this.rowBytes[slot * ROW_BYTES + REASON_AT] === 0 || this.expired(slot, now)) continue;
      const record = this.record(slot, this.hashHex(slot));
      if (filter === undefined || filter(record)) page.push(record);
    }
    return page;
  }

  private record(slot: number, hash: string): SuppressionRecord {
    const record: SuppressionRecord = {
      hash,
      email: this.emails[slot]!,
      reason: reasonFromRank(this.rowBytes[slot * ROW_BYTES + REASON_AT]!),
      createdAt: this.rowTimes[slot * ROW_TIMES + TIME_AT]!,
    };
    // `provenances` is read only when the row says it holds one: an array of a million entries costs
    // a cache miss per read, and nearly every row keeps its provenance itself.
    const kept = this.rowBytes[slot * ROW_BYTES + SOURCE_AT]!;
    if (kept === PACKED) record.provenance = unpackProvenance(this.provenances[slot]!);
    else if (kept !== 0) record.provenance = { source: SOURCES[kept]!, at: record.createdAt };
    if (this.stream !== undefined) record.stream = this.stream;
    if (this.expiries.size !== 0) {
      const mark = this.expiries.get(slot);
      if (mark !== undefined) record.expiresAt = mark.expiresAt;
    }
    return record;
  }

  /** Whether the entry in `slot` is expired at `now` (never without `now`). */
  private expired(slot: number, now: number | undefined): boolean {
    if (now === undefined || this.expiries.size === 0) return false;
    const mark = this.expiries.get(slot);
    return mark !== undefined && mark.expiresAt <= now;
  }

  /** Sets or clears a slot's `expiresAt`. */
  private setExpiry(slot: number, expiresAt: number | undefined): void {
    const mark = this.expiries.get(slot);
    if (mark?.expiresAt === expiresAt) return;
    if (mark !== undefined) {
      this.expiryOrder.remove(mark);
      this.expiries.delete(slot);
    }
    if (expiresAt === undefined) return;
    const next = { slot, expiresAt };
    this.expiries.set(slot, next);
    this.expiryOrder.insert(next);
  }

  private insert(record: SuppressionRecord): void {
    const slot = this.allocateSlot();
    this.loadProbe(record.hash);
    this.rowWords.set(this.probe, slot * ROW_WORDS);
    this.rowTimes[slot * ROW_TIMES + TIME_AT] = record.createdAt;
    this.rowBytes[slot * ROW_BYTES + REASON_AT] = reasonRank(record.reason);
    this.emails[slot] = record.email;
    this.setProvenance(slot, record.provenance);
    this.setExpiry(slot, record.expiresAt);
    this.size++;
    this.indexInsert(slot);
    this.orderInsert(slot);
  }

  /** Keeps a slot's provenance in its row when it can (after its time is set), else packed. */
  private setProvenance(slot: number, provenance: SuppressionProvenance | undefined): void {
    // The row holds a source and nothing else: a rule or the allowlisted mark needs the packed string.
    const plain =
      provenance !== undefined &&
      provenance.event === undefined &&
      provenance.rule === undefined &&
      provenance.allowlisted !== true &&
      provenance.at === this.rowTimes[slot * ROW_TIMES + TIME_AT];
    const source = plain ? SOURCES.indexOf(provenance.source) : 0;
    const packed = source > 0 || provenance === undefined ? undefined : packProvenance(provenance);
    this.rowBytes[slot * ROW_BYTES + SOURCE_AT] = packed === undefined ? Math.max(source, 0) : PACKED;
    this.provenances[slot] = packed;
  }

  private allocateSlot(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    if (this.slotsUsed === this.capacity) this.grow();
    return this.slotsUsed++;
  }

  private grow(): void {
    const capacity = Math.max(64, this.capacity * 2);
    const rows = new ArrayBuffer(capacity * ROW_BYTES);
    const rowBytes = new Uint8Array(rows);
    rowBytes.set(this.rowBytes);
    const order = new Int32Array(capacity);
    order.set(this.order.subarray(0, this.orderLength));
    this.rowBytes = rowBytes;
    this.rowWords = new Uint32Array(rows);
    this.rowTimes = new Float64Array(rows);
    this.order = order;
    this.capacity = capacity;
  }

  // --- hash index -------------------------------------------------------------------------------

  private find(hash: string): number {
    const bucket = this.findBucket(hash);
    return bucket < 0 ? -1 : this.index[bucket]! - 1;
  }

  private findBucket(hash: string): number {
    this.loadProbe(hash);
    const mask = this.index.length - 1;
    for (let bucket = this.probe[0]! & mask; ; bucket = (bucket + 1) & mask) {
      const entry = this.index[bucket]!;
      if (entry === EMPTY) return -1;
      if (entry !== DELETED && this.probeEquals(entry - 1)) return bucket;
    }
  }

  private indexInsert(slot: number): void {
    if ((this.indexFilled + 1) * 2 > this.index.length) this.rehash();
    const mask = this.index.length - 1;
    let bucket = this.rowWords[slot * ROW_WORDS]! & mask;
    while (this.index[bucket]! > 0) bucket = (bucket + 1) & mask;
    if (this.index[bucket] === EMPTY) this.indexFilled++;
    this.index[bucket] = slot + 1;
  }

  private rehash(): void {
    let length = 16;
    while (length < (this.size + 1) * 2) length *= 2;
    const old = this.index;
    this.index = new Int32Array(length);
    this.indexFilled = 0;
    const mask = length - 1;
    for (const entry of old) {
      if (entry <= 0) continue;
      let bucket = this.rowWords[(entry - 1) * ROW_WORDS]! & mask;
      while (this.index[bucket] !== EMPTY) bucket = (bucket + 1) & mask;
      this.index[bucket] = entry;
      this.indexFilled++;
    }
  }

  // --- order ------------------------------------------------------------------------------------

  /** First position whose key is >= (createdAt, probe hash) in (createdAt asc, hash desc) order. */
  private lowerBound(createdAt: number): number {
    let low = 0;
    let high = this.orderLength;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compareToProbe(this.order[middle]!, createdAt) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private orderInsert(slot: number): void {
    const createdAt = this.rowTimes[slot * ROW_TIMES + TIME_AT]!;
    // The probe holds this slot's hash. New entries are usually the newest: append without searching.
    const position = this.orderLength;
    if (this.pending.length === 0 && (position === 0 || this.compareToProbe(this.order[position - 1]!, createdAt) < 0)) {
      this.order[position] = slot;
      this.orderLength++;
      return;
    }
    this.pending.push(slot);
    // Merged once they are a quarter of the order: each insert then costs O(4 + log n), amortized, and
    // the first listing after an import sorts at most a fifth of the entries. (A sixteenth made the
    // merges a tenth of the service's work in an import of a million old entries.)
    if (this.pending.length >= 1024 && this.pending.length * 4 > this.orderLength) this.mergePending();
  }

  /** Sorts the pending slots and merges them into the order, from the back, in place. */
  private mergePending(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    pending.sort((a, b) => this.compareSlots(a, b));
    let i = this.orderLength - 1;
    let j = pending.length - 1;
    for (let k = this.orderLength + pending.length - 1; j >= 0; k--) {
      if (i >= 0 && this.compareSlots(this.order[i]!, pending[j]!) > 0) this.order[k] = this.order[i--]!;
      else this.order[k] = pending[j--]!;
    }
    this.orderLength += pending.length;
  }

  /** Compares two slots' keys in (createdAt asc, hash desc) order. */
  private compareSlots(a: number, b: number): number {
    const timeA = this.rowTimes[a * ROW_TIMES + TIME_AT]!;
    const timeB = this.rowTimes[b * ROW_TIMES + TIME_AT]!;
    if (timeA !== timeB) return timeA < timeB ? -1 : 1;
    const baseA = a * ROW_BYTES;
    const baseB = b * ROW_BYTES;
    for (let i = 0; i < HASH_BYTES; i++) {
      const difference = this.rowBytes[baseA + i]! - this.rowBytes[baseB + i]!;
      if (difference !== 0) return -difference;
    }
    return 0;
  }

  /** Compares a slot's key with (createdAt, probe hash) in (createdAt asc, hash desc) order. */
  private compareToProbe(slot: number, createdAt: number): number {
    const time = this.rowTimes[slot * ROW_TIMES + TIME_AT]!;
    if (time !== createdAt) return time < createdAt ? -1 : 1;
    const base = slot * ROW_BYTES;
    for (let i = 0; i < HASH_BYTES; i++) {
      const difference = this.rowBytes[base + i]! - this.probeBytes[i]!;
      if (difference !== 0) return -difference;
    }
    return 0;
  }

  private compact(): void {
    this.mergePending();
    let kept = 0;
    for (let i = 0; i < this.orderLength; i++) {
      const slot = this.order[i]!;
      if (this.rowBytes[slot * ROW_BYTES + REASON_AT] !== 0) this.order[kept++] = slot;
      else this.freeSlots.push(slot);
    }
    this.orderLength = kept;
    this.removedInOrder = 0;
    this.rehash();
  }

  // --- hash bytes -------------------------------------------------------------------------------

  /**
   * Decodes 64 lower-case hex digits into the probe, in the byte order `Buffer#write(hash, 'hex')` uses.
   * Lower-case only, like every other store, where an upper-case hash would be another key. One pass
   * that checks and decodes: on every lookup, so it costs about what the native decode alone did, and
   * half of a regex check followed by it.
   */
  private loadProbe(hash: string): void {
    let invalid = typeof hash === 'string' ? hash.length ^ 64 : 1;
    for (let word = 0; word < HASH_WORDS && invalid === 0; word++) {
      let value = 0;
      for (let byte = 0; byte < 4; byte++) {
        const at = (word << 3) | (byte << 1);
        const high = hash.charCodeAt(at);
        const low = hash.charCodeAt(at + 1);
        const decoded = (NIBBLE[high & 0x7f]! << 4) | NIBBLE[low & 0x7f]!;
        // A code above 0x7f, or a character that is not a lower-case hex digit.
        invalid |= ((high | low) & ~0x7f) | (decoded & ~0xff);
        value |= (decoded & 0xff) << (byte << 3);
      }
      this.probe[word] = value;
    }
    if (invalid !== 0) throw new TypeError(`not a suppression hash: ${JSON.stringify(hash)}`);
  }

  private probeEquals(slot: number): boolean {
    const base = slot * ROW_WORDS;
    for (let i = 0; i < HASH_WORDS; i++) if (this.rowWords[base + i] !== this.probe[i]) return false;
    return true;
  }

  private hashHex(slot: number): string {
    return Buffer.from(this.rowBytes.buffer, slot * ROW_BYTES, HASH_BYTES).toString('hex');
  }
}
