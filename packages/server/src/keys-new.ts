import { apiKeyHash, apiScopes, isApiKeyName, type ApiScope } from '@mailwarden/core';
import { newApiKey } from './keys.js';

/**
 * `mailwarden keys new`: a new key, printed once, and the configuration item to paste, with the key's
 * hash and never the key (docs/server.md, "API keys"). A `{ usage }` says what is wrong with the options.
 */
export function newKeyCommand(options: {
  scopes: string | undefined;
  name: string | undefined;
  projectId: string | undefined;
  admin: boolean;
}): string | { usage: string } {
  if (options.scopes === undefined) return { usage: `keys new needs --scopes: a comma-separated list of ${apiScopes.join(', ')}.` };
  const given = options.scopes.split(',').map((scope) => scope.trim());
  const unknown = given.find((scope) => !(apiScopes as readonly string[]).includes(scope));
  if (unknown !== undefined) return { usage: `--scopes: ${JSON.stringify(unknown)} is not a scope: ${apiScopes.join(', ')}.` };
  if (options.admin && options.projectId !== undefined) return { usage: 'Give --project or --admin, not both.' };
  const name = options.name ?? (options.admin ? 'admin' : 'app');
  if (!isApiKeyName(name)) return { usage: `--name ${JSON.stringify(name)}: a key name is 1-64 letters, digits, ".", "_" or "-".` };
  const key = newApiKey();
  const scopes = apiScopes.filter((scope: ApiScope) => given.includes(scope));
  const item = JSON.stringify({ name, hash: apiKeyHash(key), scopes });
  const where = options.admin
    ? 'to "adminApiKeys" (every project)'
    : options.projectId === undefined
      ? 'to "projects.<id>.apiKeys" of the project it is for'
      : `to "projects.${options.projectId}.apiKeys"`;
  return [
    `API key (shown once, store it now; the configuration holds only its hash):`,
    ``,
    `  ${key}`,
    ``,
    `Add this item ${where} in the configuration file, then reload (kill -HUP <pid>, or save the file):`,
    ``,
    `  ${item}`,
  ].join('\n');
}
