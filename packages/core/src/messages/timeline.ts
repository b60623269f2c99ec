import type { BounceClass, DeliveryEventType, EventDetails, Provider, ProviderSuppression } from '../events/delivery-event.js';
import { digest128 } from './message.js';

/** One event of a message, as its timeline keeps it: what happened, when, and what the provider said. */
export interface TimelineEntry extends EventDetails {
  /**
   * `timelineEntryId(storedEventKey)`: 32 lower-case hex characters. Breaks ties between entries of the
   * same time, in byte order, the same in every store, and identifies the event within the timeline.
   */
  id: string;
  /** The provider's event key (`DeliveryEvent.eventKey`). */
  eventKey: string;
  type: DeliveryEventType;
  provider: Provider;
  /** Epoch milliseconds: when the provider says the event happened. */
  occurredAt: number;
  bounceClass?: BounceClass;
  providerSuppression?: ProviderSuppression;
}

/**
 * How many entries a message's timeline keeps: its first `first` and its latest `latest` events by
 * event time (see docs/decisions.md#message-timelines). An event between them is dropped. Which entries
 * are kept depends only on the set of events applied, never on their arrival order: each kept entry is
 * among the first or latest of every subset that holds it.
 */
export const TIMELINE_LIMITS = { first: 20, latest: 30 } as const;
export const TIMELINE_CAP = TIMELINE_LIMITS.first + TIMELINE_LIMITS.latest;

/** The tiebreak of a stored event key (`<provider>:<eventKey>`): fixed-size ASCII, ordered alike by every store. */
export function timelineEntryId(storedEventKey: string): string {
  return digest128(storedEventKey);
}

/** Timeline order: event time, then `id` (ASCII, so `<` is byte order). */
export function compareTimelineEntries(a: Pick<TimelineEntry, 'occurredAt' | 'id'>, b: Pick<TimelineEntry, 'occurredAt' | 'id'>): number {
  if (a.occurredAt !== b.occurredAt) return a.occurredAt - b.occurredAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Adds `entry` to a timeline in order (in place), unless an entry with its id and time is there, then
 * drops the one entry past the cap, the first after the `first` kept ones. Returns whether `entry` is
 * kept. Stores that keep timelines in their own language follow the same steps.
 */
export function insertTimelineEntry(timeline: TimelineEntry[], entry: TimelineEntry): boolean {
  let low = 0;
  let high = timeline.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareTimelineEntries(timeline[middle]!, entry) < 0) low = middle + 1;
    else high = middle;
  }
  if (low < timeline.length && compareTimelineEntries(timeline[low]!, entry) === 0) return false;
  timeline.splice(low, 0, entry);
  if (timeline.length <= TIMELINE_CAP) return true;
  timeline.splice(TIMELINE_LIMITS.first, 1);
  return low !== TIMELINE_LIMITS.first;
}
