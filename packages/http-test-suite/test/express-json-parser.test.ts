import { createHash } from 'node:crypto';
import { createMemoryStore } from '@mailwarden/core';
import { batchCheckResponseSchema, listSuppressionsResponseSchema, suppressionSchema } from '@mailwarden/core/schemas';
import { describe, expect, onTestFinished, test } from 'vitest';
import {
  TRACKING_ID,
  expectError,
  expectSuccess,
  mandrillEvents,
  sendgridEvents,
  sesBounce,
  startExpressBehindJsonParser,
  startTestApp,
  type StartServer,
} from '../src/index.js';

// A common setup: `app.use(express.json())` for the whole app, mailwarden mounted after it. The JSON
// body is then parsed before mailwarden sees the request: API routes use the parsed value; webhooks,
// whose signatures cover the exact bytes, cannot be verified when their body was JSON.

async function open(start: StartServer) {
  const app = await startTestApp({ start, store: createMemoryStore() });
  onTestFinished(() => app.close());
  return app;
}

const MiB = 1024 * 1024;

describe.each([4, 5] as const)('Express %i with express.json() mounted before the router', (version) => {
  const start = startExpressBehindJsonParser(version);

  test('API routes work on the parsed body: add (201, then 200), check, batch check, list, remove', async () => {
    const app = await open(start);
    const list = `/projects/${app.projects.acme}/suppressions`;
    const added = expectSuccess(await app.api('POST', list, { json: { email: 'Ana@Example.com' } }), 201, suppressionSchema);
    expect(added).toMatchObject({
      email: 'ana@example.com',
      hash: createHash('sha256').update('ana@example.com').digest('hex'),
      reason: 'manual',
    });
    expect(expectSuccess(await app.api('POST', list, { json: { email: 'ana@example.com' } }), 200)).toEqual(added);
    expect(expectSuccess(await app.api('GET', `${list}/check?email=ANA%40example.com`), 200)).toMatchObject({ suppressed: true });
    const batch = expectSuccess(
      await app.api('POST', `${list}/check`, { json: { emails: ['ana@example.com', 'bo@example.com'] } }),
      200,
      batchCheckResponseSchema,
    );
    expect(batch.results.map((result) => result.suppressed)).toEqual([true, false]);
    expect(expectSuccess(await app.api('GET', list), 200, listSuppressionsResponseSchema).count).toBe(1);
    expect(expectSuccess(await app.api('DELETE', `${list}/${added.hash}`), 200)).toEqual({ deleted: true, hash: added.hash });
    // Validation still runs on the parsed value.
    expectError(await app.api('POST', list, { json: {} }), 400, 'invalid_request');
    expectError(await app.api('POST', list, { json: { email: 'nope' } }), 400, 'invalid_email');
    expectError(await app.api('POST', `${list}/check`, { json: { emails: Array(101).fill('a@example.com') } }), 400, 'batch_too_large');
    // And authentication before it.
    expectError(await app.api('POST', list, { key: null, json: { email: 'ana@example.com' } }), 401, 'missing_api_key');
  });

  test('bodies express.json() leaves alone still get mailwarden’s own answers (415, 400)', async () => {
    const app = await open(start);
    const list = `/projects/${app.projects.acme}/suppressions`;
    expectError(
      await app.api('POST', list, { headers: { 'content-type': 'text/plain' }, body: '{"email":"a@example.com"}' }),
      415,
      'unsupported_media_type',
    );
    expectError(await app.api('POST', list), 400, 'invalid_request');
  });

  test('webhooks whose body is not JSON still get their raw bytes: SES (text/plain) and Mandrill (a form) are stored', async () => {
    const app = await open(start);
    const ses = await app.webhook('ses', app.projects.acme, sesBounce(app.secrets.acme, ['ana@example.org'], TRACKING_ID));
    expect(expectSuccess(ses, 200)).toMatchObject({ accepted: 1 });
    const mandrill = await app.webhook(
      'mandrill',
      app.projects.acme,
      mandrillEvents(app.secrets.acme, ['yan@example.net'], 'delivered', TRACKING_ID),
    );
    expect(expectSuccess(mandrill, 200)).toMatchObject({ accepted: 1 });
  });

  test('a webhook with a JSON body cannot be verified: 500 internal_error, and the log says why', async () => {
    // What happens, not what one would wish: the signed bytes are gone, so SendGrid (and Mailgun,
    // Postmark, SparkPost) deliveries fail until the app mounts mailwarden before express.json().
    const app = await open(start);
    const answer = await app.webhook(
      'sendgrid',
      app.projects.acme,
      sendgridEvents(app.secrets.acme, ['jane@example.com'], 'delivered', TRACKING_ID),
    );
    expectError(answer, 500, 'internal_error');
    expect(app.logged).toHaveLength(1);
    expect(String((app.logged[0]!.context.err as Error).message)).toMatch(/body parser mounted before mailwarden/);
  });

  test('express.json() answers malformed JSON and bodies over its 100 kB limit itself, with its HTML error page', async () => {
    // Mailwarden never sees these requests: Express's final handler answers, not the error body of docs/errors.md.
    const app = await open(start);
    const list = `/projects/${app.projects.acme}/suppressions`;
    const malformed = await app.api('POST', list, { headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const large = await app.api('POST', `${list}/check`, {
      headers: { 'content-type': 'application/json' },
      body: `{"emails":[]}${' '.repeat(200 * 1024)}`,
    });
    expect(large.status).toBe(413);
    expect(large.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  test('the 1 MiB API cap still holds when express.json() is given a higher limit', async () => {
    // docs/decisions.md#http caps API bodies at 1 MiB; a parsed body must not bypass it (its Content-Length is still known).
    const app = await open(startExpressBehindJsonParser(version, { limit: '10mb' }));
    const body = `{"emails":[]}${' '.repeat(2 * MiB)}`;
    const answer = await app.api('POST', `/projects/${app.projects.acme}/suppressions/check`, {
      headers: { 'content-type': 'application/json' },
      body,
    });
    expectError(answer, 413, 'payload_too_large');
  });
});
