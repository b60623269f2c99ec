import { changeKinds } from '@mailwarden/core';
import { endpointStatusListSchema, endpointStatusSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Never reachable (the discard port), and never requested: the host's delivery timers do not fire. */
const crm = {
  id: 'crm',
  url: 'http://127.0.0.1:9/hooks/mailwarden?token=secret',
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  kinds: ['suppression'],
};
const audit = { id: 'audit', url: 'https://audit.example.com/in', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] };

/** docs/http.md, "Outbound webhooks": the configured endpoints, where each stands, and resuming one. */
export function describeOutboundWebhookTests(open: OpenApp): void {
  describe('outbound webhooks', () => {
    test('the list shows each configured endpoint at the end of the feed; a paused one is resumed from its cursor', async () => {
      const app = await open({ outbound: { acme: [crm, audit] } });
      const { acme, globex } = app.projects;
      expectSuccess(await app.api('POST', `/projects/${acme}/suppressions`, { json: { email: 'ana@example.com' } }), 201);
      const delivering = {
        state: 'delivering',
        cursor: 1,
        latest: 1,
        lag: 0,
        failures: 0,
        failing_since: null,
        next_attempt_at: null,
        paused_at: null,
        last_error: null,
        last_success_at: null,
      };
      const suppressionKinds = changeKinds.filter((kind) => kind.startsWith('suppression.'));
      const list = async () =>
        expectSuccess(await app.api('GET', `/projects/${acme}/outbound-webhooks`), 200, endpointStatusListSchema).items;
      // The URL without its query, which may carry the receiver's token; the secrets never.
      expect(await list()).toEqual([
        { id: 'crm', url: 'http://127.0.0.1:9/hooks/mailwarden?…', kinds: suppressionKinds, ...delivering },
        { id: 'audit', url: 'https://audit.example.com/in', kinds: null, ...delivering },
      ]);
      const other = await app.api('GET', `/projects/${globex}/outbound-webhooks`, { key: 'globex' });
      expect(expectSuccess(other, 200, endpointStatusListSchema)).toEqual({ items: [] });

      // Failing too long, as the engine would leave it; then the lease is given up.
      const now = app.clock.advance(60_000);
      expect(await app.store.leaseOutbound(acme, 'crm', 'test', now, now + 1000)).toMatchObject({ cursor: 1 });
      const progress = {
        cursor: 1,
        failures: 8,
        failingSince: CLOCK_START,
        nextAttemptAt: 0,
        pausedAt: now,
        lastError: 'HTTP 503',
        lastSuccessAt: null,
      };
      expect(await app.store.saveOutbound(acme, 'crm', 'test', progress, now)).toBe(true);
      const [paused] = await list();
      expect(paused).toMatchObject({
        state: 'paused',
        cursor: 1,
        failures: 8,
        failing_since: iso(CLOCK_START),
        paused_at: iso(now),
        last_error: 'HTTP 503',
      });

      // The feed now holds endpoint.paused and endpoint.resumed too; the resumed endpoint looks at once
      // (none is of its kinds, so nothing is sent) and may have moved its cursor past them meanwhile.
      const running = { state: 'delivering', failures: 0, failing_since: null, next_attempt_at: null, paused_at: null, last_error: null };
      // (The resume's `latest` is read beside the resume itself, so it may not count endpoint.resumed yet.)
      const resumed = await app.api('POST', `/projects/${acme}/outbound-webhooks/crm/resume`);
      expect(expectSuccess(resumed, 200, endpointStatusSchema)).toMatchObject({ id: 'crm', ...running });
      // Resuming one that delivers answers it as it is.
      const again = await app.api('POST', `/projects/${acme}/outbound-webhooks/crm/resume`);
      expect(expectSuccess(again, 200, endpointStatusSchema)).toMatchObject({ id: 'crm', latest: 3, ...running });
      expect((await list())[0]).toMatchObject({ id: 'crm', latest: 3, ...running });
    });

    test('refusals: endpoint_not_found for an id not configured, 405, the project key', async () => {
      const app = await open({ outbound: { acme: [crm] } });
      const { acme, globex } = app.projects;
      for (const id of ['nope', 'CRM', 'audit']) {
        expectError(await app.api('POST', `/projects/${acme}/outbound-webhooks/${id}/resume`), 404, 'endpoint_not_found');
      }
      expectError(await app.api('POST', `/projects/${globex}/outbound-webhooks/crm/resume`, { key: 'globex' }), 404, 'endpoint_not_found');
      expectError(await app.api('GET', `/projects/${acme}/outbound-webhooks/crm/resume`), 405, 'method_not_allowed');
      expectError(await app.api('POST', `/projects/${acme}/outbound-webhooks`), 405, 'method_not_allowed');
      expectError(await app.api('GET', `/projects/${acme}/outbound-webhooks`, { key: 'globex' }), 403, 'forbidden');
      expectError(await app.api('POST', `/projects/${acme}/outbound-webhooks/crm/resume`, { key: null }), 401, 'missing_api_key');
    });

    test('without endpoints configured, the list is empty and every id is endpoint_not_found', async () => {
      const app = await open();
      const { acme } = app.projects;
      expect(expectSuccess(await app.api('GET', `/projects/${acme}/outbound-webhooks`), 200, endpointStatusListSchema)).toEqual({
        items: [],
      });
      expectError(await app.api('POST', `/projects/${acme}/outbound-webhooks/crm/resume`), 404, 'endpoint_not_found');
    });
  });
}
