// The testing kit (`@mailwarden/core/testing`) as an application's tests use it: for each provider, the
// requests it builds are accepted by `createWebhookIngest` configured with the matching secrets, and the
// events stored are exactly the events the kit says it reported; a tampered or wrongly signed request
// is refused. The kit itself uses no test runner and reads no file.
import { readdirSync, readFileSync } from 'node:fs';
import { createWebhookIngest, type DeliveryEvent, type Provider, type ProviderAuth } from '@mailwarden/core';
import {
  createPostalKeyPair,
  createSendGridKeyPair,
  fetchSnsCertificateTrustingTestSigner,
  fetchTestSnsCertificate,
  mailgunWebhook,
  mailjetWebhook,
  mailerSendWebhook,
  mandrillWebhook,
  brevoWebhook,
  postalWebhook,
  postmarkWebhook,
  resendWebhook,
  sendGridWebhook,
  sesWebhook,
  snsSubscriptionConfirmation,
  sparkPostWebhook,
  testSnsSigner,
  webhooksFor,
  type ReportedEvent,
  type TestEvent,
  type TestWebhook,
} from '@mailwarden/core/testing';
import { describe, expect, it } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const sendGridKeys = createSendGridKeyPair();
const postalKeys = createPostalKeyPair();
const topicArn = 'arn:aws:sns:eu-west-1:123456789012:ses-events';
const auth = {
  ses: { topicArns: [topicArn] },
  sendgrid: { publicKey: sendGridKeys.publicKey },
  mailgun: { signingKey: 'mailgun-signing-key' },
  sparkpost: { basic: [{ username: 'sparkpost', password: 'sparkpost-secret' }] },
  postmark: { headers: [{ name: 'X-Webhook-Secret', value: 'postmark-secret' }] },
  mandrill: { webhookKey: 'mandrill-key', url: 'https://mail.example.com/projects/acme/webhooks/mandrill' },
  resend: { signingSecret: ['whsec_cmVzZW5kLW9sZC1zZWNyZXQ=', 'whsec_cmVzZW5kLXNpZ25pbmctc2VjcmV0'] },
  brevo: { bearer: ['brevo-token'] },
  mailjet: { basic: [{ username: 'mailjet', password: 'mailjet-secret' }] },
  mailersend: { signingSecret: 'mailersend-signing-secret' },
  postal: { publicKey: postalKeys.publicKey },
  'ses-eventbridge': { headers: [{ name: 'x-api-key', value: 'eventbridge-secret' }] },
} satisfies Required<ProviderAuth>;

/** createWebhookIngest for project `acme`, storing into a list instead of a store: what it would store. */
function intake(projectAuth: ProviderAuth = auth) {
  const stored: DeliveryEvent[] = [];
  const confirmed: string[] = [];
  const ingest = createWebhookIngest(
    async (_projectId, events) => {
      stored.push(...events);
      return { accepted: events.length, duplicates: 0, skipped: 0, warnings: [] };
    },
    {
      auth: { acme: projectAuth },
      environment: { fetchCertificate: fetchTestSnsCertificate, confirmSubscription: async (url) => void confirmed.push(url) },
    },
  );
  return { ingest, stored, confirmed };
}

/** What a stored event says that a test can state: the kit's `ReportedEvent` fields. */
function reported(event: DeliveryEvent): ReportedEvent {
  return {
    provider: event.provider,
    type: event.type as ReportedEvent['type'],
    bounceClass: event.bounceClass === 'hard' || event.bounceClass === 'soft' ? event.bounceClass : null,
    recipient: event.recipient,
    messageId: event.messageId!,
    trackingId: event.trackingId,
    // A Postmark unsubscribe reports its message stream: the kit says so too.
    ...(event.stream == null ? {} : { stream: event.stream }),
    occurredAt: event.occurredAt,
  };
}

const at = new Date('2026-04-01T09:00:00.250Z');
const spring = 'Frühling 🌷 2026';
const recipients = (type: TestEvent['type'], trackingId: string | null = spring): TestEvent[] => [
  { type, recipient: 'Ana@Example.org', trackingId, occurredAt: at },
  { type, recipient: 'bo@example.org', trackingId, occurredAt: at },
];

