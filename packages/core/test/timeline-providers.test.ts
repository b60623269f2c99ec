// Each provider's real webhook, as the testing kit builds and signs it, through intake into a timeline:
// a hard bounce shows what that provider said (its SMTP status, its reply, its own classification),
// and a click keeps its link and user agent only when the instance keeps personal data.
import { createMailwarden, providers, type Provider, type ProviderAuth } from '@mailwarden/core';
import { createPostalKeyPair, createSendGridKeyPair, fetchTestSnsCertificate, webhooksFor } from '@mailwarden/core/testing';
import { describe, expect, test } from 'vitest';

const sendGridKeys = createSendGridKeyPair();
const postalKeys = createPostalKeyPair();
const auth = {
  ses: { topicArns: ['arn:aws:sns:eu-west-1:123456789012:ses-events'] },
  sendgrid: { publicKey: sendGridKeys.publicKey },
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

/** What each provider's hard bounce says, in its own words, as the kit writes it. */
const classification: Record<Provider, string> = {
  ses: 'Permanent/General',
  sendgrid: 'Invalid Address',
  mailgun: 'permanent/bounce',
  sparkpost: '10',
  postmark: 'HardBounce',
  mandrill: 'bad_mailbox',
  resend: 'Permanent/General',
  brevo: 'hard_bounce',
  mailjet: 'recipient: user unknown',
  mailersend: 'hard',
  postal: 'HardFail',
};

const AT = new Date('2026-03-02T10:00:00Z');

function mailwardenFor(personalData: boolean) {
  return createMailwarden({
    timeline: { personalData },
    webhooks: {
      auth: { acme: auth },
      environment: { fetchCertificate: fetchTestSnsCertificate, confirmSubscription: async () => {} },
    },
  });
}

async function timelineOf(personalData: boolean, provider: Provider, type: 'bounced' | 'clicked') {
  const mailwarden = mailwardenFor(personalData);
  const events = [{ type, recipient: 'bob@example.com', trackingId: 'spring-sale', messageId: `${provider}-m1`, occurredAt: AT }];
  // Signed now (SendGrid and Mailgun refuse old signatures); the events happened at AT.
  const options = { sendGridPrivateKey: sendGridKeys.privateKey, postalPrivateKey: postalKeys.privateKey };
  for (const request of webhooksFor(provider, auth[provider] as never, events, options)) {
    await mailwarden.ingestWebhook(provider, 'acme', request);
  }
  const [item] = (await mailwarden.messages.list('acme')).items;
  return (await mailwarden.messages.get('acme', item!.id))!.timeline;
}

describe('timelines from each provider’s webhook', () => {
  test.each(providers)('%s: a hard bounce keeps its SMTP status, reply and classification', async (provider) => {
    const [entry, ...rest] = await timelineOf(false, provider, 'bounced');
    expect(rest).toStrictEqual([]);
    expect(entry).toMatchObject({
      type: 'bounced',
      provider,
      bounceClass: 'hard',
      smtpStatus: '5.1.1',
      bounceClassification: classification[provider],
    });
    expect(entry!.diagnostic).toContain('5.1.1');
  });

  test.each(providers)('%s: a click keeps its url and user agent only with personal data on', async (provider) => {
    const kept = await timelineOf(true, provider, 'clicked');
    const dropped = await timelineOf(false, provider, 'clicked');
    expect(dropped.map((entry) => entry.type)).toStrictEqual(['clicked']);
    expect(dropped[0]).not.toHaveProperty('url');
    expect(dropped[0]).not.toHaveProperty('userAgent');
    // The kit makes up a new event id per request for some providers: compare what the provider said.
    const said = ({ id, eventKey, url, userAgent, ...entry }: (typeof kept)[number]) => entry;
    expect(kept.map(said)).toStrictEqual(dropped.map(said));
    if (provider === 'ses' || provider === 'postmark') {
      expect(kept[0]).toMatchObject({ url: 'https://example.com/spring', userAgent: 'Mozilla/5.0' });
    }
  });
});

describe('a Mandrill deferral', () => {
  test('keeps the reply of its latest SMTP attempt (msg.smtp_events), since it has no msg.diag', async () => {
    const mailwarden = mailwardenFor(false);
    const events = [{ type: 'deferred' as const, recipient: 'bob@example.com', messageId: 'mandrill-d1', occurredAt: AT }];
    for (const request of webhooksFor('mandrill', auth.mandrill, events)) await mailwarden.ingestWebhook('mandrill', 'acme', request);
    const [item] = (await mailwarden.messages.list('acme')).items;
    const timeline = (await mailwarden.messages.get('acme', item!.id))!.timeline;
    expect(timeline).toMatchObject([{ type: 'deferred', smtpStatus: '4.7.1', diagnostic: '451 4.7.1 Greylisted, please retry later' }]);
  });
});
