import { providers, type Provider, type Suppression, type WebhookRoute } from '@mailwarden/core';
import { applyEventsResultSchema, checkSuppressionResponseSchema, listSuppressionsResponseSchema } from '@mailwarden/core/schemas';
import { webhooksFor, type TestEvent } from '@mailwarden/core/testing';
import { describe, expect, test } from 'vitest';
import { expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { WEBHOOK_NOW, providerAuthOf, type ProviderSecrets } from './provider-requests.js';
import type { TestApp } from './test-app.js';

// docs/decisions.md, "Who suppresses on an unsubscribe": a provider's unsubscribe event suppresses its
// recipient in the message's stream (reason `manual`, source `unsubscribe`); without a stream, and with
// no default stream configured, project-wide. The provider's own scope (a SendGrid group the project
// maps, an SES topic, a Postmark message stream) names the stream. Checked through the binding and the
// store under test, from the requests each provider would post.

const EMAIL = 'ana@example.org';
const AT = new Date(WEBHOOK_NOW - 30_000);

/** Posts one unsubscribe event of `provider` to acme, built and signed by the testing kit; expects it stored. */
async function postUnsubscribe(app: TestApp, provider: WebhookRoute, event: Partial<TestEvent> = {}): Promise<void> {
  const secrets: ProviderSecrets = app.secrets.acme;
  const auth = providerAuthOf(secrets);
  // Postmark's MessageStream names the stream of a message that carried none: none unless a test gives one.
  const given: TestEvent = {
    type: 'unsubscribed',
    recipient: EMAIL,
    occurredAt: AT,
    ...(provider === 'postmark' ? { messageStream: null } : {}),
    ...event,
  };
  const requests = webhooksFor(provider, auth[provider]!, [given], {
    sendGridPrivateKey: secrets.sendgridKey,
    signedAt: new Date(WEBHOOK_NOW),
  });
  for (const request of requests) {
    const answer = await app.webhook(provider, app.projects.acme, request);
    expect(expectSuccess(answer, 200, applyEventsResultSchema)).toEqual({ accepted: 1, duplicates: 0, skipped: 0, warnings: [] });
  }
}

async function check(app: TestApp, stream?: string): Promise<unknown> {
  const query = new URLSearchParams({ email: EMAIL, ...(stream === undefined ? {} : { stream }) });
  return expectSuccess(
    await app.api('GET', `/projects/${app.projects.acme}/suppressions/check?${query}`),
    200,
    checkSuppressionResponseSchema,
  );
}

async function list(app: TestApp, stream?: string): Promise<Suppression[]> {
  const query = stream === undefined ? '' : `?${new URLSearchParams({ stream })}`;
  return expectSuccess(await app.api('GET', `/projects/${app.projects.acme}/suppressions${query}`), 200, listSuppressionsResponseSchema)
    .items;
}

/** A check's answer for an unsubscribe from `provider`, held by `stream` (`null`: the project-wide list; absent: asked without a stream). */
function unsubscribed(provider: Provider, stream?: string | null) {
  return {
    email: EMAIL,
    suppressed: true,
    reason: 'manual',
    created_at: AT.toISOString(),
    source: 'unsubscribe',
    cause: expect.objectContaining({ provider, event_at: AT.toISOString() }),
    ...(stream === undefined ? {} : { stream }),
  };
}

const notSuppressed = { email: EMAIL, suppressed: false };

export function describeUnsubscribeEventTests(open: OpenApp): void {
  describe('provider unsubscribes', () => {
    // Postal and Resend report no unsubscribes (docs/providers/postal.md#unsubscribes, docs/providers/resend.md#unsubscribes).
    describe.each(providers.filter((provider) => provider !== 'postal' && provider !== 'resend'))('%s', (provider) => {
      test('for a message sent in marketing: suppressed for marketing, not without a stream', async () => {
        const app = await open();
        await postUnsubscribe(app, provider, { stream: 'marketing' });
        expect(await check(app, 'marketing')).toEqual(unsubscribed(provider, 'marketing'));
        expect(await check(app)).toStrictEqual(notSuppressed);
        expect(await check(app, 'receipts')).toStrictEqual(notSuppressed);
        expect(await list(app, 'marketing')).toMatchObject([
          { email: EMAIL, reason: 'manual', source: 'unsubscribe', stream: 'marketing' },
        ]);
        expect(await list(app)).toEqual([]);
      });

      test('for a message without a stream, nothing configured: project-wide, told apart by its source', async () => {
        const app = await open();
        await postUnsubscribe(app, provider);
        expect(await check(app)).toEqual(unsubscribed(provider));
        expect(await check(app, 'marketing')).toEqual(unsubscribed(provider, null));
      });
    });

    test("SendGrid: an unsubscribe group the project maps names the stream, over the message's", async () => {
      const app = await open();
      await postUnsubscribe(app, 'sendgrid', { stream: 'marketing', unsubscribeGroup: 42 });
      expect(await check(app, 'product-updates')).toEqual(unsubscribed('sendgrid', 'product-updates'));
      expect(await check(app, 'marketing')).toStrictEqual(notSuppressed);
    });

    test("SES: the topic opted out of names the stream, over the message's", async () => {
      const app = await open();
      await postUnsubscribe(app, 'ses', { stream: 'marketing', topic: 'weekly-digest' });
      expect(await check(app, 'weekly-digest')).toEqual(unsubscribed('ses', 'weekly-digest'));
      expect(await check(app, 'marketing')).toStrictEqual(notSuppressed);
    });

    test("SES through EventBridge (route ses-eventbridge): the message's stream, or the topic opted out of; the events are ses's", async () => {
      const app = await open();
      await postUnsubscribe(app, 'ses-eventbridge', { stream: 'marketing' });
      expect(await check(app, 'marketing')).toEqual(unsubscribed('ses', 'marketing'));
      await postUnsubscribe(app, 'ses-eventbridge', { stream: 'marketing', topic: 'weekly-digest' });
      expect(await check(app, 'weekly-digest')).toEqual(unsubscribed('ses', 'weekly-digest'));
      expect(await check(app)).toStrictEqual(notSuppressed);
    });

    test('Postmark: the MessageStream names the stream of a message that carried none', async () => {
      const app = await open();
      await postUnsubscribe(app, 'postmark', { messageStream: 'broadcast' });
      expect(await check(app, 'broadcast')).toEqual(unsubscribed('postmark', 'broadcast'));
      expect(await check(app)).toStrictEqual(notSuppressed);
    });
  });
}
