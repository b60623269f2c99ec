import { errorStatus, type ErrorBody } from '@mailwarden/core';
import {
  addSuppressionResponseSchema,
  allowlistEntrySchema,
  applyEventsResultSchema,
  batchCheckResponseSchema,
  bulkAddResponseSchema,
  bulkRemoveResponseSchema,
  alertStatusSchema,
  changeListSchema,
  checkSuppressionResponseSchema,
  endpointStatusListSchema,
  endpointStatusSchema,
  errorBodySchema,
  listAllowlistResponseSchema,
  listMessagesResponseSchema,
  listSuppressionsResponseSchema,
  listTrackingIdsResponseSchema,
  pausedStreamListSchema,
  pausedStreamSchema,
  removeSuppressionResponseSchema,
  resumeStreamResponseSchema,
} from '@mailwarden/core/schemas';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { arbitraryRequest } from './arbitraries.js';
import { expectError } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { jsonOf, send, type Answer } from './http.js';
import { webhookFuzzCases } from './provider-requests.js';

const successSchemas = [
  listSuppressionsResponseSchema,
  checkSuppressionResponseSchema,
  batchCheckResponseSchema,
  addSuppressionResponseSchema,
  removeSuppressionResponseSchema,
  bulkAddResponseSchema,
  bulkRemoveResponseSchema,
  listMessagesResponseSchema,
  listTrackingIdsResponseSchema,
  applyEventsResultSchema,
  listAllowlistResponseSchema,
  allowlistEntrySchema,
  changeListSchema,
  alertStatusSchema,
  pausedStreamListSchema,
  pausedStreamSchema,
  resumeStreamResponseSchema,
  endpointStatusListSchema,
  endpointStatusSchema,
];

const isOpenApiDocument = (body: unknown) => typeof (body as { openapi?: unknown } | null)?.openapi === 'string';

/** Any answer of mailwarden: never 5xx; a body that is a success shape or the error body, with the status of its code. */
export function expectMailwardenAnswer(answer: Answer, method: string): void {
  expect(answer.status, answer.text).toBeLessThan(500);
  // HEAD, and a removed allowlist entry (204), answer without a body.
  if (method === 'HEAD' || answer.status === 204) {
    expect(answer.text).toBe('');
    return;
  }
  const body = jsonOf(answer);
  if (answer.status >= 400) {
    expect(errorBodySchema.safeParse(body).success, answer.text).toBe(true);
    expect(Object.keys(body as object)).toEqual(['error']);
    const { code, message } = (body as ErrorBody).error;
    expect(errorStatus[code]).toBe(answer.status);
    expect(message.length).toBeGreaterThan(0);
  } else {
    expect(successSchemas.some((schema) => schema.safeParse(body).success) || isOpenApiDocument(body), answer.text).toBe(true);
  }
}

/** Values a provider payload may carry: lone surrogates, NUL and other controls, long runs, other types. */
const payloadText = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
      fc.constantFrom('\ud800', '\udfff', '\u0000', 'a'),
    ),
    maxLength: 20,
  }),
  fc.constantFrom('x'.repeat(129), '\u{1f4ec}'.repeat(128), ''),
);
const payloadValue = fc.oneof(payloadText, fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.constant({}), fc.constant([]));

/** `document` with any of its leaves (strings, numbers, booleans, null) replaced by a payload value. */
function mutated(document: unknown): fc.Arbitrary<unknown> {
  if (Array.isArray(document)) return fc.tuple(...document.map(mutated));
  if (typeof document === 'object' && document !== null) {
    return fc.record(Object.fromEntries(Object.entries(document).map(([name, value]) => [name, mutated(value)])));
  }
  return fc.oneof({ weight: 3, arbitrary: fc.constant(document) }, { weight: 1, arbitrary: payloadValue });
}

export function describeAnyInputTests(open: OpenApp, numRuns: number): void {
  describe('any input', () => {
    test('no request gives a 5xx, and every answer is a success shape or the error body (property)', async () => {
      // With a feed and alert rules, so the feed's, the alerts' and the writes' new paths are reached too.
      const app = await open({ changes: {}, alerts: { acme: { trackingIds: true, pauseStreams: ['marketing'] } } });
      await fc.assert(
        fc.asyncProperty(arbitraryRequest(app.projects), async (request) => {
          const url = `${app.server.baseUrl}${request.path}${request.query === '' ? '' : `?${request.query}`}`;
          expectMailwardenAnswer(await send(url, request.call), request.method);
        }),
        { numRuns },
      );
    });

    test.each(webhookFuzzCases)('an authenticated $provider webhook whose fields are anything never gives a 5xx (property)', async (c) => {
      const app = await open();
      // The document as the provider sent it passes authentication and is stored: the fuzz reaches the store.
      const original = await app.webhook(c.provider, app.projects.acme, c.request(app.secrets.acme, c.document(app.secrets.acme)));
      expect([original.status, (jsonOf(original) as { accepted: number }).accepted]).toEqual([200, 1]);
      await fc.assert(
        fc.asyncProperty(mutated(c.document(app.secrets.acme)), async (document) => {
          const answer = await app.webhook(c.provider, app.projects.acme, c.request(app.secrets.acme, document));
          expectMailwardenAnswer(answer, 'POST');
        }),
        { numRuns: Math.ceil(numRuns / 4) },
      );
    });

    // Pinned examples: requests the property leaves out because a binding may answer them before
    // mailwarden sees them. Every binding must still answer them with mailwarden's error body.

    test('a method no route knows (PROPFIND, PURGE) is 405 method_not_allowed with an Allow header', async () => {
      const app = await open();
      for (const method of ['PROPFIND', 'PURGE', 'REPORT']) {
        const answer = await app.api(method, `/projects/${app.projects.acme}/suppressions`);
        expectError(answer, 405, 'method_not_allowed');
        expect(answer.headers.get('allow')).toBe('GET, POST, HEAD');
      }
      // QUERY takes a body, and Fastify refuses one without a Content-Type before any route runs.
      for (const call of [{}, { headers: { 'content-type': 'application/json' }, body: '{}' }]) {
        const answer = await app.api('QUERY', `/projects/${app.projects.acme}/suppressions`, call);
        expectError(answer, 405, 'method_not_allowed');
      }
    });

    test('a path with malformed percent-encoding is answered with the error body (400 invalid_request)', async () => {
      const app = await open();
      for (const path of ['/%', `/projects/%E0%A4%A/suppressions`, `/projects/${app.projects.acme}/suppressions/%zz`]) {
        expectError(await app.api('GET', path), 400, 'invalid_request');
      }
    });

    test('an empty or malformed Content-Type reaches mailwarden: 415 for an API body, the route answers otherwise', async () => {
      const app = await open();
      const path = `/projects/${app.projects.acme}/suppressions`;
      for (const contentType of ['', 'a', ';', 'application/']) {
        expectError(await app.api('POST', path, { headers: { 'content-type': contentType }, body: '{}' }), 415, 'unsupported_media_type');
        // No body at all: the Content-Type is irrelevant, the route answers as it would without one.
        expectError(await app.api('DELETE', path, { headers: { 'content-type': contentType } }), 405, 'method_not_allowed');
      }
    });

    test('the mount point itself, with or without a trailing slash, is 404 not_found', async () => {
      const app = await open();
      expectError(await send(`${app.server.baseUrl}/`), 404, 'not_found');
      expectError(await send(app.server.baseUrl), 404, 'not_found');
    });
  });
}
