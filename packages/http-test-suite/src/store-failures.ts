import { MailwardenError } from '@mailwarden/core';
import { applyEventsResultSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { webhookCases } from './provider-requests.js';
import type { Answer } from './http.js';

const unavailable = () => new MailwardenError('store_unavailable', 'The store did not answer.');
const boom = new Error('boom');

/** What no error answer may reveal: the thrown message, a stack frame, internals. */
function expectNothingInternal(answer: Answer): void {
  expect(answer.text).not.toContain('boom');
  expect(answer.text).not.toMatch(/\bat\s+\S+\s+\(|node:internal|\.ts:\d+|stack/i);
}

export function describeStoreFailureTests(open: OpenApp): void {
  describe('a failing store', () => {
    test('store_unavailable on an API call is 503 with Retry-After, and is logged', async () => {
      const app = await open();
      app.store.failWith(unavailable);
      for (const [method, path, json] of [
        ['GET', `/projects/${app.projects.acme}/suppressions`, undefined],
        ['POST', `/projects/${app.projects.acme}/suppressions`, { email: 'ana@example.com' }],
        ['GET', `/projects/${app.projects.acme}/suppressions/check?email=ana%40example.com`, undefined],
        ['GET', `/projects/${app.projects.acme}/messages`, undefined],
      ] as const) {
        const answer = await app.api(method, path, json === undefined ? {} : { json });
        expectError(answer, 503, 'store_unavailable');
        expect(answer.headers.get('retry-after')).toBe('5');
      }
      expect(app.logged.map((entry) => entry.message)).toEqual(Array(4).fill('mailwarden: store_unavailable'));
      app.store.failWith(undefined);
      expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/suppressions`), 200);
    });

    test('Retry-After follows the retryAfterSeconds option', async () => {
      const app = await open({ retryAfterSeconds: 30 });
      app.store.failWith(unavailable);
      const answer = await app.api('GET', `/projects/${app.projects.acme}/suppressions`);
      expectError(answer, 503, 'store_unavailable');
      expect(answer.headers.get('retry-after')).toBe('30');
    });

    // Brevo discards an event answered with a 5xx and retries a 429: its route answers 429 (docs/providers/brevo.md#retries).
    test('store_unavailable on a webhook is 503 (Brevo: 429) with Retry-After for every provider; nothing is acknowledged, and the retry is stored', async () => {
      const app = await open();
      let stored = 0;
      for (const c of webhookCases) {
        const request = c.request(app.secrets.acme);
        app.store.failWith(unavailable);
        const answer = await app.webhook(c.provider, app.projects.acme, request);
        expectError(answer, c.provider === 'brevo' ? 429 : 503, 'store_unavailable');
        expect({ provider: c.provider, retryAfter: answer.headers.get('retry-after') }).toEqual({ provider: c.provider, retryAfter: '5' });
        app.store.failWith(undefined);
        const page = expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/messages?limit=100`), 200) as { count: number };
        expect({ provider: c.provider, messages: page.count }).toEqual({ provider: c.provider, messages: stored });
        // The provider retries the very same request (Mailgun's token included): it is stored now.
        const retry = await app.webhook(c.provider, app.projects.acme, request);
        expect(expectSuccess(retry, 200, applyEventsResultSchema)).toEqual({
          accepted: c.messages.length,
          duplicates: 0,
          skipped: 0,
          warnings: [],
        });
        stored += c.messages.length;
      }
    });

    test('an unexpected store error is 500 internal_error without message or stack, and the logger gets the error', async () => {
      const app = await open();
      app.store.failWith(() => boom);
      const api = await app.api('POST', `/projects/${app.projects.acme}/suppressions/check`, { json: { emails: ['ana@example.com'] } });
      const error = expectError(api, 500, 'internal_error');
      expect(error.details).toBeUndefined();
      expectNothingInternal(api);
      expect(api.headers.get('retry-after')).toBeNull();

      const sendgrid = webhookCases.find((c) => c.provider === 'sendgrid')!;
      const webhook = await app.webhook('sendgrid', app.projects.acme, sendgrid.request(app.secrets.acme));
      expectError(webhook, 500, 'internal_error');
      expectNothingInternal(webhook);

      expect(app.logged).toHaveLength(2);
      for (const entry of app.logged) {
        expect(entry.context.err).toBe(boom);
        expect(entry.message).toEqual(expect.any(String));
      }
      expect(app.logged.map((entry) => [entry.context.method, entry.context.path])).toEqual([
        ['POST', `/projects/${app.projects.acme}/suppressions/check`],
        ['POST', `/projects/${app.projects.acme}/webhooks/sendgrid`],
      ]);
    });
  });
}
