// The MailerSend carrier through the real `mailersend` SDK: its EmailParams as the SDK builds them, the
// request it would POST kept by a capturing fetch (the SDK's transport calls globalThis.fetch), then the
// tags as MailerSend echoes them in a signed webhook, back through the service to the same tracking ID.
import { attachMailerSendTrackingId, createMailwarden, type UnsubscribeLinkOf } from '@mailwarden/core';
import { mailerSendWebhook } from '@mailwarden/core/testing';
import { EmailParams, MailerSend, Recipient, Sender } from 'mailersend';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

let sent: { url: string; body: unknown }[] = [];

beforeEach(() => {
  sent = [];
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    sent.push({ url, body: JSON.parse(String(init?.body)) });
    return new Response(null, { status: 202, headers: { 'x-message-id': '6aa59d2fbf35297925087058' } });
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const mailerSend = new MailerSend({ apiKey: 'mlsn.test' });
const signingSecret = 'mailersend-signing-secret';

/** The version 2 delivery MailerSend posts for a recipient of the email sent, its tags as sent. */
async function delivered(email: { tags?: string[] }, recipient: string) {
  const mailwarden = createMailwarden({ webhooks: { auth: { acme: { mailersend: { signingSecret } } } } });
  const payload = {
    type: 'activity.delivered',
    created_at: '2026-09-12T18:43:00.000000Z',
    data: {
      id: '6aa59d4a531434d718ec48a0',
      message_id: '6aa59d2fbf35297925087058',
      email_id: '6aa59d3037403a10c4d4d18e',
      type: 'delivered',
      recipient,
      tags: email.tags,
      meta: [],
    },
  };
  await mailwarden.ingestWebhook('mailersend', 'acme', mailerSendWebhook({ payload, signingSecret }));
  const [message] = (await mailwarden.messages.list('acme')).items;
  return message;
}

describe('MailerSend tags through the mailersend SDK: in the wire request, and back from the webhook', () => {
  it('email.send: EmailParams keeps its class and the caller’s tags; the ID and stream come back', async () => {
    const trackingId = 'Frühling 🌷 2026';
    const params = new EmailParams()
      .setFrom(new Sender('news@example.com', 'News'))
      .setTo([new Recipient('ana@example.org', 'Ana')])
      .setSubject('Hello')
      .setText('Hi')
      .setTags(['newsletter']);
    await mailerSend.email.send(attachMailerSendTrackingId(params, trackingId, { stream: 'marketing' }));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://api.mailersend.com/v1/email');
    const body = sent[0]!.body as { tags: string[] };
    expect(body.tags).toEqual(['newsletter', 'service_id_b64u:RnLDvGhsaW5nIPCfjLcgMjAyNg', 'service_stream:marketing']);
    expect(await delivered(body, 'ana@example.org')).toMatchObject({ trackingId, stream: 'marketing', provider: 'mailersend' });
  });

  it('email.sendBulk: every email of the bulk send carries it', async () => {
    const emails = ['ana@example.org', 'bo@example.net'].map((email) =>
      new EmailParams()
        .setFrom(new Sender('news@example.com'))
        .setTo([new Recipient(email)])
        .setSubject('Hi')
        .setText('Hello'),
    );
    await mailerSend.email.sendBulk(attachMailerSendTrackingId(emails, 'spring-sale'));
    expect(sent[0]!.url).toBe('https://api.mailersend.com/v1/bulk-email');
    const bulk = sent[0]!.body as { tags: string[] }[];
    expect(bulk.map((email) => email.tags)).toEqual([['service_id:spring-sale'], ['service_id:spring-sale']]);
    expect(await delivered(bulk[1]!, 'bo@example.net')).toMatchObject({ trackingId: 'spring-sale' });
  });

  it('unsubscribe: each email’s one recipient gets its own link in list_unsubscribe', async () => {
    const mailwarden = createMailwarden({ unsubscribeLinks: { baseUrl: 'https://mail.example.com/mw', secrets: ['s'.repeat(32)] } });
    const links: UnsubscribeLinkOf = (email) => mailwarden.unsubscribeLinks.create('acme', { email, stream: 'marketing' });
    const emails = ['ana@example.org', 'bo@example.net'].map((email) =>
      new EmailParams()
        .setFrom(new Sender('news@example.com'))
        .setTo([new Recipient(email)])
        .setSubject('Hi')
        .setText('Hello'),
    );
    await mailerSend.email.sendBulk(attachMailerSendTrackingId(emails, 'spring-sale', { stream: 'marketing', unsubscribe: links }));
    const bulk = sent[0]!.body as { list_unsubscribe: string }[];
    bulk.forEach((email, index) => {
      const token = /^<[^>]*\/unsubscribe\/([^/>]+)>$/.exec(email.list_unsubscribe)?.[1];
      expect(mailwarden.unsubscribeLinks.read('acme', token!)).toEqual({
        email: ['ana@example.org', 'bo@example.net'][index],
        stream: 'marketing',
      });
    });
  });
});
