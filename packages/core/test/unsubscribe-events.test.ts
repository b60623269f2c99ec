// A provider's unsubscribe event suppresses its recipient in the message's stream (docs/decisions.md,
// "Who suppresses on an unsubscribe"): for each provider, a signed webhook built by the testing kit for
// a message sent with stream `marketing` blocks mail of `marketing` and nothing else; without a stream
// it goes to the project's default stream, else project-wide; the provider's own scope (a SendGrid
// group, an SES topic, a Postmark message stream) names the stream. Always reason `manual`, source
// `unsubscribe`, the event its cause.
import { createMailwarden, providers, type Mailwarden, type MailwardenOptions, type Provider, type ProviderAuth } from '@mailwarden/core';
import { createPostalKeyPair, createSendGridKeyPair, fetchTestSnsCertificate, webhooksFor, type TestEvent } from '@mailwarden/core/testing';
import { describe, expect, it, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const sendGridKeys = createSendGridKeyPair();
const postalKeys = createPostalKeyPair();
const auth = {
  ses: { topicArns: ['arn:aws:sns:us-east-1:123456789012:ses-events'] },
  sendgrid: { publicKey: sendGridKeys.publicKey, unsubscribeGroups: { '42': 'product-updates' } },
  mailgun: { signingKey: 'mailgun-signing-key' },
  sparkpost: { basic: [{ username: 'sparkpost', password: 'sparkpost-secret' }] },
  postmark: { headers: [{ name: 'X-Webhook-Secret', value: 'postmark-secret' }] },
  mandrill: { webhookKey: 'mandrill-key', url: 'https://mail.example.com/projects/acme/webhooks/mandrill' },
  resend: { signingSecret: 'whsec_cmVzZW5kLXNpZ25pbmctc2VjcmV0' },
  brevo: { basic: [{ username: 'brevo', password: 'brevo-secret' }] },
  mailjet: { basic: [{ username: 'mailjet', password: 'mailjet-secret' }] },
  mailersend: { signingSecret: 'mailersend-signing-secret' },
  postal: { publicKey: postalKeys.publicKey },
  'ses-eventbridge': { headers: [{ name: 'x-api-key', value: 'eventbridge-secret' }] },
} satisfies Required<ProviderAuth>;

const AT = new Date('2026-11-20T10:00:00.000Z');
const EMAIL = 'ana@example.org';

function mailwardenWith(options: MailwardenOptions = {}): Mailwarden {
  return createMailwarden({
    webhooks: { auth: { acme: auth }, environment: { fetchCertificate: fetchTestSnsCertificate, now: () => AT.getTime() + 60_000 } },
    ...options,
  });
}

/** Posts `event` as `provider` posts it, signed for project `acme`; every event must be accepted. */
async function post(mailwarden: Mailwarden, provider: Provider, event: Partial<TestEvent>): Promise<void> {
  // Postmark's MessageStream would name the stream of a message without one: none here, unless given.
  const given: TestEvent = {
    type: 'unsubscribed',
    recipient: EMAIL,
    occurredAt: AT,
    ...(provider === 'postmark' ? { messageStream: null } : {}),
    ...event,
  };
  for (const request of webhooksFor(provider, auth[provider], [given], {
    sendGridPrivateKey: sendGridKeys.privateKey,
    postalPrivateKey: postalKeys.privateKey,
    signedAt: AT,
  })) {
    const result = await mailwarden.ingestWebhook(provider, 'acme', request);
    expect(result).toMatchObject({ accepted: 1, skipped: 0, warnings: [] });
  }
}

/** A check's answer for an unsubscribe recorded from `provider`'s event, in the list `stream` (`null`: project-wide). */
function unsubscribed(provider: Provider, stream: string | null | undefined) {
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

// Postal and Resend report no unsubscribes (docs/providers/postal.md#unsubscribes, docs/providers/resend.md#unsubscribes).
const unsubscribeProviders = providers.filter((provider) => provider !== 'postal' && provider !== 'resend');

describe.each(unsubscribeProviders)('%s: an unsubscribe event', (provider) => {
  it('for a message sent in marketing suppresses for marketing only', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, provider, { stream: 'marketing' });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(unsubscribed(provider, 'marketing'));
    expect(await mailwarden.suppressions.check('acme', EMAIL)).toStrictEqual(notSuppressed);
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'receipts' })).toStrictEqual(notSuppressed);
    const { allowed } = await mailwarden.filterSuppressed('acme', [EMAIL], { stream: 'receipts' });
    expect(allowed).toEqual([EMAIL]);
    const { items } = await mailwarden.suppressions.list('acme', { stream: 'marketing' });
    expect(items).toMatchObject([{ email: EMAIL, reason: 'manual', source: 'unsubscribe', stream: 'marketing' }]);
    expect((await mailwarden.suppressions.list('acme')).items).toEqual([]);
  });

  it('for a message without a stream, and no default stream, suppresses project-wide', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, provider, {});
    // Never dropped: the answer without a stream shows it, told apart from a manual add by its source.
    expect(await mailwarden.suppressions.check('acme', EMAIL)).toStrictEqual(unsubscribed(provider, undefined));
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(unsubscribed(provider, null));
  });

  it("for a message without a stream goes to the project's default stream", async () => {
    const mailwarden = mailwardenWith({ defaultStream: { acme: 'newsletter' } });
    await post(mailwarden, provider, {});
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'newsletter' })).toStrictEqual(
      unsubscribed(provider, 'newsletter'),
    );
    expect(await mailwarden.suppressions.check('acme', EMAIL)).toStrictEqual(notSuppressed);
  });

  it('carries its stream into the message it is recorded on', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, provider, { stream: 'marketing' });
    const { items } = await mailwarden.messages.list('acme', { stream: 'marketing' });
    expect(items).toMatchObject([{ recipient: EMAIL, stream: 'marketing' }]);
  });
});