/** One signed request per provider, for events the provider reports in one request. */
const builders: { [P in Provider]: (events: readonly TestEvent[]) => TestWebhook } = {
  ses: (events) => sesWebhook({ events, topicArn }),
  sendgrid: (events) => sendGridWebhook({ events, privateKey: sendGridKeys.privateKey }),
  mailgun: (events) => mailgunWebhook({ events, signingKey: auth.mailgun.signingKey }),
  sparkpost: (events) => sparkPostWebhook({ events, auth: { basic: auth.sparkpost.basic[0] } }),
  postmark: (events) => postmarkWebhook({ events, auth: { headers: { 'X-Webhook-Secret': 'postmark-secret' } } }),
  mandrill: (events) => mandrillWebhook({ events, webhookKey: auth.mandrill.webhookKey, url: auth.mandrill.url }),
  resend: (events) => resendWebhook({ events, signingSecret: auth.resend.signingSecret[1]! }),
  brevo: (events) => brevoWebhook({ events, auth: { bearer: 'brevo-token' } }),
  mailjet: (events) => mailjetWebhook({ events, auth: { basic: auth.mailjet.basic[0] } }),
  mailersend: (events) => mailerSendWebhook({ events, signingSecret: auth.mailersend.signingSecret }),
  postal: (events) => postalWebhook({ events, privateKey: postalKeys.privateKey }),
};
const oneEventPerRequest = new Set<Provider>(['mailgun', 'postmark', 'resend', 'mailersend', 'postal']);

/** What each provider can report: Postmark posts nothing for a send, Mailgun knows no soft bounce. */
const cases: { type: TestEvent['type']; bounceClass?: 'hard' | 'soft' }[] = [
  { type: 'sent' },
  { type: 'delivered' },
  { type: 'deferred' },
  { type: 'bounced', bounceClass: 'hard' },
  { type: 'bounced', bounceClass: 'soft' },
  { type: 'complained' },
  { type: 'rejected' },
  { type: 'opened' },
  { type: 'clicked' },
  { type: 'unsubscribed' },
];
const unsupported = (provider: Provider, type: TestEvent['type'], bounceClass?: string): boolean =>
  (provider === 'postmark' && type === 'sent') ||
  (provider === 'mailjet' && type === 'sent') ||
  (provider === 'mailgun' && bounceClass === 'soft') ||
  (provider === 'resend' && type === 'unsubscribed') ||
  (provider === 'postal' && ['sent', 'complained', 'unsubscribed'].includes(type));

