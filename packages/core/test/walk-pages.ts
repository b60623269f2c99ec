/** One page of any mailwarden listing. */
export interface ListedPage<T> {
  items: T[];
  next_cursor: string | null;
  count: number;
}

/**
 * Walks a listing to its end, following `next_cursor`, and returns every page. `between` runs after
 * each page that has a successor, given that page (to interleave writes with the walk).
 */
export async function walkPages<T>(
  list: (cursor: string | undefined) => Promise<ListedPage<T>>,
  between: (pageIndex: number, page: ListedPage<T>) => Promise<void> = async () => {},
): Promise<ListedPage<T>[]> {
  const pages: ListedPage<T>[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(cursor);
    pages.push(page);
    if (page.count !== page.items.length) throw new Error(`page ${pages.length}: count ${page.count} != ${page.items.length} items`);
    if (page.next_cursor === null) return pages;
    if (pages.length > 10_000) throw new Error('the walk does not end');
    await between(pages.length - 1, page);
    cursor = page.next_cursor;
  }
}

/** Every item of a listing, walking all its pages. */
export async function listAll<T>(list: (cursor: string | undefined) => Promise<ListedPage<T>>): Promise<T[]> {
  return (await walkPages(list)).flatMap((page) => page.items);
}
