import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiKeyScope } from '@mailwarden/core';
import { listSuppressionsResponseSchema, suppressionSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import type { ApiCall, TestApp } from './test-app.js';

/** One request of every API endpoint of `projectId`, each valid but for its key. */
function everyEndpoint(projectId: string): { method: string; path: string; call?: ApiCall }[] {
  const hash = '0'.repeat(64);
  return [
    { method: 'GET', path: `/projects/${projectId}/suppressions` },
    { method: 'POST', path: `/projects/${projectId}/suppressions`, call: { json: { email: 'ana@example.com' } } },
    { method: 'GET', path: `/projects/${projectId}/suppressions/check?email=ana%40example.com` },
    { method: 'POST', path: `/projects/${projectId}/suppressions/check`, call: { json: { emails: ['ana@example.com'] } } },
    { method: 'DELETE', path: `/projects/${projectId}/suppressions/${hash}` },
    { method: 'GET', path: `/projects/${projectId}/messages` },
    { method: 'GET', path: `/projects/${projectId}/tracking-ids` },
    { method: 'GET', path: `/projects/${projectId}/allowlist` },
    { method: 'POST', path: `/projects/${projectId}/allowlist`, call: { json: { entry: '@example.com' } } },
    { method: 'DELETE', path: `/projects/${projectId}/allowlist/%40example.com` },
    { method: 'HEAD', path: `/projects/${projectId}/suppressions` },
  ];
}

async function expectEveryEndpoint(
  app: TestApp,
  projectId: string,
  key: ApiCall['key'],
  status: number,
  code: 'missing_api_key' | 'invalid_api_key' | 'forbidden',
) {
  for (const { method, path, call } of everyEndpoint(projectId)) {
    const answer = await app.api(method, path, { ...call, key });
    if (method === 'HEAD') {
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.text).toBe('');
    } else {
      expectError(answer, status, code);
    }
  }
}

const listPath = (projectId: string) => `/projects/${projectId}/suppressions`;