describe.each(Object.keys(builders) as Provider[])('%s: the kit’s requests round-trip through createWebhookIngest', (provider) => {
  it.each(cases)('$type $bounceClass: the events stored are the events reported', async ({ type, bounceClass }) => {
    const events = recipients(type).map((event) => ({ ...event, bounceClass }));
    const batch = oneEventPerRequest.has(provider) ? [events.slice(0, 1)] : [events];
    if (unsupported(provider, type, bounceClass)) {
      expect(() => builders[provider](events.slice(0, 1))).toThrow(
        provider === 'postmark' || provider === 'mailjet'
          ? /no webhook for a message merely sent/
          : provider === 'postal'
            ? /Postal has no/
            : provider === 'resend'
              ? /no unsubscribe/
              : /no soft bounces/,
      );
      return;
    }
    const { ingest, stored } = intake();
    const sentReported: ReportedEvent[] = [];
    for (const events of batch) {
      const request = builders[provider](events);
      sentReported.push(...request.events);
      expect(await ingest(provider, 'acme', request)).toMatchObject({ accepted: request.events.length, skipped: 0, warnings: [] });
    }
    expect(stored.map(reported)).toStrictEqual(sentReported);
    expect(sentReported).toHaveLength(batch.flat().length);
    for (const event of sentReported) {
      expect(event).toMatchObject({ provider, type, trackingId: spring, bounceClass: type === 'bounced' ? bounceClass : null });
      // Unix-second providers drop the milliseconds; SES, Postmark, Postal, Resend and Brevo keep them.
      expect(event.occurredAt.getTime()).toBe(
        ['ses', 'postmark', 'postal', 'resend', 'brevo'].includes(provider) ? at.getTime() : at.getTime() - 250,
      );
    }
  });

  it('a tampered request, or one signed with secrets that are not the project’s, is refused', async () => {
    const { ingest, stored } = intake();
    const request = builders[provider]([{ type: 'bounced', recipient: 'ana@example.org', trackingId: 'x' }]);
    // Mailgun signs only its timestamp and token, not the body: what a forger changes there is the token.
    const text = Buffer.from(request.rawBody).toString('utf8');
    const body =
      provider === 'mailgun' ? text.replace(/"token":"[0-9a-f]/, '"token":"x') : text.replace(/ana(@|%40)example\.org/, 'eve$1example.org');
    expect(body).not.toBe(text);
    const tampered = { ...request, rawBody: new TextEncoder().encode(body) };
    const wrongSecrets: ProviderAuth = {
      ses: { topicArns: ['arn:aws:sns:eu-west-1:123456789012:another-topic'] },
      sendgrid: { publicKey: createSendGridKeyPair().publicKey },
      mailgun: { signingKey: 'another-key' },
      sparkpost: { basic: [{ username: 'sparkpost', password: 'another' }] },
      postmark: { headers: [{ name: 'X-Webhook-Secret', value: 'another' }] },
      mandrill: { ...auth.mandrill, webhookKey: 'another-key' },
      brevo: { bearer: ['another'] },
      resend: { signingSecret: 'whsec_YW5vdGhlci1zZWNyZXQ=' },
      mailjet: { basic: [{ username: 'mailjet', password: 'another' }] },
      mailersend: { signingSecret: 'another-secret' },
      postal: { publicKey: createPostalKeyPair().publicKey },
    };
    // Postmark, SparkPost and Brevo sign nothing: only their credentials authenticate, so a body changed on the way is not theirs to detect.
    if (!['postmark', 'sparkpost', 'mailjet', 'brevo'].includes(provider))
      await expectMailwardenError(() => ingest(provider, 'acme', tampered), 'webhook_unauthorized');
    await expectMailwardenError(() => intake(wrongSecrets).ingest(provider, 'acme', request), 'webhook_unauthorized');
    expect(stored).toStrictEqual([]);
  });

  it('webhooksFor signs with what the project is configured with, one request per provider post', async () => {
    const { ingest, stored } = intake();
    const events: TestEvent[] = [
      { type: 'delivered', recipient: 'ana@example.org', trackingId: 'welcome' },
      // Postal has no complaint event.
      { type: provider === 'postal' ? 'opened' : 'complained', recipient: 'bo@example.org', trackingId: 'welcome' },
    ];
    const requests = webhooksFor(provider, auth[provider], events, {
      sendGridPrivateKey: sendGridKeys.privateKey,
      postalPrivateKey: postalKeys.privateKey,
    });
    expect(requests).toHaveLength(['sendgrid', 'sparkpost', 'mandrill', 'mailjet', 'brevo'].includes(provider) ? 1 : 2);
    for (const request of requests) await ingest(provider, 'acme', request);
    expect(stored.map((event) => [event.type, event.recipient, event.trackingId])).toStrictEqual([
      ['delivered', 'ana@example.org', 'welcome'],
      [provider === 'postal' ? 'opened' : 'complained', 'bo@example.org', 'welcome'],
    ]);
  });

  it('a payload given as is is signed anew and parsed as the provider’s own', async () => {
    const { ingest, stored } = intake();
    const original = builders[provider]([{ type: 'delivered', recipient: 'ana@example.org', trackingId: 'x' }]);
    const text = Buffer.from(original.rawBody).toString('utf8');
    const payload: unknown =
      // Mailjet's MessageID is past 2^53: parsed to an object it would round, so its text is given verbatim.
      provider === 'mailjet'
        ? text
        : provider === 'ses'
          ? JSON.parse((JSON.parse(text) as { Message: string }).Message)
          : provider === 'mailgun'
            ? (JSON.parse(text) as Record<string, unknown>)['event-data']
            : provider === 'mandrill'
              ? JSON.parse(new URLSearchParams(text).get('mandrill_events')!)
              : JSON.parse(text);
    const resigned = {
      ses: () => sesWebhook({ payload, topicArn }),
      sendgrid: () => sendGridWebhook({ payload, privateKey: sendGridKeys.privateKey }),
      mailgun: () => mailgunWebhook({ payload, signingKey: auth.mailgun.signingKey }),
      sparkpost: () => sparkPostWebhook({ payload, auth: { basic: auth.sparkpost.basic[0] } }),
      postmark: () => postmarkWebhook({ payload, auth: { headers: { 'X-Webhook-Secret': 'postmark-secret' } } }),
      mandrill: () => mandrillWebhook({ payload, webhookKey: auth.mandrill.webhookKey, url: auth.mandrill.url }),
      resend: () => resendWebhook({ payload, signingSecret: auth.resend.signingSecret }),
      brevo: () => brevoWebhook({ payload, auth: { bearer: 'brevo-token' } }),
      mailjet: () => mailjetWebhook({ payload, auth: { basic: auth.mailjet.basic[0] } }),
      mailersend: () => mailerSendWebhook({ payload, signingSecret: auth.mailersend.signingSecret }),
      postal: () => postalWebhook({ payload, privateKey: postalKeys.privateKey }),
    }[provider]();
    expect(resigned.events).toStrictEqual([]);
    await ingest(provider, 'acme', resigned);
    expect(stored.map(reported)).toStrictEqual(original.events);
  });
});

describe('the kit’s rules', () => {
  it('one SES notification names several recipients of one message; events of two messages or types are refused', async () => {
    const { ingest, stored } = intake();
    const request = sesWebhook({ topicArn, events: recipients('bounced') });
    expect(new Set(request.events.map((event) => event.messageId)).size).toBe(1);
    await ingest('ses', 'acme', request);
    expect(stored.map((event) => event.recipient)).toStrictEqual(['Ana@Example.org', 'bo@example.org']);
    expect(() =>
      sesWebhook({
        topicArn,
        events: [
          { type: 'delivered', recipient: 'a@example.org' },
          { type: 'opened', recipient: 'a@example.org' },
        ],
      }),
    ).toThrow(/one message and one event/);
    expect(() =>
      sesWebhook({
        topicArn,
        events: [
          { type: 'delivered', recipient: 'a@example.org', messageId: 'm1' },
          { type: 'delivered', recipient: 'b@example.org', messageId: 'm2' },
        ],
      }),
    ).toThrow(/one message/);
    expect(() => sesWebhook({ topicArn, events: [] })).toThrow(/at least one event/);
  });

  it('an SES tracking ID sent as a tag never reaches identity feedback notifications, as with SES', async () => {
    const { ingest, stored } = intake();
    const request = sesWebhook({
      topicArn,
      family: 'feedback',
      carrier: 'tags',
      events: [{ type: 'bounced', recipient: 'a@example.org', trackingId: 'spring' }],
    });
    expect(request.events[0]?.trackingId).toBeNull();
    await ingest('ses', 'acme', request);
    expect(stored[0]).toMatchObject({ type: 'bounced', trackingId: null });
    expect(() => sesWebhook({ topicArn, family: 'feedback', events: [{ type: 'opened', recipient: 'a@example.org' }] })).toThrow(
      /feedback notifications report bounces/,
    );
  });

  it('SNS subscription confirmations are signed too, and confirmed through the environment', async () => {
    const { ingest, confirmed } = intake();
    expect(await ingest('ses', 'acme', snsSubscriptionConfirmation({ topicArn, signatureVersion: '2' }))).toMatchObject({
      notice: 'subscription_confirmed',
    });
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]).toMatch(/^https:\/\/sns\.us-east-1\.amazonaws\.com\/\?Action=ConfirmSubscription&TopicArn=arn:aws:sns:eu-west-1/);
  });

  it('SES basic credentials of the subscription URL are sent when the project requires them', async () => {
    const basic = { username: 'sns', password: 's3cret' };
    const { ingest, stored } = intake({ ses: { topicArns: [topicArn], basic: [basic] } });
    await expectMailwardenError(
      () => ingest('ses', 'acme', sesWebhook({ topicArn, events: [{ type: 'delivered', recipient: 'a@example.org' }] })),
      'webhook_unauthorized',
    );
    await ingest('ses', 'acme', sesWebhook({ topicArn, basic, events: [{ type: 'delivered', recipient: 'a@example.org' }] }));
    expect(stored).toHaveLength(1);
  });

  it('Mailgun and Postmark post one event per request; webhooksFor splits, the builders refuse two', () => {
    const two: TestEvent[] = [
      { type: 'delivered', recipient: 'a@example.org' },
      { type: 'delivered', recipient: 'b@example.org' },
    ];
    expect(() => mailgunWebhook({ events: two, signingKey: 'k' })).toThrow(/one event per request/);
    expect(() => postmarkWebhook({ events: two })).toThrow(/one record per request/);
  });

  it('SendGrid message ids have no dot, events are checked, SendGrid needs its private key from the caller', () => {
    expect(() =>
      sendGridWebhook({
        privateKey: sendGridKeys.privateKey,
        events: [{ type: 'delivered', recipient: 'a@example.org', messageId: 'a.b' }],
      }),
    ).toThrow(/no dot/);
    expect(() =>
      sendGridWebhook({ privateKey: sendGridKeys.privateKey, events: [{ type: 'unknown' as never, recipient: 'a@example.org' }] }),
    ).toThrow(/type must be one of/);
    expect(() =>
      sendGridWebhook({
        privateKey: sendGridKeys.privateKey,
        events: [{ type: 'delivered', recipient: 'a@example.org', bounceClass: 'hard' }],
      }),
    ).toThrow(/bounced events only/);
    expect(() => webhooksFor('sendgrid', auth.sendgrid, [{ type: 'delivered', recipient: 'a@example.org' }])).toThrow(/sendGridPrivateKey/);
  });

  it('a signature timestamp outside the receiver’s tolerance is refused, as a stale provider post would be', async () => {
    const { ingest } = intake();
    const stale = new Date(Date.now() - 3600_000);
    await expectMailwardenError(
      () =>
        ingest(
          'sendgrid',
          'acme',
          sendGridWebhook({
            privateKey: sendGridKeys.privateKey,
            signedAt: stale,
            events: [{ type: 'delivered', recipient: 'a@example.org' }],
          }),
        ),
      'webhook_unauthorized',
    );
  });

  it('fetchTestSnsCertificate serves the test certificate only; the trusting fetcher answers its URL from memory', async () => {
    expect(await fetchTestSnsCertificate(testSnsSigner.certificateUrl)).toBe(testSnsSigner.certificate);
    await expect(
      fetchTestSnsCertificate('https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem'),
    ).rejects.toThrow(/only the testing kit/);
    expect(await fetchSnsCertificateTrustingTestSigner(testSnsSigner.certificateUrl)).toBe(testSnsSigner.certificate);
  });

  it('without a certificate fetcher that trusts the test signer, its SES requests are not verified (503 verification_unavailable)', async () => {
    const ingest = createWebhookIngest(async () => ({ accepted: 0, duplicates: 0, skipped: 0, warnings: [] }), {
      auth: { acme: auth },
      environment: { fetchCertificate: async (url) => Promise.reject(new Error(`${url} is not served here`)) },
    });
    await expectMailwardenError(
      () => ingest('ses', 'acme', sesWebhook({ topicArn, events: [{ type: 'delivered', recipient: 'a@example.org' }] })),
      'verification_unavailable',
    );
  });

  it('the kit imports no test runner and reads no file, so it works bundled, from dist', () => {
    const directory = new URL('../src/testing/', import.meta.url);
    const sources = [new URL('../src/testing.ts', import.meta.url), ...readdirSync(directory).map((name) => new URL(name, directory))];
    for (const source of sources) {
      const text = readFileSync(source, 'utf8');
      expect(text, source.pathname).not.toMatch(/from '(vitest|fast-check|node:fs|fs)'|import\.meta\.url|__dirname/);
    }
  });
});
