import { z } from 'zod';
import type { MailwardenContext } from './context.js';
import { tryNormalizeEmail } from '../email/normalize.js';
import { MailwardenError } from '../errors.js';
import { assertProjectId, parseInput } from '../input.js';
import { paginate } from '../pagination.js';
import { formatTimestamp } from '../timestamp.js';
import { listAllowlistQuerySchema, type AllowlistItem, type AllowlistPage, type ListAllowlistQuery } from '../api-schemas.js';
import type { AllowlistEntry } from '../store/store.js';
import { actorOf, type ActorOption } from './actor-option.js';

/**
 * A project's allowlist: exact addresses and whole domains (`@example.com`, no subdomains) that
 * automatic rules never suppress. Events for them are still recorded; a bounce or a complaint, or the
 * soft-bounce rule, writes no suppression, while an unsubscribe (the recipient asked), an add and an
 * import still do, the latter two marked `allowlisted` (docs/core.md, "Allowlist").
 */
export interface AllowlistService {
  /**
   * A page of the allowlist, by entry in code-point order.
   *
   * @example
   * const { items, next_cursor } = await mailwarden.allowlist.list('acme', { limit: 100 });
   */
  list(projectId: string, query?: ListAllowlistQuery): Promise<AllowlistPage>;
  /**
   * Adds an address (normalized as suppressions are) or `@domain`; `created` is false when it was
   * there (the stored entry is answered). Throws `invalid_email` for anything else.
   *
   * @example
   * await mailwarden.allowlist.add('acme', 'seed-inbox@example.com');
   * await mailwarden.allowlist.add('acme', '@our-company.example');
   */
  add(projectId: string, entry: string, options?: ActorOption): Promise<{ entry: AllowlistItem; created: boolean }>;
  /**
   * Removes an entry, named as it was added (normalized the same way), or throws
   * `allowlist_entry_not_found`.
   *
   * @example
   * await mailwarden.allowlist.remove('acme', '@our-company.example');
   */
  remove(projectId: string, entry: string, options?: ActorOption): Promise<{ deleted: true; entry: string }>;
}

const position = z.object({ e: z.string() });

/** What an entry as given means: its store key and its shown form; `invalid_email` when it is neither an address nor `@domain`. */
export function allowlistEntryOf(text: string, hashEmail: (email: string) => string): { key: string; entry: string } {
  if (typeof text === 'string' && text.trim().startsWith('@')) {
    // A domain is normalized as an address's domain is: the same IDNA and case rules, so it matches.
    const normalized = tryNormalizeEmail(`x${text.trim()}`);
    if (!normalized.ok || normalized.email.indexOf('@') !== 1) {
      throw new MailwardenError('invalid_email', `Invalid allowlist entry: "@" must be followed by a domain (${reasonOf(normalized)}).`);
    }
    const entry = normalized.email.slice(1);
    return { key: entry, entry };
  }
  const normalized = tryNormalizeEmail(text);
  if (!normalized.ok) {
    throw new MailwardenError('invalid_email', `Invalid allowlist entry: expected an address or @domain (${normalized.reason}).`);
  }
  return { key: hashEmail(normalized.email), entry: normalized.email };
}

function reasonOf(result: ReturnType<typeof tryNormalizeEmail>): string {
  return result.ok ? 'more than one "@"' : result.reason;
}

export function toAllowlistItem(entry: AllowlistEntry): AllowlistItem {
  return {
    entry: entry.entry,
    kind: entry.entry.startsWith('@') ? 'domain' : 'address',
    created_at: formatTimestamp(entry.createdAt),
  };
}

export function createAllowlistService(context: MailwardenContext): AllowlistService {
  const { store, hashEmail, cursors } = context;
  return {
    async list(projectId, query = {}) {
      assertProjectId(projectId);
      const { limit, cursor } = parseInput(listAllowlistQuerySchema, query, 'allowlist query');
      const page = await paginate(cursors, {
        scope: { listing: 'allowlist', projectId, filters: {} },
        limit,
        cursor,
        position,
        fetch: (size, after) => store.listAllowlist(projectId, after === undefined ? { limit: size } : { limit: size, after: after.e }),
        positionOf: (row) => ({ e: row.entry }),
      });
      const items = page.rows.map(toAllowlistItem);
      return { items, next_cursor: page.next_cursor, count: items.length };
    },

    async add(projectId, text, options) {
      assertProjectId(projectId);
      const actor = actorOf(options);
      const { key, entry } = allowlistEntryOf(text, hashEmail);
      const added = await store.addAllowlistEntry(projectId, { key, entry, createdAt: Math.trunc(context.now()) }, actor);
      return { entry: toAllowlistItem(added.entry), created: added.created };
    },

    async remove(projectId, text, options) {
      assertProjectId(projectId);
      const actor = actorOf(options);
      const { key, entry } = allowlistEntryOf(text, hashEmail);
      const removed = await store.removeAllowlistEntry(projectId, key, Math.trunc(context.now()), actor);
      if (removed === undefined) {
        throw new MailwardenError('allowlist_entry_not_found', 'No allowlist entry of this project is this address or domain.', {
          details: { entry },
        });
      }
      return { deleted: true, entry: removed.entry };
    },
  };
}
