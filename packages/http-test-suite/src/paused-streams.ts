import { pausedStreamListSchema, pausedStreamSchema, resumeStreamResponseSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** docs/http.md, "Paused streams": an operator pauses and resumes a stream's sending. */
export function describePausedStreamTests(open: OpenApp): void {
  describe('paused streams', () => {
    test('pause answers 201, then 200 with the same bytes; the list by name; resume says whether it was paused', async () => {
      const app = await open();
      const { acme, globex } = app.projects;
      const path = (stream: string, action: 'pause' | 'resume') => `/projects/${acme}/streams/${stream}/${action}`;
      const list = async () => expectSuccess(await app.api('GET', `/projects/${acme}/streams/paused`), 200, pausedStreamListSchema);
      expect(await list()).toEqual({ items: [] });

      const first = await app.api('POST', path('marketing', 'pause'));
      expect(expectSuccess(first, 201, pausedStreamSchema)).toEqual({
        stream: 'marketing',
        paused_at: iso(CLOCK_START),
        cause: 'operator',
      });
      app.clock.advance(1000);
      const again = await app.api('POST', path('marketing', 'pause'));
      expect([again.status, again.text]).toEqual([200, first.text]);
      expectSuccess(await app.api('POST', path('digest', 'pause')), 201);
      // "paused" is a stream name like any other: its pause is not the listing.
      expectSuccess(await app.api('POST', path('paused', 'pause')), 201);
      expect((await list()).items.map((item) => item.stream)).toEqual(['digest', 'marketing', 'paused']);
      // Another project's streams are its own.
      const other = await app.api('GET', `/projects/${globex}/streams/paused`, { key: 'globex' });
      expect(expectSuccess(other, 200, pausedStreamListSchema)).toEqual({ items: [] });

      const resumed = await app.api('POST', path('marketing', 'resume'));
      expect(expectSuccess(resumed, 200, resumeStreamResponseSchema)).toEqual({ stream: 'marketing', resumed: true });
      const retried = await app.api('POST', path('marketing', 'resume'));
      expect(expectSuccess(retried, 200, resumeStreamResponseSchema)).toEqual({ stream: 'marketing', resumed: false });
      expect((await list()).items.map((item) => item.stream)).toEqual(['digest', 'paused']);
    });

    test('refusals: invalid_stream for what no stream is called, 405 for GET, the project key', async () => {
      const app = await open();
      const { acme } = app.projects;
      for (const stream of ['Marketing', '-x', 'a'.repeat(65), '%20', 'm%C3%A9']) {
        expectError(await app.api('POST', `/projects/${acme}/streams/${stream}/pause`), 400, 'invalid_stream');
        expectError(await app.api('POST', `/projects/${acme}/streams/${stream}/resume`), 400, 'invalid_stream');
      }
      expectError(await app.api('GET', `/projects/${acme}/streams/marketing/pause`), 405, 'method_not_allowed');
      expectError(await app.api('POST', `/projects/${acme}/streams/paused`), 405, 'method_not_allowed');
      expectError(await app.api('POST', `/projects/${acme}/streams/marketing/pause`, { key: 'globex' }), 403, 'forbidden');
      expectError(await app.api('GET', `/projects/${acme}/streams/paused`, { key: null }), 401, 'missing_api_key');
      expect(JSON.parse((await app.api('GET', `/projects/${acme}/streams/paused`)).text)).toEqual({ items: [] });
    });
  });
}