describe("the provider's own scope names the stream", () => {
  it('SendGrid: a group mapped by unsubscribeGroups wins over the carried stream', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'sendgrid', { stream: 'marketing', unsubscribeGroup: 42 });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'product-updates' })).toStrictEqual(
      unsubscribed('sendgrid', 'product-updates'),
    );
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(notSuppressed);
  });

  it('SendGrid: an unmapped group leaves the carried stream, else the default', async () => {
    const mailwarden = mailwardenWith({ defaultStream: { acme: 'newsletter' } });
    await post(mailwarden, 'sendgrid', { stream: 'marketing', unsubscribeGroup: 7 });
    await post(mailwarden, 'sendgrid', { recipient: 'bo@example.org', unsubscribeGroup: 7 });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(
      unsubscribed('sendgrid', 'marketing'),
    );
    expect(await mailwarden.suppressions.check('acme', 'bo@example.org', { stream: 'newsletter' })).toMatchObject({ stream: 'newsletter' });
  });

  it('SES: the topic opted out of, when a stream name, wins over the carried stream', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'ses', { stream: 'marketing', topic: 'weekly-digest' });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'weekly-digest' })).toStrictEqual(
      unsubscribed('ses', 'weekly-digest'),
    );
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(notSuppressed);
  });

  it('SES: a topic that is no stream name leaves the carried stream', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'ses', { stream: 'marketing', topic: 'Weekly Digest' });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(unsubscribed('ses', 'marketing'));
  });

  it("Postmark: the MessageStream, when the message carried no stream, before the project's default", async () => {
    const mailwarden = mailwardenWith({ defaultStream: { acme: 'newsletter' } });
    await post(mailwarden, 'postmark', { messageStream: 'broadcast' });
    await post(mailwarden, 'postmark', { recipient: 'bo@example.org', stream: 'marketing', messageStream: 'broadcast' });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'broadcast' })).toStrictEqual(
      unsubscribed('postmark', 'broadcast'),
    );
    expect(await mailwarden.suppressions.check('acme', 'bo@example.org', { stream: 'marketing' })).toMatchObject({ stream: 'marketing' });
  });

  it('Postmark: a re-subscribe (SuppressSending false) suppresses nothing and lifts nothing', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'postmark', { stream: 'marketing' });
    const resubscribe = JSON.stringify({
      RecordType: 'SubscriptionChange',
      MessageID: 'c7f1f3b2-6e7d-4b1f-8c1a-9b3c2d4e5f60',
      ServerID: 23,
      MessageStream: 'broadcast',
      ChangedAt: '2026-11-21T10:00:00Z',
      Recipient: EMAIL,
      Origin: 'Recipient',
      SuppressSending: false,
      SuppressionReason: null,
      Tag: '',
      Metadata: { service_stream: 'marketing' },
    });
    const request = {
      method: 'POST',
      headers: { 'x-webhook-secret': 'postmark-secret', 'content-type': 'application/json' },
      rawBody: Buffer.from(resubscribe),
    };
    await mailwarden.ingestWebhook('postmark', 'acme', request);
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(
      unsubscribed('postmark', 'marketing'),
    );
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'broadcast' })).toStrictEqual(notSuppressed);
  });
});

