import { statsResponseSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sendgridEvents, sesBounce } from './provider-requests.js';

const zero = { delivered: 0, hardBounced: 0, softBounced: 0, complained: 0, opened: 0, clicked: 0, unsubscribed: 0 };
const hourStart = (hour: number) => `2026-04-01T${String(hour).padStart(2, '0')}:00:00.000Z`;

export function describeStatsTests(open: OpenApp): void {
  describe('counts over time', () => {
    test('GET /stats and /tracking-ids/{trackingId}/stats: every bucket of the range, each message once per fact, in the hour of its event', async () => {
      const app = await open();
      const secrets = app.secrets.acme;
      const delivered = sendgridEvents(secrets, ['ana@example.com', 'bo@example.com'], 'delivered', 'spring-sale');
      // 08:59:05 and 09:00:02 UTC; the deliveries twice, as a provider retries.
      for (const [provider, request] of [
        ['sendgrid', delivered],
        ['sendgrid', delivered],
        ['ses', sesBounce(secrets, ['dee@example.org'], TRACKING_ID)],
      ] as const) {
        const answer = await app.webhook(provider, app.projects.acme, request);
        expect(answer.status, answer.text).toBe(200);
      }
      const project = `/projects/${app.projects.acme}`;

      const hours = expectSuccess(
        await app.api('GET', `${project}/stats?from=2026-04-01T00:00:00Z&to=2026-04-02T00:00:00Z&interval=hour`),
        200,
        statsResponseSchema,
      );
      expect(hours).toStrictEqual({
        trackingId: null,
        interval: 'hour',
        from: hourStart(0),
        to: '2026-04-02T00:00:00.000Z',
        buckets: Array.from({ length: 24 }, (_, hour) => ({
          start: hourStart(hour),
          ...zero,
          ...(hour === 8 ? { delivered: 2 } : hour === 9 ? { hardBounced: 1 } : {}),
        })),
      });

      // Days are the default interval; a date is its UTC midnight.
      const days = expectSuccess(
        await app.api('GET', `${project}/tracking-ids/spring-sale/stats?from=2026-03-31&to=2026-04-02`),
        200,
        statsResponseSchema,
      );
      expect(days).toStrictEqual({
        trackingId: 'spring-sale',
        interval: 'day',
        from: '2026-03-31T00:00:00.000Z',
        to: '2026-04-02T00:00:00.000Z',
        buckets: [
          { start: '2026-03-31T00:00:00.000Z', ...zero },
          { start: '2026-04-01T00:00:00.000Z', ...zero, delivered: 2 },
        ],
      });
      const bounced = expectSuccess(
        await app.api('GET', `${project}/tracking-ids/${encodeURIComponent(TRACKING_ID)}/stats?from=2026-04-01&to=2026-04-02`),
        200,
        statsResponseSchema,
      );
      expect(bounced.buckets).toStrictEqual([{ start: '2026-04-01T00:00:00.000Z', ...zero, hardBounced: 1 }]);
      // Another project, or a tracking ID without messages: zeros.
      const other = expectSuccess(
        await app.api('GET', `/projects/${app.projects.globex}/stats?from=2026-04-01&to=2026-04-02`, { key: 'globex' }),
        200,
        statsResponseSchema,
      );
      expect(other.buckets).toStrictEqual([{ start: '2026-04-01T00:00:00.000Z', ...zero }]);
    });

    test('a range off the interval, too long, reversed or missing is invalid_request; an invalid tracking ID is invalid_tracking_id', async () => {
      const app = await open();
      const stats = (query: string) => app.api('GET', `/projects/${app.projects.acme}/stats?${query}`);
      for (const query of [
        'from=2026-04-01T00:30:00Z&to=2026-04-02T00:00:00Z&interval=hour',
        'from=2026-04-01T01:00:00Z&to=2026-04-02T00:00:00Z',
        'from=2026-04-01&to=2026-05-02T01:00:00Z&interval=hour',
        'from=2024-01-01&to=2026-01-02',
        'from=2026-04-02&to=2026-04-01',
        'from=2026-04-01&to=2026-04-01',
        'from=2026-04-01',
        'to=2026-04-01',
        'from=2026-04-01&to=2026-04-02&interval=week',
        'from=yesterday&to=2026-04-02',
      ]) {
        expectError(await stats(query), 400, 'invalid_request');
      }
      // The longest ranges: 31 days of hours, 731 days.
      expectSuccess(await stats('from=2026-03-01&to=2026-04-01&interval=hour'), 200, statsResponseSchema);
      expectSuccess(await stats('from=2024-04-01&to=2026-04-01'), 200, statsResponseSchema);
      expectError(
        await app.api('GET', `/projects/${app.projects.acme}/tracking-ids/${'x'.repeat(129)}/stats?from=2026-04-01&to=2026-04-02`),
        400,
        'invalid_tracking_id',
      );
    });
  });
}
