import { hash } from 'node:crypto';
import { MailwardenError } from '../errors.js';

/**
 * What a key may do in the projects it opens (docs/http.md, "Scopes"); each route needs one
 * (`Route.scope`): `check` what a sending app does at send time (checks, unsubscribe links), `read`
 * listings, messages, stats, the feed, `write` adds and removals (one, bulk, allowlist), `admin` what a
 * project's operator does (erasure, pausing and resuming). A key configured without scopes has all four.
 */
export const apiScopes = ['check', 'read', 'write', 'admin'] as const;
export type ApiScope = (typeof apiScopes)[number];

/** What one API key may reach: a list of project ids, or `'*'` for every project (an admin key). */
export type ApiKeyScope = readonly string[] | '*';

/**
 * The API keys: a map from key to the project (or projects) it opens, or an async resolver that
 * returns the scope of a key, or `undefined` for an unknown key.
 *
 * @example
 * apiKeys: { [process.env.ACME_API_KEY!]: 'acme', [process.env.ADMIN_API_KEY!]: '*' }
 * apiKeys: async (key) => (await db.apiKeys.find(sha256(key)))?.projects
 */
export type ApiKeys =
  | Readonly<Record<string, string | ApiKeyScope>>
  | ((key: string) => ApiKeyScope | string | undefined | Promise<ApiKeyScope | string | undefined>);

export type ApiKeyCheck = (key: string | undefined, projectId: string) => Promise<void>;

const digest = (key: string): string => hash('sha256', key, 'base64');

/**
 * Builds the `X-API-Key` check of docs/http.md#authentication: missing → `missing_api_key`, unknown → `invalid_api_key`,
 * valid for another project → `forbidden`.
 *
 * A configured map is looked up by the SHA-256 digest of the presented key, never by the key itself:
 * how long a lookup takes then depends on a digest the caller cannot steer, so timing tells nothing
 * about the configured keys.
 */
export function createApiKeyCheck(apiKeys: ApiKeys): ApiKeyCheck {
  const resolve = typeof apiKeys === 'function' ? apiKeys : mapResolver(apiKeys);
  return async (key, projectId) => {
    if (key === undefined || key === '') {
      throw new MailwardenError('missing_api_key', 'Send your API key in the X-API-Key header.');
    }
    const scope = await resolve(key);
    if (scope === undefined) throw new MailwardenError('invalid_api_key', 'The API key is not valid.');
    const allowed = scope === '*' || (typeof scope === 'string' ? scope === projectId : scope.includes(projectId));
    if (!allowed) throw new MailwardenError('forbidden', 'This API key is not valid for this project.');
  };
}

function mapResolver(apiKeys: Readonly<Record<string, string | ApiKeyScope>>): (key: string) => ApiKeyScope | string | undefined {
  const byDigest = new Map<string, string | ApiKeyScope>();
  for (const [key, scope] of Object.entries(apiKeys)) {
    if (key === '') throw new MailwardenError('invalid_request', 'An API key must not be empty.');
    byDigest.set(digest(key), scope);
  }
  return (key) => byDigest.get(digest(key));
}