describe('the project-wide list and an unsubscribe', () => {
  it('a bounce stays project-wide and answers a check in the stream first', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'mailgun', { stream: 'marketing' });
    await post(mailwarden, 'mailgun', {
      type: 'bounced',
      bounceClass: 'hard',
      stream: 'marketing',
      occurredAt: new Date(AT.getTime() + 1000),
    });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toMatchObject({
      reason: 'hard_bounce',
      source: 'webhook',
      stream: null,
    });
    // The stream's entry is still there, its own.
    expect((await mailwarden.suppressions.list('acme', { stream: 'marketing' })).items).toMatchObject([{ source: 'unsubscribe' }]);
  });

  it('a second unsubscribe of the same address and stream changes nothing but is accepted', async () => {
    const mailwarden = mailwardenWith();
    await post(mailwarden, 'sparkpost', { stream: 'marketing' });
    await post(mailwarden, 'sparkpost', { stream: 'marketing', occurredAt: new Date(AT.getTime() + 60_000) });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(
      unsubscribed('sparkpost', 'marketing'),
    );
  });
});

test('the suppressed hook names the stream and the source', async () => {
  const notices: unknown[] = [];
  const mailwarden = mailwardenWith({ on: { suppressed: (notice) => void notices.push(notice) } });
  await post(mailwarden, 'mandrill', { stream: 'marketing' });
  await mailwarden.hooksSettled();
  expect(notices).toMatchObject([{ projectId: 'acme', email: EMAIL, reason: 'manual', source: 'unsubscribe', stream: 'marketing' }]);
});

describe('defaultStream', () => {
  it('takes a lookup', async () => {
    const mailwarden = mailwardenWith({ defaultStream: (projectId) => (projectId === 'acme' ? 'newsletter' : undefined) });
    await post(mailwarden, 'sparkpost', {});
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'newsletter' })).toMatchObject({
      suppressed: true,
      stream: 'newsletter',
    });
  });

  it('refuses a name that is no stream name: a map when created, a lookup when it answers', async () => {
    await expectMailwardenError(() => createMailwarden({ defaultStream: { acme: 'Marketing' } }), 'invalid_stream');
    const mailwarden = mailwardenWith({ defaultStream: () => '' });
    await expectMailwardenError(() => post(mailwarden, 'sparkpost', {}), 'invalid_stream');
    expect(await mailwarden.suppressions.check('acme', EMAIL)).toStrictEqual(notSuppressed);
  });

  it('an event whose stream is invalid falls back to it, with the warning', async () => {
    const mailwarden = mailwardenWith({ defaultStream: { acme: 'newsletter' } });
    const result = await mailwarden.applyEvents('acme', [
      {
        provider: 'mailgun',
        type: 'unsubscribed',
        eventKey: 'e-1',
        messageId: 'm-1',
        recipient: EMAIL,
        trackingId: null,
        stream: 'Not A Stream',
        occurredAt: AT,
      },
    ]);
    expect(result.warnings).toMatchObject([{ code: 'invalid_stream' }]);
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'newsletter' })).toMatchObject({
      suppressed: true,
      stream: 'newsletter',
    });
  });
});

describe('a policy of its own', () => {
  it('may keep unsubscribes from suppressing', async () => {
    const mailwarden = mailwardenWith({ policy: (event) => (event.type === 'unsubscribed' ? null : 'hard_bounce') });
    await post(mailwarden, 'mailgun', { stream: 'marketing' });
    expect(await mailwarden.suppressions.check('acme', EMAIL, { stream: 'marketing' })).toStrictEqual(notSuppressed);
  });

  it("sees the event's stream as kept", async () => {
    const seen: unknown[] = [];
    const mailwarden = mailwardenWith({
      policy: (event) => {
        seen.push(event.stream);
        return null;
      },
    });
    await post(mailwarden, 'mailgun', { stream: 'marketing' });
    expect(seen).toEqual(['marketing']);
  });
});
