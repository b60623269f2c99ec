import { applyEventsResultSchema, checkSuppressionResponseSchema, listSuppressionsResponseSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { TIMESTAMP, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { WEBHOOK_NOW, sendgridSoftBounces } from './provider-requests.js';

const iso = (ms: number) => new Date(ms).toISOString();
const DAY = 86_400_000;

/** A soft bounce as the rule's `events` and a `cause` show it. */
const bounceAt = (secondsBefore: number) => ({
  provider: 'sendgrid',
  message_id: expect.any(String),
  message: expect.stringMatching(/^[0-9a-f]{32}$/),
  event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
  event_at: iso(WEBHOOK_NOW - secondsBefore * 1000),
  diagnostic: expect.stringContaining('4.7.0'),
});

/** docs/http.md, "Suppression provenance": the soft-bounce rule's suppressions, made from provider webhooks. */
export function describeSoftBounceRuleTests(open: OpenApp): void {
  describe('the soft-bounce rule', () => {
    test('two soft bounces of distinct messages suppress (hard_bounce, the rule and its bounces shown); one message counts once; allowlisted or without the rule, never', async () => {
      const app = await open({ rules: { acme: { softBounces: { bounces: 2, days: 7 } } } });
      const { acme, globex } = app.projects;
      await app.api('POST', `/projects/${acme}/allowlist`, { json: { entry: 'seed@example.com' } });
      // Ana: m1 bounces twice (one message counts once), then m2. Seed: allowlisted.
      const bounces = [
        { recipient: 'ana@example.com', messageId: 'm1', secondsBefore: 300 },
        { recipient: 'ana@example.com', messageId: 'm1', secondsBefore: 200 },
        { recipient: 'ana@example.com', messageId: 'm2', secondsBefore: 100 },
        { recipient: 'seed@example.com', messageId: 'm3', secondsBefore: 300 },
        { recipient: 'seed@example.com', messageId: 'm4', secondsBefore: 100 },
      ];
      const first = await app.webhook('sendgrid', acme, sendgridSoftBounces(app.secrets.acme, bounces.slice(0, 2)));
      expect(expectSuccess(first, 200, applyEventsResultSchema)).toMatchObject({ accepted: 2 });
      expect(expectSuccess(await app.api('GET', `/projects/${acme}/suppressions`), 200, listSuppressionsResponseSchema).count).toBe(0);
      await app.webhook('sendgrid', acme, sendgridSoftBounces(app.secrets.acme, bounces.slice(2)));

      const page = expectSuccess(await app.api('GET', `/projects/${acme}/suppressions`), 200, listSuppressionsResponseSchema);
      const made = WEBHOOK_NOW - 100_000;
      expect(page.items).toEqual([
        {
          hash: expect.any(String),
          email: 'ana@example.com',
          reason: 'hard_bounce',
          created_at: iso(made),
          source: 'webhook',
          cause: bounceAt(100),
          // The rule's suppressions expire after 30 days unless configured otherwise.
          expires_at: iso(made + 30 * DAY),
          rule: { bounces: 2, days: 7, reset_on_delivery: false, events: [bounceAt(300), bounceAt(100)] },
        },
      ]);
      const [item] = page.items;
      expect(item!.rule!.events[1]).toEqual(item!.cause);
      expect(item!.rule!.events[0]!.message).not.toBe(item!.cause!.message);
      const check = await app.api('GET', `/projects/${acme}/suppressions/check?email=ana%40example.com`);
      const { hash: _hash, ...shown } = item!;
      expect(expectSuccess(check, 200, checkSuppressionResponseSchema)).toEqual({ ...shown, suppressed: true });
      expect(shown.created_at).toMatch(TIMESTAMP);

      // A project without the rule: the same bounces suppress nothing.
      await app.webhook('sendgrid', globex, sendgridSoftBounces(app.secrets.globex, bounces));
      const globexPage = await app.api('GET', `/projects/${globex}/suppressions`, { key: 'globex' });
      expect(expectSuccess(globexPage, 200, listSuppressionsResponseSchema).count).toBe(0);
    });
  });
}
