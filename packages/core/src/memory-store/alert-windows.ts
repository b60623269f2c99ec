import type { AlertChange, AlertWindow, StoredAlertRule } from '../store/changes.js';
import { Fact } from '../vocabulary.js';

/** A slot's flags: what its message counts for. */
const BOUNCED = 1;
const COMPLAINED = 2;

/** The flags a message's facts set. */
export function alertFlagsOf(facts: number): number {
  return ((facts & Fact.hard_bounced) !== 0 ? BOUNCED : 0) | ((facts & Fact.complained) !== 0 ? COMPLAINED : 0);
}

/** A crossing of one window: what `AlertChange` carries but its time and `seq`. */
export type AlertCrossing = Omit<AlertChange, 'seq' | 'at'>;

/**
 * One alert window (docs/decisions.md, "Deliverability alerts"): the last `size` messages of its scope
 * by arrival, as a ring of slots (message key and flags) with a map from key to slot, and its counts.
 * It holds keys, not messages: a message retention forgets stays in its window.
 */
class Window {
  private keys: (string | undefined)[];
  private flags: Uint8Array;
  private readonly slots = new Map<string, number>();
  /** The slot the next message enters: the oldest one's once the ring is full. */
  private next = 0;
  messages = 0;
  bounced = 0;
  complained = 0;
  bounceFiring = false;
  complaintFiring = false;

  constructor(
    readonly trackingId: string | null,
    size: number,
  ) {
    this.keys = new Array<string | undefined>(size);
    this.flags = new Uint8Array(size);
  }

  /** A message the store had not seen enters, pushing the oldest out when the ring is full. */
  enter(key: string, flags: number, size: number): void {
    if (size !== this.keys.length) this.resize(size);
    // Already held: a message retention forgot came back (its key is in the window still).
    if (this.slots.has(key)) {
      this.mark(key, flags);
      return;
    }
    const slot = this.next;
    const old = this.keys[slot];
    if (old !== undefined) {
      this.slots.delete(old);
      this.count(this.flags[slot]!, -1);
    } else {
      this.messages++;
    }
    this.keys[slot] = key;
    this.flags[slot] = flags;
    this.slots.set(key, slot);
    this.count(flags, 1);
    this.next = (slot + 1) % this.keys.length;
  }

  /** A held message gained facts: each counts once. Returns whether a count moved. */
  mark(key: string, flags: number): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    const gained = flags & ~this.flags[slot]!;
    if (gained === 0) return false;
    this.flags[slot] = this.flags[slot]! | gained;
    this.count(gained, 1);
    return true;
  }

  /** Compares the counts with the rule and flips what crossed: bounce before complaint. */
  cross(rule: StoredAlertRule, crossings: AlertCrossing[]): void {
    const bounce = this.flip(this.bounceFiring, this.bounced, rule.bounce, rule.minMessages);
    if (bounce !== undefined) {
      this.bounceFiring = !this.bounceFiring;
      crossings.push(this.crossing('alert.bounce_rate', this.bounceFiring, this.bounced, bounce));
    }
    const complaint = this.flip(this.complaintFiring, this.complained, rule.complaint, rule.minMessages);
    if (complaint !== undefined) {
      this.complaintFiring = !this.complaintFiring;
      crossings.push(this.crossing('alert.complaint_rate', this.complaintFiring, this.complained, complaint));
    }
  }

  view(): AlertWindow {
    return {
      trackingId: this.trackingId,
      messages: this.messages,
      bounced: this.bounced,
      complained: this.complained,
      bounceFiring: this.bounceFiring,
      complaintFiring: this.complaintFiring,
    };
  }

  /** The threshold crossed (ppm), or `undefined`: integers only, as every store compares. */
  private flip(
    firing: boolean,
    count: number,
    threshold: { firePpm: number; resolvePpm: number },
    minMessages: number,
  ): number | undefined {
    if (!firing) {
      const up = this.messages >= minMessages && count * 1e6 >= threshold.firePpm * this.messages;
      return up ? threshold.firePpm : undefined;
    }
    return count * 1e6 < threshold.resolvePpm * this.messages ? threshold.resolvePpm : undefined;
  }

  private crossing(kind: AlertCrossing['kind'], firing: boolean, count: number, thresholdPpm: number): AlertCrossing {
    return { kind, trackingId: this.trackingId, firing, messages: this.messages, count, thresholdPpm };
  }

  private count(flags: number, delta: number): void {
    if ((flags & BOUNCED) !== 0) this.bounced += delta;
    if ((flags & COMPLAINED) !== 0) this.complained += delta;
  }

  /** The rule's `window` changed: keeps the latest messages that fit, oldest first, and their counts. */
  private resize(size: number): void {
    const held: [string, number][] = [];
    for (let i = 0; i < this.keys.length; i++) {
      const slot = (this.next + i) % this.keys.length;
      const key = this.keys[slot];
      if (key !== undefined) held.push([key, this.flags[slot]!]);
    }
    this.keys = new Array<string | undefined>(size);
    this.flags = new Uint8Array(size);
    this.slots.clear();
    this.next = 0;
    this.messages = 0;
    this.bounced = 0;
    this.complained = 0;
    for (const [key, flags] of held.slice(-size)) this.enter(key, flags, size);
  }
}

/** One project's alert windows, by scope (`null`: the project's; else a tracking ID's), made when first moved. */
export class AlertWindows {
  private readonly windows = new Map<string | null, Window>();

  /**
   * Moves the windows for one applied event's message (`before`: its facts and tracking ID before the
   * event, `undefined` when the event created it) and returns the crossings, the project's first.
   */
  move(
    key: string,
    before: { facts: number; trackingId: string | null } | undefined,
    after: { facts: number; trackingId: string | null },
    rule: StoredAlertRule,
  ): AlertCrossing[] {
    const flags = alertFlagsOf(after.facts);
    const moved: Window[] = [];
    if (before === undefined) {
      this.enter(null, key, flags, rule, moved);
      if (rule.trackingIds && after.trackingId !== null) this.enter(after.trackingId, key, flags, rule, moved);
    } else if ((flags & ~alertFlagsOf(before.facts)) !== 0) {
      this.mark(null, key, flags, moved);
      if (rule.trackingIds) {
        // A message counts in the windows it entered: its tracking ID's then, or (joined later) now.
        if (before.trackingId !== null) this.mark(before.trackingId, key, flags, moved);
        if (after.trackingId !== null && after.trackingId !== before.trackingId) this.mark(after.trackingId, key, flags, moved);
      }
    }
    const crossings: AlertCrossing[] = [];
    for (const window of moved) window.cross(rule, crossings);
    return crossings;
  }

  get(trackingId: string | null): AlertWindow | undefined {
    return this.windows.get(trackingId)?.view();
  }

  private enter(scope: string | null, key: string, flags: number, rule: StoredAlertRule, moved: Window[]): void {
    let window = this.windows.get(scope);
    if (window === undefined) {
      window = new Window(scope, rule.window);
      this.windows.set(scope, window);
    }
    window.enter(key, flags, rule.window);
    moved.push(window);
  }

  private mark(scope: string | null, key: string, flags: number, moved: Window[]): void {
    const window = this.windows.get(scope);
    if (window?.mark(key, flags)) moved.push(window);
  }
}
