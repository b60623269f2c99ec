import type { ChangeView } from '@mailwarden/core';
import { ApiError, type Api } from '../api.js';
import { useLoad } from './load.js';

/** Changes a page shows. */
export const CHANGES_PER_PAGE = 50;
/** With a filter, how far back a page looks for its changes (the API looks through 1 000 at least). */
const FILTERED_LOOK_BACK = 1000;
/** With a filter, the most looks a page takes back through the feed for its changes. */
const FILTERED_LOOKS = 10;
/** The largest cursor the API takes: asking after it answers nothing but the project's latest `seq`. */
const LAST_CURSOR = Number.MAX_SAFE_INTEGER;

/**
 * Which stretch of the feed a page shows (docs/dashboard.md, "Changes"): the newest changes before a
 * `seq` (`before`; the latest without one), or the oldest after one (`after`). Either way a page's
 * address shows the same changes however many arrive later.
 */
export type ChangePosition = { after: number } | { before: number | undefined };

/** A page of the feed: its changes newest first, and the stretch of `seq` it looked through. */
export interface ChangeStretch {
  /** Newest first. */
  items: ChangeView[];
  /** The stretch looked through is `from + 1` … `through`. */
  from: number;
  through: number;
  latest: number;
  /** Retention deleted the changes before this stretch: there is nothing older to show. */
  oldestKept: boolean;
}

/** Which changes a page shows: of these kinds, by these actors, about this address hash (all when empty). */
export interface ChangeFilters {
  kinds: readonly string[];
  actors: readonly string[];
  hash?: string | undefined;
  /** As `hash`, by the address (the message page knows its recipient, not its hash). */
  email?: string | undefined;
}

export function useChanges(api: Api, filters: ChangeFilters, position: ChangePosition) {
  const key = 'after' in position ? `after:${position.after}` : `before:${position.before ?? ''}`;
  const { kinds, actors, hash } = filters;
  return useLoad((signal) => loadChanges(api, filters, position, signal), [api, kinds.join(','), actors.join(','), hash, key]);
}

/** The newest changes about one address (by `hash`, or by `email` where the hash is not known), for its History. */
export function useAddressHistory(api: Api, about: { hash: string } | { email: string }) {
  const { hash, email } = { hash: undefined, email: undefined, ...about };
  return useLoad((signal) => loadChanges(api, { kinds: [], actors: [], hash, email }, { before: undefined }, signal), [api, hash, email]);
}

async function loadChanges(api: Api, filters: ChangeFilters, position: ChangePosition, signal: AbortSignal): Promise<ChangeStretch> {
  const { kinds, actors, hash, email } = filters;
  if ('after' in position) {
    const page = await api.changes({ after: position.after, limit: CHANGES_PER_PAGE, kinds, actors, hash, email }, signal);
    return { items: page.items.reverse(), from: position.after, through: page.next_after, latest: page.latest, oldestKept: false };
  }
  const latest = (await api.changes({ after: LAST_CURSOR, limit: 1 }, signal)).latest;
  const end = Math.min(position.before ?? latest + 1, latest + 1);
  // The API reads forward: read the stretch before `end` and keep its newest. Without a filter the
  // stretch is exactly a page; with one, it grows back a look at a time until a page is found.
  const filtered = kinds.length > 0 || actors.length > 0 || hash !== undefined || email !== undefined;
  let back = filtered ? FILTERED_LOOK_BACK : CHANGES_PER_PAGE;
  let items: ChangeView[] = [];
  let from = end - 1;
  let shortened = false;
  for (let looks = 0; from > 0 && items.length < CHANGES_PER_PAGE && looks < FILTERED_LOOKS; looks++) {
    const start = Math.max(0, from - back);
    try {
      const page = await api.changes({ after: start, limit: back, kinds, actors, hash, email }, signal);
      items = [...page.items.filter((change) => change.seq <= from), ...items];
      from = start;
      // Past the changes retention deleted there is nothing more to look for.
      if (!filtered || shortened) break;
    } catch (error) {
      // Retention deleted part of the stretch: look back less, down to what is kept.
      if (!(error instanceof ApiError && error.code === 'change_cursor_expired') || back <= 1) throw error;
      back = Math.floor(back / 2);
      shortened = true;
    }
  }
  const kept = items.slice(-CHANGES_PER_PAGE);
  // More found than a page shows: the older ones are the next page's, so this stretch ends at the oldest kept.
  if (items.length > kept.length) from = kept[0]!.seq - 1;
  return { items: kept.reverse(), from, through: end - 1, latest, oldestKept: shortened };
}
