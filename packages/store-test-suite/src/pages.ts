/** Bounds a walk over a store that never returns a short page. */
const MAX_PAGES = 1000;

/**
 * Walks a keyset listing the way the service does: each page starts strictly after the last item of
 * the previous one, and a page shorter than `limit` is the last. Returns every page, the final one
 * included, so a comparison also checks where each page ends.
 */
export async function walkPages<Item, Position>(
  limit: number,
  fetch: (after: Position | undefined) => Promise<Item[]>,
  positionOf: (item: Item) => Position,
  start?: Position,
): Promise<Item[][]> {
  const pages: Item[][] = [];
  let after = start;
  for (let count = 0; count < MAX_PAGES; count++) {
    const page = await fetch(after);
    pages.push(page);
    const last = page[page.length - 1];
    if (last === undefined || page.length < limit) break;
    after = positionOf(last);
  }
  return pages;
}
