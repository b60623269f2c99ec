import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { MailwardenError } from './errors.js';

const VERSION = 1;
// Bounds decoding work, above the longest cursor this codec makes: a tracking-ID position of 128 code
// points that JSON escapes as `\u00XX` (6 bytes each) is 1,083 characters, signed.
const MAX_CURSOR_LENGTH = 2048;
const CURSOR = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]{22})?$/;

/** The listing a cursor belongs to, with the filters of its query. A cursor only continues the same query. */
export interface CursorScope {
  listing: 'suppressions' | 'messages' | 'tracking-ids' | 'allowlist';
  projectId: string;
  filters: Record<string, string | undefined>;
}

export interface CursorCodec {
  encode(scope: CursorScope, position: unknown): string;
  /** The position in the cursor, or `invalid_cursor` for anything this codec did not make for this scope. */
  decode<T>(scope: CursorScope, cursor: string, position: z.ZodType<T>): T;
}

/**
 * Cursors are opaque base64url text: a version, a tag of the scope (listing, project, filters) and the
 * last position of the previous page. With a `secret` they also carry an HMAC, so they are
 * tamper-evident; without one a client could forge a position, which can only move its own walk.
 */
export function createCursorCodec(secret?: string | Uint8Array): CursorCodec {
  const mac = (body: string): string | undefined =>
    secret === undefined ? undefined : createHmac('sha256', secret).update(body).digest().subarray(0, 16).toString('base64url');

  return {
    encode(scope, position) {
      const body = Buffer.from(JSON.stringify([VERSION, scopeTag(scope), position])).toString('base64url');
      const tag = mac(body);
      return tag === undefined ? body : `${body}.${tag}`;
    },

    decode(scope, cursor, position) {
      const invalid = (why: string) =>
        new MailwardenError('invalid_cursor', `Invalid cursor: ${why}. Use the next_cursor of the previous page.`);
      if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !CURSOR.test(cursor)) {
        throw invalid('it is not a cursor');
      }
      const [body = '', tag] = cursor.split('.');
      const expected = mac(body);
      if (expected !== undefined) {
        // Compared as text: base64url decoding ignores trailing bits, so bytes would accept altered cursors.
        if (tag === undefined || !timingSafeEqual(Buffer.from(tag), Buffer.from(expected))) {
          throw invalid('its signature does not match');
        }
      } else if (tag !== undefined) {
        throw invalid('it is signed, but no cursor secret is configured');
      }
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        throw invalid('it is not a cursor');
      }
      const parsed = z.tuple([z.literal(VERSION), z.string(), position]).safeParse(decoded);
      if (!parsed.success) throw invalid('it is not a cursor of this version');
      if (parsed.data[1] !== scopeTag(scope)) throw invalid('it belongs to another listing, project or filter');
      return parsed.data[2];
    },
  };
}

function scopeTag(scope: CursorScope): string {
  const filters = Object.keys(scope.filters)
    .sort()
    .map((name) => [name, scope.filters[name] ?? null]);
  return createHash('sha256')
    .update(JSON.stringify([scope.listing, scope.projectId, filters]))
    .digest()
    .subarray(0, 9)
    .toString('base64url');
}
