import type { ApiError } from '../api.js';
import { navigate } from '../location.js';
import { Failure } from './states.js';

/**
 * Where a keyset-paged listing stands, read from the page's address: `page` (1 when absent) and
 * `cursor`, the API's cursor that opens that page. A reload or a shared link shows the same page.
 */
export interface Pages {
  /** The cursor of the page shown; `undefined` for the first. */
  cursor: string | undefined;
  number: number;
  /** The rows before this page: `(number - 1) × size`. */
  before: number;
  /** Where Previous goes: `undefined` on the first page, or when this tab never walked through it (a shared link). */
  previousHref: string | undefined;
  firstHref: string;
  nextHref(cursor: string): string;
  /** Goes to the next page, remembering the way back. */
  next(cursor: string): void;
}

// A keyset cursor opens the page after it and cannot be walked backwards, so the cursor of each page's
// predecessor is remembered as the tab walks forward: per tab (sessionStorage), so Previous still works
// after a reload, back and forward, or a message opened and closed. Cursors carry their listing and
// filters, so one map serves every listing.
const previousKey = 'mailwarden.dashboard:previous-pages';
const PREVIOUS_KEPT = 500;

function previousCursors(): Record<string, string> {
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(previousKey) ?? '{}');
    return typeof value === 'object' && value !== null ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function rememberPrevious(cursor: string, previous: string): void {
  const kept = Object.entries(previousCursors())
    .filter(([next]) => next !== cursor)
    .slice(-(PREVIOUS_KEPT - 1));
  try {
    sessionStorage.setItem(previousKey, JSON.stringify(Object.fromEntries([...kept, [cursor, previous]])));
  } catch {
    // Storage full or refused: Previous falls back to First page.
  }
}

/**
 * The paging of a listing at `url`, `size` rows a page. Its address keeps every other parameter (the
 * filters); changing a filter makes a new address without `page` and `cursor`, so paging starts over.
 */
export function usePages(url: URL, size: number): Pages {
  const number = Math.max(1, Number.parseInt(url.searchParams.get('page') ?? '1', 10) || 1);
  const cursor = number === 1 ? undefined : (url.searchParams.get('cursor') ?? undefined);
  const shown = cursor === undefined ? 1 : number;
  const at = (page: number, pageCursor: string | undefined): string => {
    const next = new URL(url);
    next.searchParams.delete('page');
    next.searchParams.delete('cursor');
    if (page > 1 && pageCursor !== undefined) {
      next.searchParams.set('page', String(page));
      next.searchParams.set('cursor', pageCursor);
    }
    return next.pathname + next.search;
  };
  const previous = cursor === undefined ? undefined : previousCursors()[cursor];
  return {
    cursor,
    number: shown,
    before: (shown - 1) * size,
    previousHref: shown === 1 ? undefined : shown === 2 ? at(1, undefined) : previous === undefined ? undefined : at(shown - 1, previous),
    firstHref: at(1, undefined),
    nextHref: (nextCursor) => at(shown + 1, nextCursor),
    next: (nextCursor) => {
      rememberPrevious(nextCursor, cursor ?? '');
      navigate(at(shown + 1, nextCursor));
    },
  };
}

/**
 * Previous / next buttons for a listing and where it stands ("51–100"); `nextCursor` is the API's
 * `next_cursor`, `shown` the rows of this page. First page appears from the third page on.
 */
export function Pager({ pages, nextCursor, shown, label }: { pages: Pages; nextCursor: string | null; shown: number; label: string }) {
  if (pages.number === 1 && nextCursor === null) return null;
  const { previousHref } = pages;
  const position = shown === 0 ? `none after ${pages.before}` : `${pages.before + 1}–${pages.before + shown}`;
  return (
    <nav class="pager" aria-label={label}>
      {pages.number > 2 ? (
        <button type="button" onClick={() => navigate(pages.firstHref)}>
          First page
        </button>
      ) : null}
      <button type="button" onClick={() => previousHref !== undefined && navigate(previousHref)} disabled={previousHref === undefined}>
        Previous page
      </button>
      <span class="position">
        <span class="visually-hidden">Showing </span>
        {position}
      </span>
      <button type="button" onClick={() => nextCursor !== null && pages.next(nextCursor)} disabled={nextCursor === null}>
        Next page
      </button>
    </nav>
  );
}

/**
 * A listing that failed to load. A cursor the API refuses (from an old link, or after the cursor secret
 * changed) cannot succeed on Retry, so the way out offered is the first page; nor can a filter it
 * refuses (a Stream box holding no stream name), which the user corrects instead.
 */
export function ListingFailure({ error, pages, reload, doing }: { error: ApiError; pages: Pages; reload(): void; doing: string }) {
  if (error.code === 'invalid_cursor')
    return <Failure error={error} retry={() => navigate(pages.firstHref)} retryLabel="First page" doing={doing} />;
  if (error.code === 'invalid_stream') return <Failure error={error} doing={doing} />;
  return <Failure error={error} retry={reload} doing={doing} />;
}
