import { MAILERSEND_TEST_SECRET, routeProvider, webhookRoutes, type Message } from '@mailwarden/core';
import { applyEventsResultSchema, listMessagesResponseSchema } from '@mailwarden/core/schemas';
import { mailerSendPing, mailerSendWebhook } from '@mailwarden/core/testing';
import { describe, expect, test } from 'vitest';
import { TIMESTAMP, expectEmpty, expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sesSubscriptionConfirmation, sparkpostDeliveries, webhookCases, type WebhookCase } from './provider-requests.js';
import type { TestApp } from './test-app.js';

/** What a project holds, read over HTTP with the admin key. */
async function storedMessages(app: TestApp, projectId: string): Promise<Message[]> {
  return expectSuccess(await app.api('GET', `/projects/${projectId}/messages?limit=100`, { key: 'admin' }), 200, listMessagesResponseSchema)
    .items;
}

async function expectLanded(app: TestApp, projectId: string, c: WebhookCase): Promise<void> {
  const messages = await storedMessages(app, projectId);
  expect(messages.map((message) => `${message.recipient} ${message.status}`).sort()).toEqual(c.messages);
  expect(new Set(messages.map((message) => message.trackingId))).toEqual(new Set([TRACKING_ID]));
  for (const recipient of c.recipients) {
    const check = expectSuccess(
      await app.api('GET', `/projects/${projectId}/suppressions/check?${new URLSearchParams({ email: recipient })}`, { key: 'admin' }),
      200,
    );
    const reason = c.suppressions[recipient.toLowerCase()];
    expect(check).toEqual(
      reason === undefined
        ? { email: recipient, suppressed: false }
        : {
            email: recipient,
            suppressed: true,
            reason,
            created_at: expect.stringMatching(TIMESTAMP),
            // Provenance: the provider's event that suppressed the address.
            source: 'webhook',
            cause: {
              provider: routeProvider(c.provider),
              message_id: expect.any(String),
              // Opens the message that carried the event.
              message: expect.stringMatching(/^[0-9a-f]{32}$/),
              event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
              event_at: expect.stringMatching(TIMESTAMP),
              // What the provider said: the SMTP reply or the feedback type; a SendGrid spam report carries neither.
              diagnostic: reason === 'complaint' && c.provider === 'sendgrid' ? null : expect.any(String),
            },
          },
    );
  }
}

const wwwAuthenticate = 'Basic realm="mailwarden webhooks", charset="UTF-8"';

