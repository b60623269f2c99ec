import { createHash } from 'node:crypto';
import { apiScopes, routes, unsubscribeRoutes, type ApiKeyEntry, type ApiScope, type Route } from '@mailwarden/core';
import { apiKeyInfoSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { API_KEYS, type Projects, type TestApp } from './test-app.js';

// docs/http.md, "Scopes": `Route.scope` is the table; every API-key route with a key of each scope
// answers as it says, through the binding under test.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The key of the entry that has only `scope`. */
const onlyKey = (scope: ApiScope) => `k-only-${scope}`;
const HASHED_KEY = 'mw_hashed-read-write';

/** One key per scope, one without scopes (all four), one configured by its hash; all for acme only. */
function scopedKeys(projects: Projects): ApiKeyEntry[] {
  return [
    ...apiScopes.map((scope): ApiKeyEntry => ({ name: `only-${scope}`, key: onlyKey(scope), projects: [projects.acme], scopes: [scope] })),
    { name: 'unscoped', key: 'k-unscoped', projects: [projects.acme] },
    { name: 'hashed', hash: `sha256:${sha256(HASHED_KEY)}`, projects: [projects.acme], scopes: ['write', 'read'] },
  ];
}

const apiKeyRoutes: readonly Route[] = [...routes, ...unsubscribeRoutes].filter((route) => route.auth === 'api_key');

/** Path parameters that pass routing (what the route then answers does not matter here). */
const sampleParams: Readonly<Record<string, string>> = {
  hash: '0'.repeat(64),
  id: '0'.repeat(32),
  trackingId: 'scope-test',
  stream: 'scope-test',
  endpointId: 'scope-test',
  entry: '%40example.com',
};

/** The smallest request of a route: its path filled in, and `{}` as the body of one that takes a body. */
function minimalRequest(app: TestApp, route: Route, key: string): Promise<{ status: number; text: string; headers: Headers }> {
  const path = route.path.replace(/\{([^}]+)\}/g, (_match, name: string) =>
    name === 'projectId' ? app.projects.acme : (sampleParams[name] ?? 'x'),
  );
  return app.api(route.method, path, { key, ...(route.requestBody === undefined ? {} : { json: {} }) });
}

export function describeScopeTests(open: OpenApp): void {
  describe('scopes', () => {
    test('every API-key route with a key of each scope: 403 insufficient_scope exactly when the route needs another', async () => {
      const app = await open({ apiKeysOf: scopedKeys });
      for (const route of apiKeyRoutes) {
        for (const scope of apiScopes) {
          const answer = await minimalRequest(app, route, onlyKey(scope));
          const title = `${route.method} ${route.path} with a ${scope} key`;
          if (route.scope === undefined || route.scope === scope) {
            expect([401, 403], `${title}: ${answer.text}`).not.toContain(answer.status);
          } else {
            const error = expectError(answer, 403, 'insufficient_scope');
            expect(error.details, title).toEqual({ required: route.scope, scopes: [scope] });
            expect(error.message, title).toContain(`"${route.scope}"`);
          }
        }
      }
    });

    test('a key configured without scopes, and a map key, reach every API-key route as before', async () => {
      for (const [apiKeysOf, key] of [
        [scopedKeys, 'k-unscoped'],
        [undefined, API_KEYS.acme],
      ] as const) {
        const app = await open(apiKeysOf === undefined ? {} : { apiKeysOf });
        for (const route of apiKeyRoutes) {
          const answer = await minimalRequest(app, route, key);
          expect([401, 403], `${route.method} ${route.path}: ${answer.text}`).not.toContain(answer.status);
        }
      }
    });

    test('a hashed key authenticates with its scopes; its hash text is no key', async () => {
      const app = await open({ apiKeysOf: scopedKeys });
      const list = `/projects/${app.projects.acme}/suppressions`;
      expectSuccess(await app.api('GET', list, { key: HASHED_KEY }), 200);
      expectSuccess(await app.api('POST', list, { key: HASHED_KEY, json: { email: 'hashed@example.com' } }), 201);
      const error = expectError(
        await app.api('GET', `${list}/check?email=hashed%40example.com`, { key: HASHED_KEY }),
        403,
        'insufficient_scope',
      );
      expect(error.details).toEqual({ required: 'check', scopes: ['read', 'write'] });
      expectError(await app.api('GET', list, { key: `sha256:${sha256(HASHED_KEY)}` }), 401, 'invalid_api_key');
    });

    test('GET …/api-key answers the name and scopes of any key of the project, never the key or its hash', async () => {
      const app = await open({ apiKeysOf: scopedKeys });
      const path = `/projects/${app.projects.acme}/api-key`;
      for (const scope of apiScopes) {
        const answer = await app.api('GET', path, { key: onlyKey(scope) });
        expect(expectSuccess(answer, 200, apiKeyInfoSchema)).toEqual({ name: `only-${scope}`, scopes: [scope] });
        expect(answer.text).not.toContain(onlyKey(scope));
      }
      expect(expectSuccess(await app.api('GET', path, { key: 'k-unscoped' }), 200)).toEqual({ name: 'unscoped', scopes: apiScopes });
      const hashed = await app.api('GET', path, { key: HASHED_KEY });
      expect(expectSuccess(hashed, 200)).toEqual({ name: 'hashed', scopes: ['read', 'write'] });
      expect(hashed.text).not.toContain(sha256(HASHED_KEY));
      // Still a project's key: another project is forbidden, no key is missing_api_key.
      expectError(await app.api('GET', `/projects/${app.projects.globex}/api-key`, { key: 'k-unscoped' }), 403, 'forbidden');
      expectError(await app.api('GET', path, { key: null }), 401, 'missing_api_key');
    });

    test('GET …/api-key names a map key key- and 8 hex of its SHA-256, with every scope', async () => {
      const app = await open();
      const answer = await app.api('GET', `/projects/${app.projects.acme}/api-key`, { key: 'acme' });
      expect(expectSuccess(answer, 200)).toEqual({ name: `key-${sha256(API_KEYS.acme).slice(0, 8)}`, scopes: apiScopes });
    });

    test('the key is checked before the scope, and the scope before the body', async () => {
      const app = await open({ apiKeysOf: scopedKeys });
      const list = (projectId: string) => `/projects/${projectId}/suppressions`;
      const malformed = { headers: { 'content-type': 'application/json' }, body: '{"email":' };
      expectError(await app.api('POST', list(app.projects.globex), { key: onlyKey('read'), ...malformed }), 403, 'forbidden');
      expectError(await app.api('POST', list(app.projects.acme), { key: onlyKey('read'), ...malformed }), 403, 'insufficient_scope');
      expectError(await app.api('POST', list(app.projects.acme), { key: onlyKey('read'), body: 'plain text' }), 403, 'insufficient_scope');
      // HEAD reads as GET does: refused alike, without a body.
      const head = await app.api('HEAD', list(app.projects.acme), { key: onlyKey('check') });
      expect(head.status).toBe(403);
      expect(head.text).toBe('');
      // Nothing was written by the refused requests.
      expect(expectSuccess(await app.api('GET', list(app.projects.acme), { key: onlyKey('read') }), 200)).toMatchObject({ count: 0 });
    });
  });
}
