import { hash } from 'node:crypto';
import { z } from 'zod';
import { MailwardenError } from '../errors.js';

/**
 * What a key may do in the projects it opens (docs/http.md, "Scopes"); each route needs one
 * (`Route.scope`): `check` what a sending app does at send time (checks, unsubscribe links), `read`
 * listings, messages, stats, the feed, `write` adds and removals (one, bulk, allowlist), `admin` what a
 * project's operator does (erasure, pausing and resuming). A key configured without scopes has all four.
 */
export const apiScopes = ['check', 'read', 'write', 'admin'] as const;
export type ApiScope = (typeof apiScopes)[number];

/** `GET /projects/{projectId}/api-key`: the presented key's name and scopes, never the key or its hash. */
export const apiKeyInfoSchema = z
  .object({
    name: z
      .string()
      .meta({ description: "The key's configured name; a key configured without one is `key-` and the first 8 hex of its SHA-256." }),
    scopes: z.array(z.enum(apiScopes)).meta({ description: 'What it may do, in the order `check`, `read`, `write`, `admin`.' }),
  })
  .meta({ id: 'ApiKeyInfo' });

/** What one API key may reach: a list of project ids, or `'*'` for every project (an admin key). */
export type ApiKeyScope = readonly string[] | '*';

/**
 * One configured key: its name (what the audit trail and `GET …/api-key` show), the key itself or its
 * SHA-256 (`sha256:` and 64 hex, so the configuration holds no usable key), the projects it opens, and
 * its scopes (all four when absent).
 */
export interface ApiKeyEntry {
  /** 1 to 64 of `A-Z a-z 0-9 . _ -`, unique among the keys. */
  name: string;
  /** The key as clients send it; exactly one of `key` and `hash`. */
  key?: string;
  /** `sha256:` and the lower-case hex SHA-256 of the key's UTF-8 bytes. */
  hash?: string;
  projects: ApiKeyScope;
  /** At least one; absent: all four (a key configured before scopes keeps its access). */
  scopes?: readonly ApiScope[];
}

/** What a resolver may answer for a known key: its name, projects and scopes (all four when absent). */
export interface ApiKeyGrant {
  name: string;
  projects: ApiKeyScope;
  scopes?: readonly ApiScope[];
}

/**
 * The API keys, in one of three forms (docs/http.md, "Authentication"):
 * - a map from key to the project (or projects, or `'*'`) it opens: every scope, named `key-` and the
 *   first 8 hex of the key's SHA-256;
 * - a list of `ApiKeyEntry`, each named, with its key or its hash, and its scopes;
 * - an async resolver returning an `ApiKeyGrant` (or, as the map does, the projects) of a key, or
 *   `undefined` for an unknown key.
 * A map or a list is checked when the handler is made: a bad one throws `invalid_request` at startup.
 *
 * @example
 * apiKeys: { [process.env.ACME_API_KEY!]: 'acme', [process.env.ADMIN_API_KEY!]: '*' }
 * apiKeys: [{ name: 'sending-app', hash: 'sha256:9f86d0…', projects: ['acme'], scopes: ['check'] }]
 * apiKeys: async (key) => (await db.apiKeys.find(sha256(key)))?.grant
 */
export type ApiKeys =
  | Readonly<Record<string, string | ApiKeyScope>>
  | readonly ApiKeyEntry[]
  | ((key: string) => ApiKeyResolution | Promise<ApiKeyResolution>);

type ApiKeyResolution = ApiKeyGrant | ApiKeyScope | string | undefined;

/** The key a request presented, once it opened the project: its name and what it may do. */
export interface PresentedKey {
  name: string;
  scopes: readonly ApiScope[];
}

export type ApiKeyCheck = (key: string | undefined, projectId: string) => Promise<PresentedKey>;

interface ResolvedKey {
  name: string;
  projects: ApiKeyScope | string;
  scopes: readonly ApiScope[];
}

const KEY_NAME = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_HASH = /^sha256:([0-9a-f]{64})$/;

const digest = (key: string): string => hash('sha256', key, 'hex');

/** Whether `name` may name a key: 1 to 64 of `A-Z a-z 0-9 . _ -`. */
export const isApiKeyName = (name: string): boolean => KEY_NAME.test(name);

/** How a configuration may hold a key instead of the key: `sha256:` and the lower-case hex SHA-256 of its UTF-8 bytes. */
export const apiKeyHash = (key: string): string => `sha256:${digest(key)}`;

/** Whether `text` has the shape of `apiKeyHash`'s answer. */
export const isApiKeyHash = (text: string): boolean => KEY_HASH.test(text);

/** The name of a key configured without one (a map's keys, a resolver's bare projects): `key-` and 8 hex of its SHA-256. */
export function unnamedKeyName(key: string): string {
  return `key-${digest(key).slice(0, 8)}`;
}

/**
 * Builds the `X-API-Key` check of docs/http.md#authentication: missing → `missing_api_key`, unknown → `invalid_api_key`,
 * valid for another project → `forbidden`; else the key's name and scopes, for the route's scope check.
 *
 * A configured map or list is looked up by the SHA-256 digest of the presented key, never by the key itself:
 * how long a lookup takes then depends on a digest the caller cannot steer, so timing tells nothing
 * about the configured keys. A hashed entry is that digest already.
 */
