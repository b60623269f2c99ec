import type { MailwardenContext } from './context.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId, parseInput } from '../input.js';
import {
  DEFAULT_CHANGE_PAGE_SIZE,
  MAX_CHANGE_PAGE_SIZE,
  changeCursorSchema,
  changePageLimitSchema,
  type ChangeList,
  type ChangeView,
} from '../api-schemas.js';
import type { ChangeQuery } from '../store/changes.js';
import { isEmailHash } from '../email/hash.js';
import { normalizeEmail } from '../email/normalize.js';
import { parseActorFilter } from './actor-option.js';
import { parseChangeKinds, toChangeView } from './change-view.js';
import { z } from 'zod';

export interface ListChangesQuery {
  /** The `seq` of the last change already read (a page's `next_after`); default 0, the start of the feed. */
  after?: number | string;
  /** Changes per page, 1 to 1 000; default 100. */
  limit?: number | string;
  /** Only these kinds: kinds or families (`suppression`, `message`, `alert`, `allowlist`, `stream`, `endpoint`, `address`, `key`), an array or comma-separated. */
  kinds?: string | readonly string[];
  /** Only changes by these actors: each an actor or a prefix of whole segments (`key`, `key:ops`, `webhook:ses`), an array or comma-separated. */
  actors?: string | readonly string[];
  /** Only changes about the address of this hash (64 hex): its suppressions, allowlist entry and erasures. Not with `email`. */
  hash?: string;
  /** Only changes about this address (hashed here, never sent to the store). Not with `hash`. */
  email?: string;
}

export interface FollowChangesOptions {
  /** Start after this `seq`; default 0, the start of the feed. */
  after?: number;
  /** Only these kinds, as `ListChangesQuery.kinds`. */
  kinds?: string | readonly string[];
  /** Only these actors, as `ListChangesQuery.actors`. */
  actors?: string | readonly string[];
  /** Only changes about this hash, as `ListChangesQuery.hash`. */
  hash?: string;
  /** Only changes about this address, as `ListChangesQuery.email`. */
  email?: string;
  /** How long to wait before asking again once caught up, in milliseconds; default 1 000. */
  pollMs?: number;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
}

/**
 * The project's change feed (docs/core.md, "Change feed"): every change the store made, in order, with
 * a cursor that survives restarts. Needs a store made with its `changes` option; otherwise every call
 * throws `change_feed_not_configured`.
 */
export interface ChangeService {
  /**
   * A page of changes after `after`, oldest first. Keep `next_after` and pass it as `after` next time;
   * `next_after === latest` means caught up. Throws `change_cursor_expired` when retention deleted
   * changes after `after` (start again from the listings), `invalid_request` for a bad query.
   *
   * @example
   * let after = 0;
   * const { items, next_after } = await mailwarden.changes.list('acme', { after, kinds: ['suppression'] });
   * for (const change of items) console.log(change.seq, change.kind);
   * after = next_after;
   */
  list(projectId: string, query?: ListChangesQuery): Promise<ChangeList>;
  /**
   * Every change after `after`, then each new one as it is made (asking every `pollMs` once caught
   * up), until `signal` aborts. `change_cursor_expired` and store errors are thrown to the loop.
   *
   * @example
   * const controller = new AbortController();
   * for await (const change of mailwarden.changes.follow('acme', { after: savedSeq, signal: controller.signal })) {
   *   await handle(change);
   *   savedSeq = change.seq;
   * }
   */
  follow(projectId: string, options?: FollowChangesOptions): AsyncIterable<ChangeView>;
}

const DEFAULT_POLL_MS = 1000;
/** Changes read per round trip while following: a reader behind catches up in large pages. */
const FOLLOW_PAGE_SIZE = MAX_CHANGE_PAGE_SIZE;

const changeQuerySchema = z.object({ after: changeCursorSchema, limit: changePageLimitSchema });

export function createChangeService(context: MailwardenContext): ChangeService {
  const { store } = context;
  const assertFeed = () => {
    if (store.changes === undefined)
      throw new MailwardenError('change_feed_not_configured', 'This store keeps no change feed: create it with its `changes` option.');
  };
  /** The store's filters of a query (kinds, actors, hash), only those named: an unfiltered read is the call it always was. */
  const filtersOf = (
    query: Pick<ListChangesQuery, 'kinds' | 'actors' | 'hash' | 'email'>,
  ): Pick<ChangeQuery, 'kinds' | 'actors' | 'hash'> => {
    const kinds = parseChangeKinds(query.kinds as string | readonly string[] | undefined);
    const actors = parseActorFilter(query.actors as string | readonly string[] | undefined);
    const hash = hashFilter(query, context.hashEmail);
    return {
      ...(kinds === undefined ? {} : { kinds }),
      ...(actors === undefined ? {} : { actors }),
      ...(hash === undefined ? {} : { hash }),
    };
  };

  return {
    async list(projectId, query = {}) {
      assertProjectId(projectId);
      assertFeed();
      const parsed = parseInput(changeQuerySchema, { after: query.after, limit: query.limit }, 'change query');
      const filters = filtersOf(query);
      const page = await store.listChanges(projectId, {
        after: parsed.after ?? 0,
        limit: parsed.limit ?? DEFAULT_CHANGE_PAGE_SIZE,
        ...filters,
      });
      return { items: page.changes.map((change) => toChangeView(projectId, change)), next_after: page.next, latest: page.last };
    },

    follow(projectId, options = {}) {
      // Checked now, not at the first step of the loop, so a mistake throws where it is made.
      assertProjectId(projectId);
      assertFeed();
      const { after } = parseInput(changeQuerySchema, { after: options.after }, 'follow options');
      const filters = filtersOf(options);
      const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
      if (!(typeof pollMs === 'number' && pollMs > 0 && Number.isFinite(pollMs)))
        throw new MailwardenError('invalid_request', 'Invalid pollMs: expected a number of milliseconds above 0.');
      const { signal } = options;
      const aborted = () => signal?.aborted === true;
      return (async function* () {
        let cursor = after ?? 0;
        while (!aborted()) {
          const page = await store.listChanges(projectId, {
            after: cursor,
            limit: FOLLOW_PAGE_SIZE,
            ...filters,
          });
          for (const change of page.changes) {
            if (aborted()) return;
            yield toChangeView(projectId, change);
          }
          cursor = page.next;
          if (cursor >= page.last) await pause(pollMs, signal);
        }
      })();
    },
  };
}

/** The hash a reader filters by: `hash` as given (64 hex, any case) or `email` hashed; `invalid_request` for both or a bad hash, `invalid_email` for a bad address. */
function hashFilter(query: { hash?: unknown; email?: unknown }, hashEmail: (email: string) => string): string | undefined {
  const { hash, email } = query;
  if (hash !== undefined && email !== undefined) throw new MailwardenError('invalid_request', 'Give hash or email, not both.');
  if (email !== undefined) return hashEmail(normalizeEmail(email as string));
  if (hash === undefined) return undefined;
  const key = typeof hash === 'string' ? hash.toLowerCase() : '';
  if (!isEmailHash(key))
    throw new MailwardenError('invalid_request', 'Invalid hash: expected 64 hexadecimal characters.', {
      details: [{ path: 'hash', message: 'expected 64 hexadecimal characters' }],
    });
  return key;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