export function describeAuthTests(open: OpenApp): void {
  describe('X-API-Key', () => {
    test('a request without a key, or with an empty one, is 401 missing_api_key on every endpoint', async () => {
      const app = await open();
      await expectEveryEndpoint(app, app.projects.acme, null, 401, 'missing_api_key');
      await expectEveryEndpoint(app, app.projects.acme, '', 401, 'missing_api_key');
    });

    test('an unknown key is 401 invalid_api_key on every endpoint', async () => {
      const app = await open();
      await expectEveryEndpoint(app, app.projects.acme, 'not-a-key', 401, 'invalid_api_key');
      // Keys are compared exactly: no trimming, no case folding.
      await expectEveryEndpoint(app, app.projects.acme, 'KEY-ACME', 401, 'invalid_api_key');
    });

    test("a project's key on another project is 403 forbidden on every endpoint, and changes nothing there", async () => {
      const app = await open();
      await expectEveryEndpoint(app, app.projects.globex, 'acme', 403, 'forbidden');
      const page = expectSuccess(
        await app.api('GET', listPath(app.projects.globex), { key: 'globex' }),
        200,
        listSuppressionsResponseSchema,
      );
      expect(page).toEqual({ items: [], next_cursor: null, count: 0 });
    });

    test('DELETE with the key of another project is 403 even for a hash that exists there; the suppression stays', async () => {
      const app = await open();
      const { globex, acme } = app.projects;
      const added = expectSuccess(
        await app.api('POST', listPath(globex), { key: 'globex', json: { email: 'kept@example.com' } }),
        201,
        suppressionSchema,
      );
      expectError(await app.api('DELETE', `${listPath(globex)}/${added.hash}`, { key: 'acme' }), 403, 'forbidden');
      expect(expectSuccess(await app.api('GET', `${listPath(globex)}/check?email=kept@example.com`, { key: 'globex' }), 200)).toMatchObject(
        { suppressed: true },
      );
      // Through its own project the acme key does not reach globex's record either.
      expectError(await app.api('DELETE', `${listPath(acme)}/${added.hash}`, { key: 'acme' }), 404, 'suppression_not_found');
      expect(expectSuccess(await app.api('GET', `${listPath(globex)}/check?email=kept@example.com`, { key: 'globex' }), 200)).toMatchObject(
        { suppressed: true },
      );
    });

    test('authentication comes before the body: a bad key with a bad body is 401 or 403, never 400 or 415', async () => {
      const app = await open();
      const malformed = { headers: { 'content-type': 'application/json' }, body: '{"email":' };
      expectError(await app.api('POST', listPath(app.projects.acme), { ...malformed, key: null }), 401, 'missing_api_key');
      expectError(await app.api('POST', listPath(app.projects.acme), { ...malformed, key: 'nope' }), 401, 'invalid_api_key');
      expectError(await app.api('POST', listPath(app.projects.globex), { ...malformed, key: 'acme' }), 403, 'forbidden');
      expectError(await app.api('POST', listPath(app.projects.globex), { key: 'acme', body: 'plain text' }), 403, 'forbidden');
    });

    test('a key for several projects opens each of them, and no other', async () => {
      const app = await open();
      expectSuccess(await app.api('GET', listPath(app.projects.acme), { key: 'both' }), 200, listSuppressionsResponseSchema);
      expectSuccess(await app.api('POST', listPath(app.projects.globex), { key: 'both', json: { email: 'ana@example.com' } }), 201);
      expectError(await app.api('GET', listPath(`initech-${app.projects.acme}`), { key: 'both' }), 403, 'forbidden');
    });

    test("a '*' key opens every project, configured or not", async () => {
      const app = await open();
      for (const projectId of [app.projects.acme, app.projects.globex, `initech-${app.projects.acme}`]) {
        expectSuccess(await app.api('GET', listPath(projectId), { key: 'admin' }), 200, listSuppressionsResponseSchema);
      }
      // It does not make an invalid project id valid.
      expectError(await app.api('GET', listPath('-dash-first'), { key: 'admin' }), 400, 'invalid_request');
    });

    test('keys resolved by an async function: a string, a list, or * each open what they name', async () => {
      const scopes = new Map<string, string | ApiKeyScope>();
      const resolved: string[] = [];
      const app = await open({
        apiKeys: async (key) => {
          resolved.push(key);
          await sleep(1);
          return scopes.get(key);
        },
      });
      const { acme, globex } = app.projects;
      scopes.set('r-acme', acme).set('r-both', [acme, globex]).set('r-admin', '*');
      expectSuccess(await app.api('GET', listPath(acme), { key: 'r-acme' }), 200);
      expectError(await app.api('GET', listPath(globex), { key: 'r-acme' }), 403, 'forbidden');
      expectSuccess(await app.api('GET', listPath(globex), { key: 'r-both' }), 200);
      expectError(await app.api('GET', listPath(`initech-${acme}`), { key: 'r-both' }), 403, 'forbidden');
      expectSuccess(await app.api('GET', listPath(`initech-${acme}`), { key: 'r-admin' }), 200);
      expectError(await app.api('GET', listPath(acme), { key: 'r-unknown' }), 401, 'invalid_api_key');
      // A missing key never reaches the resolver.
      expectError(await app.api('GET', listPath(acme), { key: null }), 401, 'missing_api_key');
      expect(resolved).toEqual(['r-acme', 'r-acme', 'r-both', 'r-both', 'r-admin', 'r-unknown']);
    });

    test('a resolver that throws is 500 internal_error, without its message, and is logged', async () => {
      const failure = new Error('key database unreachable');
      const app = await open({ apiKeys: async () => Promise.reject(failure) });
      const answer = await app.api('GET', listPath(app.projects.acme), { key: 'any' });
      expectError(answer, 500, 'internal_error');
      expect(answer.text).not.toContain('unreachable');
      expect(app.logged.map((entry) => entry.context.err)).toEqual([failure]);
    });

    test('webhooks and /openapi.json need no key', async () => {
      const app = await open();
      expectSuccess(await app.request('/openapi.json'), 200);
      // No key, and no provider credentials either: refused by the provider check, not by X-API-Key.
      expectError(
        await app.request(`/projects/${app.projects.acme}/webhooks/postmark`, { method: 'POST', json: {} }),
        401,
        'webhook_unauthorized',
      );
    });
  });
}