export function describeWebhookTests(open: OpenApp): void {
  describe('webhooks', () => {
    describe.each(webhookCases)('$provider', (c) => {
      const events = c.messages.length;

      test('a signed request is stored (200); the same request again is 200 with every event a duplicate', async () => {
        const app = await open();
        const request = c.request(app.secrets.acme);
        const first = await app.webhook(c.provider, app.projects.acme, request);
        expect(expectSuccess(first, 200, applyEventsResultSchema)).toEqual({ accepted: events, duplicates: 0, skipped: 0, warnings: [] });
        const again = await app.webhook(c.provider, app.projects.acme, request);
        expect(expectSuccess(again, 200, applyEventsResultSchema)).toEqual({ accepted: 0, duplicates: events, skipped: 0, warnings: [] });
        await expectLanded(app, app.projects.acme, c);
        expect(await storedMessages(app, app.projects.globex)).toEqual([]);
      });

      test(`refusals store nothing: forged 401${c.basicAuth ? ' (inviting basic auth)' : ''}, another project's 401, not JSON 400; HEAD is 200`, async () => {
        const app = await open();
        const { acme, globex } = app.projects;
        const forged = await app.webhook(c.provider, acme, c.forged(app.secrets.acme));
        expectError(forged, 401, 'webhook_unauthorized');
        expect(forged.headers.get('www-authenticate')).toBe(c.basicAuth ? wwwAuthenticate : null);
        // An API key, even the admin one, is no substitute for the provider's authentication.
        const request = c.forged(app.secrets.acme);
        expectError(
          await app.webhook(c.provider, acme, { ...request, headers: { ...request.headers, 'x-api-key': 'key-admin' } }),
          401,
          'webhook_unauthorized',
        );
        // Authenticated for acme, posted to globex.
        expectError(await app.webhook(c.provider, globex, c.request(app.secrets.acme)), 401, 'webhook_unauthorized');
        expectError(await app.webhook(c.provider, acme, c.notJson(app.secrets.acme)), 400, 'invalid_payload');
        expect(await storedMessages(app, acme)).toEqual([]);
        expect(await storedMessages(app, globex)).toEqual([]);
        // The probe Mandrill makes before it posts; every provider's URL answers it.
        expectEmpty(await app.request(`/projects/${acme}/webhooks/${c.provider}`, { method: 'HEAD' }), 200);
      });
    });

    test('a percent-encoded provider or project segment is the same webhook: same answers, WWW-Authenticate included', async () => {
      const app = await open();
      const ses = webhookCases.find((c) => c.provider === 'ses')!;
      const encodedProject = [...app.projects.acme].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');
      for (const [project, provider] of [
        [encodedProject, 'ses'],
        [app.projects.acme, 'se%73'],
        [app.projects.acme, 'ses/'],
      ] as const) {
        const answer = await app.webhook(provider, project, ses.forged(app.secrets.acme));
        expectError(answer, 401, 'webhook_unauthorized');
        expect({ project, provider, header: answer.headers.get('www-authenticate') }).toEqual({
          project,
          provider,
          header: wwwAuthenticate,
        });
      }
      const stored = await app.webhook('se%73', encodedProject, ses.request(app.secrets.acme));
      expect(expectSuccess(stored, 200, applyEventsResultSchema)).toMatchObject({ accepted: ses.messages.length });
    });

    test('an event with text no store can keep (a lone surrogate) is skipped with a warning; the rest of the webhook is stored (200)', async () => {
      const app = await open();
      const request = sparkpostDeliveries(app.secrets.acme, ['ok@example.com', 'poison@example.com'], TRACKING_ID);
      const batch = JSON.parse(Buffer.from(request.rawBody).toString()) as {
        msys: { message_event: { rcpt_to: string; transmission_id: string } };
      }[];
      const poisoned = batch.find((entry) => entry.msys.message_event.rcpt_to === 'poison@example.com')!;
      poisoned.msys.message_event.transmission_id = 'm\ud800x';
      const rawBody = new TextEncoder().encode(JSON.stringify(batch));
      expect(Buffer.from(rawBody).toString()).toContain('"m\\ud800x"');
      for (const attempt of ['first', 'retry']) {
        const answer = expectSuccess(
          await app.webhook('sparkpost', app.projects.acme, { ...request, rawBody }),
          200,
          applyEventsResultSchema,
        );
        expect({ attempt, ...answer, warnings: answer.warnings.map((warning) => warning.code) }).toEqual({
          attempt,
          accepted: attempt === 'first' ? 1 : 0,
          duplicates: attempt === 'first' ? 0 : 1,
          skipped: 1,
          warnings: ['invalid_event'],
        });
      }
      expect((await storedMessages(app, app.projects.acme)).map((message) => message.recipient)).toEqual(['ok@example.com']);
    });

    test('an unknown provider is 404 not_found, for POST and HEAD', async () => {
      const app = await open();
      const request = webhookCases[0]!.request(app.secrets.acme);
      for (const name of ['smtp2go', 'SES', 'constructor', '__proto__', 'toString']) {
        expectError(await app.webhook(name, app.projects.acme, request), 404, 'not_found');
        expectEmpty(await app.request(`/projects/${app.projects.acme}/webhooks/${name}`, { method: 'HEAD' }), 404);
      }
      expect(webhookRoutes).toEqual(webhookCases.map((c) => c.provider));
    });

    test('an SNS subscription confirmation for an allowlisted topic is confirmed once and stores nothing', async () => {
      const app = await open();
      const request = sesSubscriptionConfirmation(app.secrets.acme);
      const answer = await app.webhook('ses', app.projects.acme, request);
      expect(expectSuccess(answer, 200, applyEventsResultSchema)).toEqual({
        accepted: 0,
        duplicates: 0,
        skipped: 0,
        warnings: [],
        notice: 'subscription_confirmed',
      });
      expect(app.environment.confirmedSubscriptions).toHaveLength(1);
      // Another project does not allowlist acme's topic.
      expectError(await app.webhook('ses', app.projects.globex, request), 401, 'webhook_unauthorized');
      expect(app.environment.confirmedSubscriptions).toHaveLength(1);
    });

    test('MailerSend’s webhook.test ping, signed with its public test secret, is 200 and stores nothing; another body so signed is 401', async () => {
      const app = await open();
      const answer = await app.webhook('mailersend', app.projects.acme, mailerSendPing());
      expect(expectSuccess(answer, 200, applyEventsResultSchema)).toEqual({
        accepted: 0,
        duplicates: 0,
        skipped: 0,
        warnings: [],
        notice: 'ping',
      });
      const events = [{ type: 'bounced' as const, recipient: 'eve@example.com' }];
      const forged = mailerSendWebhook({ events, signingSecret: MAILERSEND_TEST_SECRET });
      expectError(await app.webhook('mailersend', app.projects.acme, forged), 401, 'webhook_unauthorized');
      expect(await storedMessages(app, app.projects.acme)).toEqual([]);
    });

    test('a hard bounce suppresses its recipient: the check and the list show it', async () => {
      const app = await open();
      const postmark = webhookCases.find((c) => c.provider === 'postmark')!;
      expectSuccess(await app.webhook('postmark', app.projects.acme, postmark.request(app.secrets.acme)), 200);
      const list = expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/suppressions`), 200) as {
        items: { email: string; reason: string }[];
      };
      expect(list.items.map(({ email, reason }) => ({ email, reason }))).toEqual([{ email: 'quinn@example.com', reason: 'hard_bounce' }]);
      // A manual add afterwards keeps the stronger, earlier record: 200, unchanged, provenance and all.
      const again = expectSuccess(
        await app.api('POST', `/projects/${app.projects.acme}/suppressions`, { json: { email: 'Quinn@Example.com' } }),
        200,
      );
      expect(again).toMatchObject({
        email: 'quinn@example.com',
        reason: 'hard_bounce',
        source: 'webhook',
        cause: { provider: 'postmark' },
      });
      expect(list.items[0]).toEqual(again);
    });
  });
}
