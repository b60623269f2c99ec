import { createHash, randomBytes } from 'node:crypto';
import { type ApiKeyGrant, apiKeyHash, apiScopes, type ApiScope, unnamedKeyName } from '@mailwarden/core';
import type { SyncedKey } from '@mailwarden/core/store';

// API keys as the service's configuration holds them (docs/server.md, "API keys"): a string (a key in
// clear, every scope), or `{ name, hash | key, scopes? }`. Everything here works on the hash, so a key
// given in clear and the same key given by its hash are the same key.

/** A configured key item, as the configuration's schema passes it. */
export type ConfiguredKeyItem =
  | string
  | { name: string; hash?: string | undefined; key?: string | undefined; scopes?: ApiScope[] | undefined };

/** A configured key, normalized: its name, the `sha256:<hex>` of the key, and its scopes (absent: all four). */
export interface ConfiguredKey {
  name: string;
  hash: string;
  scopes?: ApiScope[];
}

/** What a key opens, as the handler's key resolver returns it. */
export type KeyGrant = ApiKeyGrant & { projects: '*' | string[] };

const KEY_PREFIX = 'mw_';

/** A new API key: `mw_` and 256 random bits in base64url (43 characters). */
export function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A configured item, normalized. */
export function configuredKey(item: ConfiguredKeyItem): ConfiguredKey {
  if (typeof item === 'string') return { name: unnamedKeyName(item), hash: apiKeyHash(item) };
  const hash = item.hash ?? apiKeyHash(item.key ?? '');
  return { name: item.name, hash, ...(item.scopes === undefined ? {} : { scopes: sortedScopes(item.scopes) }) };
}

function sortedScopes(scopes: readonly ApiScope[]): ApiScope[] {
  return apiScopes.filter((scope) => scopes.includes(scope));
}

/**
 * Each key's grant by the hex digest of the key (`hash` without `sha256:`): what the handler's resolver
 * looks up. A key configured in several projects opens each (with one name and one set of scopes:
 * `keyProblems` refuses others); an admin key opens every project.
 */
export function keyGrants(
  projects: Readonly<Record<string, readonly ConfiguredKeyItem[]>>,
  admin: readonly ConfiguredKeyItem[],
): Map<string, KeyGrant> {
  const grants = new Map<string, KeyGrant>();
  const add = (item: ConfiguredKeyItem, projectId: string | '*') => {
    const { name, hash, scopes } = configuredKey(item);
    const digest = hash.slice('sha256:'.length);
    const known = grants.get(digest);
    const projectsOf = (): '*' | string[] => {
      if (projectId === '*' || known?.projects === '*') return '*';
      return [...(known?.projects ?? []), projectId];
    };
    grants.set(digest, { name, projects: projectsOf(), ...(scopes === undefined ? {} : { scopes }) });
  };
  for (const [projectId, items] of Object.entries(projects)) for (const item of items) add(item, projectId);
  for (const item of admin) add(item, '*');
  return grants;
}

/**
 * What is wrong with the keys of a configuration, each as a path and a message: a name twice in a
 * project (admin keys count in every project), or one key under two names or with two sets of scopes.
 */
export function keyProblems(
  projects: Readonly<Record<string, readonly ConfiguredKeyItem[]>>,
  admin: readonly ConfiguredKeyItem[],
): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const adminNames = new Map<string, string>();
  admin.forEach((item, i) => {
    const { name, hash } = configuredKey(item);
    if (adminNames.has(name) && adminNames.get(name) !== hash)
      problems.push({ path: ['adminApiKeys', i, 'name'], message: `the name ${name} is taken by another admin key` });
    adminNames.set(name, hash);
  });
  const byHash = new Map<string, { name: string; scopes: string }>();
  const sameKey = (key: ConfiguredKey, path: (string | number)[]) => {
    const scopes = (key.scopes ?? apiScopes).join(',');
    const known = byHash.get(key.hash);
    if (known !== undefined && (known.name !== key.name || known.scopes !== scopes))
      problems.push({
        path,
        message: `this key is configured elsewhere as ${known.name} (${known.scopes}): give it one name and one set of scopes`,
      });
    else byHash.set(key.hash, { name: key.name, scopes });
  };
  admin.forEach((item, i) => sameKey(configuredKey(item), ['adminApiKeys', i]));
  for (const [projectId, items] of Object.entries(projects)) {
    const names = new Map(adminNames);
    items.forEach((item, i) => {
      const key = configuredKey(item);
      const path = ['projects', projectId, 'apiKeys', i];
      if (names.has(key.name) && names.get(key.name) !== key.hash)
        problems.push({ path: [...path, 'name'], message: `the name ${key.name} is taken by another key of ${projectId} or an admin key` });
      names.set(key.name, key.hash);
      sameKey(key, path);
    });
  }
  return problems;
}

/**
 * The keys of a project as `Store.syncApiKeys` takes them, admin keys included, in name order:
 * `version` is the first 16 hex of the SHA-256 of the `sha256:` hash text, so it changes with the key.
 */
export function syncedKeys(items: readonly ConfiguredKeyItem[], admin: readonly ConfiguredKeyItem[]): SyncedKey[] {
  const keys = new Map<string, SyncedKey>();
  for (const item of [...items, ...admin]) {
    const { name, hash, scopes } = configuredKey(item);
    keys.set(name, { name, scopes: [...(scopes ?? apiScopes)], version: sha256Hex(hash).slice(0, 16) });
  }
  return [...keys.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
