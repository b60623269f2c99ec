import { alertStatusSchema, changeListSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sendgridEvents } from './provider-requests.js';
import type { TestApp } from './test-app.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A small window, so a few messages cross: 10 messages, at least 4, 25 % bounces, 10 % complaints. */
const rules = { window: 10, minMessages: 4, bounceRate: 25, complaintRate: 10, trackingIds: true, pauseStreams: ['marketing'] };

/** Three delivered messages and one hard bounce, each its own recipient, through SendGrid's webhook. */
async function sendFour(app: TestApp): Promise<void> {
  const { acme } = app.projects;
  const delivered = sendgridEvents(app.secrets.acme, ['a@example.com', 'b@example.com', 'c@example.com'], 'delivered', TRACKING_ID);
  expect((await app.webhook('sendgrid', acme, delivered)).status).toBe(200);
  const bounced = sendgridEvents(app.secrets.acme, ['d@example.com'], 'bounce', TRACKING_ID);
  expect((await app.webhook('sendgrid', acme, bounced)).status).toBe(200);
}

/** docs/http.md, "Deliverability alerts": a window's rates against their thresholds. */
export function describeAlertTests(open: OpenApp): void {
  describe('deliverability alerts', () => {
    test('the status counts the window: 1 bounce in 4 messages fires at 25 % and pauses the configured stream', async () => {
      const app = await open({ alerts: { acme: rules } });
      const { acme } = app.projects;
      const empty = expectSuccess(await app.api('GET', `/projects/${acme}/alerts`), 200, alertStatusSchema);
      const quiet = { count: 0, rate: 0, firing: false };
      expect(empty).toEqual({
        window: 10,
        min_messages: 4,
        tracking_id: null,
        messages: 0,
        bounce: { ...quiet, threshold: 0.25, resolve_below: 0.2 },
        complaint: { ...quiet, threshold: 0.1, resolve_below: 0.08 },
        paused_streams: [],
      });

      await sendFour(app);
      const paused = [{ stream: 'marketing', paused_at: iso(CLOCK_START), cause: 'alert.bounce_rate' }];
      const status = expectSuccess(await app.api('GET', `/projects/${acme}/alerts`), 200, alertStatusSchema);
      expect(status).toEqual({
        ...empty,
        messages: 4,
        bounce: { count: 1, rate: 0.25, threshold: 0.25, resolve_below: 0.2, firing: true },
        paused_streams: paused,
      });
      // The tracking ID's own window saw the same messages; it pauses nothing itself.
      const byTrackingId = await app.api('GET', `/projects/${acme}/alerts?tracking_id=${encodeURIComponent(TRACKING_ID)}`);
      expect(expectSuccess(byTrackingId, 200, alertStatusSchema)).toEqual({ ...status, tracking_id: TRACKING_ID });
      expect(JSON.parse((await app.api('GET', `/projects/${acme}/streams/paused`)).text)).toEqual({ items: paused });
    });

    test('with a feed, the crossing is one alert change, then the stream it paused', async () => {
      const app = await open({ changes: {}, alerts: { acme: { ...rules, trackingIds: false } } });
      const { acme } = app.projects;
      await sendFour(app);
      const page = expectSuccess(await app.api('GET', `/projects/${acme}/changes?kind=alert,stream`), 200, changeListSchema);
      expect(page.items.map(({ seq: _seq, id: _id, ...change }) => change)).toEqual([
        {
          project: acme,
          kind: 'alert.bounce_rate',
          at: iso(CLOCK_START),
          actor: 'rule:alerts',
          alert: { tracking_id: null, firing: true, messages: 4, count: 1, rate: 0.25, threshold: 0.25 },
        },
        {
          project: acme,
          kind: 'stream.paused',
          at: iso(CLOCK_START),
          actor: 'rule:alerts',
          stream: 'marketing',
          cause: 'alert.bounce_rate',
        },
      ]);
      expect(page.items[1]!.seq).toBe(page.items[0]!.seq + 1);
    });

    test('refusals: 404 alerts_not_configured without rules (or for a tracking ID without windows of its own), invalid_tracking_id, the project key', async () => {
      const app = await open({ alerts: { acme: { ...rules, trackingIds: false } } });
      const { acme, globex } = app.projects;
      expectError(await app.api('GET', `/projects/${globex}/alerts`, { key: 'globex' }), 404, 'alerts_not_configured');
      expectError(await app.api('GET', `/projects/${acme}/alerts?tracking_id=spring`), 404, 'alerts_not_configured');
      expectError(await app.api('GET', `/projects/${acme}/alerts?tracking_id=${'x'.repeat(129)}`), 400, 'invalid_tracking_id');
      expectError(await app.api('GET', `/projects/${acme}/alerts?tracking_id=a&tracking_id=b`), 400, 'invalid_request');
      expectError(await app.api('GET', `/projects/${acme}/alerts`, { key: 'globex' }), 403, 'forbidden');
      expectError(await app.api('GET', `/projects/${acme}/alerts`, { key: null }), 401, 'missing_api_key');
    });
  });
}
