import type { z } from 'zod';
import type { CursorCodec, CursorScope } from './cursor.js';
import { DEFAULT_PAGE_SIZE } from './api-schemas.js';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  count: number;
}

export interface PageRequest<Row, Position> {
  scope: CursorScope;
  limit: number | undefined;
  cursor: string | undefined;
  position: z.ZodType<Position>;
  positionOf: (row: Row) => Position;
  /** Fetches up to `limit` rows strictly after `after`. */
  fetch: (limit: number, after: Position | undefined) => Promise<Row[]>;
}

/**
 * Keyset pagination shared by every listing: decode the cursor, fetch one row more than the page to
 * learn whether another page exists, and encode the last row's position as the next cursor.
 */
export async function paginate<Row, Position>(
  codec: CursorCodec,
  request: PageRequest<Row, Position>,
): Promise<{ rows: Row[]; next_cursor: string | null }> {
  const limit = request.limit ?? DEFAULT_PAGE_SIZE;
  const after = request.cursor === undefined ? undefined : codec.decode(request.scope, request.cursor, request.position);
  const rows = await request.fetch(limit + 1, after);
  if (rows.length <= limit) return { rows, next_cursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, next_cursor: codec.encode(request.scope, request.positionOf(page[page.length - 1]!)) };
}

/**
 * The filters that are set, as a cursor scope holds them (numbers as decimal text). A filter added to a
 * listing after its cursors were first issued joins the scope only when set, so those cursors stay valid.
 */
export function definedFilters(filters: Record<string, string | number | undefined>): Record<string, string> {
  const defined: Record<string, string> = {};
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) defined[name] = String(value);
  return defined;
}
