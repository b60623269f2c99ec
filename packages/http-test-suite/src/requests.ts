import { batchCheckResponseSchema, listSuppressionsResponseSchema, suppressionSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { JSON_CONTENT_TYPE, expectEmpty, expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { chunkedBody, jsonOf } from './http.js';

const MiB = 1024 * 1024;

/** `{"emails":[]}` padded with white space to exactly `size` bytes: valid JSON of any length. */
function paddedBatch(size: number): Uint8Array {
  const text = '{"emails":[]}';
  const bytes = new Uint8Array(size).fill(0x20);
  bytes.set(new TextEncoder().encode(text), 0);
  return bytes;
}

export function describeRequestTests(open: OpenApp): void {
  describe('requests: bodies, content types, routing, methods', () => {
    test('malformed JSON, an empty body and invalid UTF-8 are 400 invalid_request', async () => {
      const app = await open();
      const path = `/projects/${app.projects.acme}/suppressions`;
      const json = { 'content-type': 'application/json' };
      for (const body of [
        '{"email":',
        '{email: "ana@example.com"}',
        "{'email':'ana@example.com'}",
        '',
        '{"email":"ana@example.com"} trailing',
      ]) {
        expectError(await app.api('POST', path, { headers: json, body }), 400, 'invalid_request');
      }
      expectError(await app.api('POST', path, { headers: json, body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]) }), 400, 'invalid_request');
      // No body and no Content-Type at all.
      expectError(await app.api('POST', path), 400, 'invalid_request');
    });

    test('a body that is not declared JSON is 415 unsupported_media_type, also without a Content-Type', async () => {
      const app = await open();
      const path = `/projects/${app.projects.acme}/suppressions`;
      const body = JSON.stringify({ email: 'ana@example.com' });
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=iso-8859-1',
        'application/jsonx',
      ]) {
        expectError(await app.api('POST', path, { headers: { 'content-type': contentType }, body }), 415, 'unsupported_media_type');
      }
      // A string body without a declared type: fetch sends text/plain.
      expectError(await app.api('POST', path, { body }), 415, 'unsupported_media_type');
      // Bytes without any Content-Type header.
      expectError(await app.api('POST', path, { body: new TextEncoder().encode(body) }), 415, 'unsupported_media_type');
      expectSuccess(
        await app.api('POST', path, { headers: { 'content-type': 'Application/JSON; Charset="UTF-8"' }, body }),
        201,
        suppressionSchema,
      );
      expectSuccess(
        await app.api('POST', path, { headers: { 'content-type': 'application/merge-patch+json' }, body }),
        200,
        suppressionSchema,
      );
    });

    test('an API body over 1 MiB is 413 payload_too_large, declared or chunked; exactly 1 MiB is read', async () => {
      const app = await open();
      const path = `/projects/${app.projects.acme}/suppressions/check`;
      const json = { 'content-type': 'application/json' };
      const declared = expectError(await app.api('POST', path, { headers: json, body: paddedBatch(MiB + 1) }), 413, 'payload_too_large');
      expect(declared.details).toEqual({ limit: MiB });
      expectError(await app.api('POST', path, { headers: json, body: chunkedBody(MiB + 1) }), 413, 'payload_too_large');
      expectSuccess(await app.api('POST', path, { headers: json, body: paddedBatch(MiB) }), 200, batchCheckResponseSchema);
      // The connection is still usable afterwards.
      expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/suppressions`), 200);
    });

    test('a webhook body over 10 MiB is 413; one between 1 and 10 MiB is read (and refused for its missing signature)', async () => {
      const app = await open();
      const path = `/projects/${app.projects.acme}/webhooks/sendgrid`;
      const json = { 'content-type': 'application/json' };
      const error = expectError(
        await app.request(path, { method: 'POST', headers: json, body: paddedBatch(10 * MiB + 1) }),
        413,
        'payload_too_large',
      );
      expect(error.details).toEqual({ limit: 10 * MiB });
      expectError(await app.request(path, { method: 'POST', headers: json, body: chunkedBody(10 * MiB + 1) }), 413, 'payload_too_large');
      expectError(await app.request(path, { method: 'POST', headers: json, body: paddedBatch(2 * MiB) }), 401, 'webhook_unauthorized');
    });

    test('an unknown route is 404 not_found', async () => {
      const app = await open();
      const { acme } = app.projects;
      for (const path of [
        '/nope',
        '/projects',
        `/projects/${acme}`,
        `/projects/${acme}/nothing`,
        `/projects/${acme}/suppressions/${'0'.repeat(64)}/more`,
        `/projects/${acme}/webhooks`,
        '//projects',
        '/openapi.yaml',
      ]) {
        expectError(await app.api('GET', path), 404, 'not_found');
      }
      // A segment that is a literal elsewhere is not the literal when encoded: `suppressions%2Fcheck` is one segment.
      expectError(await app.api('GET', `/projects/${acme}/suppressions%2Fcheck?email=a%40example.com`), 404, 'not_found');
    });

    test('a method a route does not answer is 405 method_not_allowed with an Allow header', async () => {
      const app = await open();
      const { acme } = app.projects;
      const hash = '0'.repeat(64);
      const cases: [string, string, string][] = [
        ['PUT', `/projects/${acme}/suppressions`, 'GET, POST, HEAD'],
        ['PATCH', `/projects/${acme}/suppressions`, 'GET, POST, HEAD'],
        ['DELETE', `/projects/${acme}/suppressions`, 'GET, POST, HEAD'],
        ['OPTIONS', `/projects/${acme}/suppressions`, 'GET, POST, HEAD'],
        ['DELETE', `/projects/${acme}/suppressions/check`, 'GET, POST, HEAD'],
        ['GET', `/projects/${acme}/suppressions/${hash}`, 'DELETE'],
        ['POST', `/projects/${acme}/messages`, 'GET, HEAD'],
        ['DELETE', `/projects/${acme}/tracking-ids`, 'GET, HEAD'],
        ['GET', `/projects/${acme}/webhooks/ses`, 'POST, HEAD'],
        ['PUT', `/projects/${acme}/webhooks/nope`, 'POST, HEAD'],
        ['POST', '/openapi.json', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const answer = await app.api(method, path, method === 'GET' || method === 'DELETE' || method === 'OPTIONS' ? {} : { json: {} });
        const error = expectError(answer, 405, 'method_not_allowed');
        expect({ request: `${method} ${path}`, allow: answer.headers.get('allow') }).toEqual({ request: `${method} ${path}`, allow });
        expect(error.details).toEqual({ allow: allow.split(', ') });
      }
      // The method is checked before the key: a 405 needs none.
      expectError(await app.api('PUT', `/projects/${acme}/suppressions`, { key: null, json: {} }), 405, 'method_not_allowed');
    });

    test('HEAD on a GET route answers its status and headers without a body', async () => {
      const app = await open();
      const { acme } = app.projects;
      const answer = await app.api('HEAD', `/projects/${acme}/suppressions`);
      expectEmpty(answer, 200);
      expect(answer.headers.get('content-type')).toBe(JSON_CONTENT_TYPE);
      expectEmpty(await app.api('HEAD', `/projects/${acme}/messages`), 200);
      expectEmpty(await app.api('HEAD', `/projects/${acme}/suppressions/check?email=ana%40example.com`), 200);
      expectEmpty(await app.request('/openapi.json', { method: 'HEAD' }), 200);
      // Errors too: the status, no body.
      expectEmpty(await app.api('HEAD', `/projects/${acme}/suppressions`, { key: null }), 401);
      expectEmpty(await app.api('HEAD', `/projects/${acme}/suppressions?limit=0`), 400);
      expectEmpty(await app.api('HEAD', '/nope'), 404);
    });

    test('a repeated query parameter is 400 invalid_request; unknown ones are ignored', async () => {
      const app = await open();
      const { acme } = app.projects;
      const error = expectError(await app.api('GET', `/projects/${acme}/suppressions?limit=1&limit=2`), 400, 'invalid_request');
      expect(error.message).toContain('limit');
      expectError(
        await app.api('GET', `/projects/${acme}/suppressions/check?email=a%40example.com&email=b%40example.com`),
        400,
        'invalid_request',
      );
      expectError(await app.api('GET', `/projects/${acme}/messages?trackingId=a&trackingId=a`), 400, 'invalid_request');
      expectSuccess(await app.api('GET', `/projects/${acme}/suppressions?utm_source=x&limit=2`), 200, listSuppressionsResponseSchema);
    });

    test('path segments are percent-decoded; one trailing slash is ignored', async () => {
      const app = await open();
      const { acme } = app.projects;
      const encoded = [...acme].map((char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`).join('');
      const added = expectSuccess(
        await app.api('POST', `/projects/${encoded}/suppressions`, { json: { email: 'ana@example.com' } }),
        201,
        suppressionSchema,
      );
      expectSuccess(await app.api('GET', `/projects/${acme}/suppressions/check?email=ana%40example.com`), 200);
      expect(expectSuccess(await app.api('GET', `/projects/${acme}/suppressions/`), 200)).toMatchObject({ count: 1 });
      expect(expectSuccess(await app.api('GET', `/projects/${encoded}/suppressions/check/?email=ANA%40example.com`), 200)).toEqual({
        email: 'ANA@example.com',
        suppressed: true,
        reason: 'manual',
        created_at: added.created_at,
        source: 'api',
        cause: null,
      });
      // The key check sees the decoded project: acme's key on an encoded globex is forbidden.
      const globex = [...app.projects.globex].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');
      expectError(await app.api('GET', `/projects/${globex}/suppressions`), 403, 'forbidden');
      const hash = [...added.hash].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');
      expect(expectSuccess(await app.api('DELETE', `/projects/${acme}/suppressions/${hash}/`), 200)).toEqual({
        deleted: true,
        hash: added.hash,
      });
      // Two trailing slashes are an empty segment: no route.
      expectError(await app.api('GET', `/projects/${acme}/suppressions//`), 404, 'not_found');
    });

    test('/openapi.json serves an OpenAPI 3.1 document naming every route', async () => {
      const app = await open();
      const document = expectSuccess(await app.request('/openapi.json'), 200) as {
        openapi: string;
        paths: Record<string, Record<string, unknown>>;
      };
      expect(document.openapi).toMatch(/^3\.1\./);
      expect(Object.keys(document.paths).sort()).toEqual([
        '/openapi.json',
        '/projects/{projectId}/alerts',
        '/projects/{projectId}/allowlist',
        '/projects/{projectId}/allowlist/{entry}',
        '/projects/{projectId}/api-key',
        '/projects/{projectId}/changes',
        '/projects/{projectId}/erasures',
        '/projects/{projectId}/messages',
        '/projects/{projectId}/messages/{id}',
        '/projects/{projectId}/outbound-webhooks',
        '/projects/{projectId}/outbound-webhooks/{endpointId}/resume',
        '/projects/{projectId}/stats',
        '/projects/{projectId}/streams/paused',
        '/projects/{projectId}/streams/{stream}/pause',
        '/projects/{projectId}/streams/{stream}/resume',
        '/projects/{projectId}/suppressions',
        '/projects/{projectId}/suppressions/bulk',
        '/projects/{projectId}/suppressions/bulk-check',
        '/projects/{projectId}/suppressions/bulk-delete',
        '/projects/{projectId}/suppressions/check',
        '/projects/{projectId}/suppressions/{hash}',
        '/projects/{projectId}/tracking-ids',
        '/projects/{projectId}/tracking-ids/{trackingId}/stats',
        '/projects/{projectId}/unsubscribe-links',
        '/projects/{projectId}/unsubscribe/{token}',
        '/projects/{projectId}/webhooks/{provider}',
      ]);
      expect(Object.keys(document.paths['/projects/{projectId}/suppressions']!).sort()).toEqual(expect.arrayContaining(['get', 'post']));
      expect(jsonOf(await app.request('/openapi.json/'))).toEqual(document);
    });
  });
}