export function createApiKeyCheck(apiKeys: ApiKeys): ApiKeyCheck {
  const resolve = typeof apiKeys === 'function' ? resolverOf(apiKeys) : digestLookup(apiKeys);
  return async (key, projectId) => {
    if (key === undefined || key === '') {
      throw new MailwardenError('missing_api_key', 'Send your API key in the X-API-Key header.');
    }
    const resolved = await resolve(key);
    if (resolved === undefined) throw new MailwardenError('invalid_api_key', 'The API key is not valid.');
    const { projects } = resolved;
    const allowed = projects === '*' || (typeof projects === 'string' ? projects === projectId : projects.includes(projectId));
    if (!allowed) throw new MailwardenError('forbidden', 'This API key is not valid for this project.');
    return { name: resolved.name, scopes: resolved.scopes };
  };
}

/** Every key of a map or a list by its digest, checked whole first, so a bad configuration fails at startup. */
function digestLookup(
  apiKeys: Readonly<Record<string, string | ApiKeyScope>> | readonly ApiKeyEntry[],
): (key: string) => ResolvedKey | undefined {
  const byDigest = new Map<string, ResolvedKey>();
  if (Array.isArray(apiKeys)) {
    const names = new Set<string>();
    apiKeys.forEach((entry: ApiKeyEntry, index) => {
      const { name, keyDigest, resolved } = checkEntry(entry, `apiKeys[${index}]`);
      if (names.has(name)) throw badKeys(`apiKeys[${index}].name`, `the name "${name}" is given to two keys`);
      if (byDigest.has(keyDigest)) throw badKeys(`apiKeys[${index}]`, `the key of "${name}" is also the key of another entry`);
      names.add(name);
      byDigest.set(keyDigest, resolved);
    });
  } else {
    for (const [key, projects] of Object.entries(apiKeys as Readonly<Record<string, string | ApiKeyScope>>)) {
      if (key === '') throw new MailwardenError('invalid_request', 'An API key must not be empty.');
      const keyDigest = digest(key);
      byDigest.set(keyDigest, { name: `key-${keyDigest.slice(0, 8)}`, projects, scopes: apiScopes });
    }
  }
  return (key) => byDigest.get(digest(key));
}

function checkEntry(entry: ApiKeyEntry, path: string): { name: string; keyDigest: string; resolved: ResolvedKey } {
  if (typeof entry !== 'object' || entry === null) throw badKeys(path, 'each key is an object { name, key or hash, projects, scopes? }');
  const { name, key, hash: keyHash } = entry;
  if (typeof name !== 'string' || !KEY_NAME.test(name)) {
    throw badKeys(`${path}.name`, 'a name is 1 to 64 letters, digits, ".", "_" or "-"');
  }
  if ((key === undefined) === (keyHash === undefined)) throw badKeys(path, `"${name}" needs exactly one of "key" and "hash"`);
  let keyDigest: string;
  if (key !== undefined) {
    if (typeof key !== 'string' || key === '') throw badKeys(`${path}.key`, `the key of "${name}" must be a non-empty string`);
    keyDigest = digest(key);
  } else {
    const hex = typeof keyHash === 'string' ? KEY_HASH.exec(keyHash)?.[1] : undefined;
    if (hex === undefined) throw badKeys(`${path}.hash`, `the hash of "${name}" must be "sha256:" and 64 lower-case hex characters`);
    keyDigest = hex;
  }
  return {
    name,
    keyDigest,
    resolved: { name, projects: checkProjects(entry.projects, `${path}.projects`), scopes: checkScopes(entry.scopes, `${path}.scopes`) },
  };
}

function checkProjects(projects: unknown, path: string): ApiKeyScope {
  if (projects === '*') return projects;
  if (!Array.isArray(projects) || projects.length === 0 || !projects.every((project) => typeof project === 'string' && project !== '')) {
    throw badKeys(path, 'projects is "*" or a non-empty list of project ids');
  }
  return projects;
}

/** The scopes in `apiScopes` order, each once; absent: all four. */
function checkScopes(scopes: unknown, path: string): readonly ApiScope[] {
  if (scopes === undefined) return apiScopes;
  if (!Array.isArray(scopes) || scopes.length === 0)
    throw badKeys(path, `scopes is a non-empty list of ${apiScopes.join(', ')} (or absent: all four)`);
  const unknown = scopes.find((scope) => !(apiScopes as readonly unknown[]).includes(scope));
  if (unknown !== undefined) throw badKeys(path, `${JSON.stringify(unknown)} is not a scope: ${apiScopes.join(', ')}`);
  return apiScopes.filter((scope) => scopes.includes(scope));
}

function badKeys(path: string, message: string): MailwardenError {
  return new MailwardenError('invalid_request', `The API key configuration is not valid: ${path}: ${message}.`, {
    details: [{ path, message }],
  });
}

/** A resolver's answer as the check reads it: a grant is checked as an entry is (a bad one is a bug of the resolver: 500). */
function resolverOf(
  resolver: (key: string) => ApiKeyResolution | Promise<ApiKeyResolution>,
): (key: string) => Promise<ResolvedKey | undefined> {
  return async (key) => {
    const answer = await resolver(key);
    if (answer === undefined) return undefined;
    if (typeof answer === 'string' || Array.isArray(answer)) return { name: unnamedKeyName(key), projects: answer, scopes: apiScopes };
    const grant = answer as ApiKeyGrant;
    if (typeof grant.name !== 'string' || !KEY_NAME.test(grant.name)) {
      throw new TypeError('The apiKeys resolver returned a grant whose name is not 1 to 64 letters, digits, ".", "_" or "-".');
    }
    try {
      return { name: grant.name, projects: checkProjects(grant.projects, 'projects'), scopes: checkScopes(grant.scopes, 'scopes') };
    } catch (error) {
      throw new TypeError(`The apiKeys resolver returned a grant that is not valid: ${(error as Error).message}`);
    }
  };
}
