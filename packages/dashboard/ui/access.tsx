import type { ApiScope } from '@mailwarden/core';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiKeyInfo } from './api.js';

/**
 * The signed-in key's name and scopes (docs/dashboard.md, "What a key may do"). A control the key may
 * not use is not rendered at all, so the page shows only what it can do; the API refuses it anyway.
 */
export const KeyContext = createContext<ApiKeyInfo>({ name: '', scopes: [] });

/** Every scope, in the API's order (core's `apiScopes`, which the bundle does not import: core is types only here). */
export const scopeNames: readonly ApiScope[] = ['check', 'read', 'write', 'admin'];

/** Whether the signed-in key has `scope`. */
export function useCan(scope: ApiScope): boolean {
  return useContext(KeyContext).scopes.includes(scope);
}

/** Said instead of a page's data when the key lacks `read` (a sending app's check-only key). */
export function CannotRead({ what }: { what: string }) {
  const key = useContext(KeyContext);
  return (
    <p class="note empty">
      The key <bdi class="literal">{key.name}</bdi> cannot read {what}: it has {scopesText(key.scopes)}, not <code>read</code>. Sign in with
      a key that has <code>read</code> to see them.
    </p>
  );
}

/** "the scope check", "the scopes check and write", "no scope". */
export function scopesText(scopes: readonly ApiScope[]): string {
  if (scopes.length === 0) return 'no scope';
  return `the ${scopes.length === 1 ? 'scope' : 'scopes'} ${scopes.join(', ')}`;
}
