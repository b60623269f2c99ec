import { useState } from 'preact/hooks';

/** Where a keyset-paged listing stands: the cursor of the page shown and those before it. */
export interface Pages {
  /** The cursor of the page shown; `undefined` for the first. */
  cursor: string | undefined;
  number: number;
  next(cursor: string): void;
  previous(): void;
}

/**
 * Cursor paging that starts over whenever `filters` change. Previous pages are revisited with the
 * cursors that opened them, so walking forward and back never skips or repeats a row the API keeps.
 */
export function usePages(filters: string): Pages {
  const [state, setState] = useState<{ filters: string; cursors: string[] }>({ filters, cursors: [] });
  const cursors = state.filters === filters ? state.cursors : [];
  return {
    cursor: cursors.at(-1),
    number: cursors.length + 1,
    next: (cursor) => setState({ filters, cursors: [...cursors, cursor] }),
    previous: () => setState({ filters, cursors: cursors.slice(0, -1) }),
  };
}

/** Previous / next buttons for a listing; `nextCursor` is the API's `next_cursor`. */
export function Pager({ pages, nextCursor, label }: { pages: Pages; nextCursor: string | null; label: string }) {
  if (pages.number === 1 && nextCursor === null) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" onClick={pages.previous} disabled={pages.number === 1}>
        Previous page
      </button>
      <span>Page {pages.number}</span>
      <button type="button" onClick={() => nextCursor !== null && pages.next(nextCursor)} disabled={nextCursor === null}>
        Next page
      </button>
    </nav>
  );
}
