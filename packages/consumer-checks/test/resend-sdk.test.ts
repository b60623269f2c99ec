// The Resend carrier through the real `resend` SDK: the emails as `emails.send` and `batch.send` POST
// them, kept by a capturing fetch (the SDK calls globalThis.fetch), then their tags and headers as Resend
// echoes them in a webhook signed as Svix signs, back through the service to the same tracking ID.
import { attachResendTrackingId, createMailwarden, type UnsubscribeLinkOf } from '@mailwarden/core';
import { resendWebhook } from '@mailwarden/core/testing';
import { Resend } from 'resend';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

let sent: { url: string; body: unknown }[] = [];

beforeEach(() => {
  sent = [];
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const body = JSON.parse(String(init?.body)) as unknown;
    sent.push({ url, body });
    const answer = Array.isArray(body) ? { data: body.map((_, i) => ({ id: `email-${i}` })) } : { id: 'email-0' };
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const resend = new Resend('re_test_key');
const signingSecret = `whsec_${Buffer.from('resend-sdk-test-secret').toString('base64')}`;

interface SentEmail {
  to: string | string[];
  tags?: { name: string; value: string }[];
  headers?: Record<string, string>;
}

/** The `email.delivered` Resend posts for an email as it went out: its tags as an object, its headers as a list. */
async function delivered(email: SentEmail, emailId: string) {
  const mailwarden = createMailwarden({ webhooks: { auth: { acme: { resend: { signingSecret } } } } });
  const payload = {
    type: 'email.delivered',
    created_at: '2026-09-12T18:43:00.123Z',
    data: {
      email_id: emailId,
      created_at: '2026-09-12T18:42:59.894719+00:00',
      from: 'News <news@example.com>',
      to: Array.isArray(email.to) ? email.to : [email.to],
      subject: 'Hello',
      tags: Object.fromEntries((email.tags ?? []).map((tag) => [tag.name, tag.value])),
      headers: Object.entries(email.headers ?? {}).map(([name, value]) => ({ name, value })),
    },
  };
  await mailwarden.ingestWebhook('resend', 'acme', resendWebhook({ payload, signingSecret }));
  const [message] = (await mailwarden.messages.list('acme')).items;
  return message;
}

describe('Resend tags through the resend SDK: in the wire request, and back from the webhook', () => {
  it('emails.send: the caller’s tags and headers kept; the ID (base64url tag) and stream come back', async () => {
    const trackingId = 'Frühling 🌷 2026';
    const email = attachResendTrackingId(
      {
        from: 'News <news@example.com>',
        to: 'ana@example.org',
        subject: 'Hello',
        text: 'Hi',
        tags: [{ name: 'category', value: 'newsletter' }],
        headers: { 'X-Entity-Ref-ID': '42' },
      },
      trackingId,
      { stream: 'marketing' },
    );
    const { data, error } = await resend.emails.send(email);
    expect(error).toBeNull();
    expect(data).toEqual({ id: 'email-0' });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://api.resend.com/emails');
    const body = sent[0]!.body as SentEmail;
    expect(body.tags).toStrictEqual([
      { name: 'category', value: 'newsletter' },
      { name: 'service_id', value: Buffer.from(trackingId).toString('base64url') },
      { name: 'service_id_enc', value: 'b64u' },
      { name: 'service_stream', value: 'marketing' },
    ]);
    expect(body.headers).toStrictEqual({ 'X-Entity-Ref-ID': '42' });
    expect(await delivered(body, 'email-0')).toMatchObject({ trackingId, stream: 'marketing', messageId: 'email-0' });
  });

  it('an ID no tag can hold travels in X-Service-Id, which Resend echoes in data.headers', async () => {
    const trackingId = '😀'.repeat(128);
    await resend.emails.send(
      attachResendTrackingId({ from: 'news@example.com', to: ['bo@example.net'], subject: 'Hi', text: 'Hi' }, trackingId),
    );
    const body = sent[0]!.body as SentEmail;
    expect(body.tags ?? []).toStrictEqual([]);
    expect(Object.keys(body.headers!)).toStrictEqual(['X-Service-Id']);
    expect(await delivered(body, 'email-0')).toMatchObject({ trackingId });
  });

  it('batch.send: each email carries the ID and its own recipient’s unsubscribe link', async () => {
    const mailwarden = createMailwarden({ unsubscribeLinks: { baseUrl: 'https://mail.example.com/mw', secrets: ['s'.repeat(32)] } });
    const unsubscribe: UnsubscribeLinkOf = (address) => mailwarden.unsubscribeLinks.create('acme', { email: address, stream: 'marketing' });
    const recipients = ['ana@example.org', 'bo@example.net'];
    const emails = recipients.map((to) => ({ from: 'news@example.com', to, subject: 'Hi', text: 'Hi' }));
    await resend.batch.send(attachResendTrackingId(emails, 'spring-sale', { stream: 'marketing', unsubscribe }));
    expect(sent[0]!.url).toBe('https://api.resend.com/emails/batch');
    const bodies = sent[0]!.body as SentEmail[];
    expect(bodies.map((body) => body.tags)).toStrictEqual(
      recipients.map(() => [
        { name: 'service_id', value: 'spring-sale' },
        { name: 'service_stream', value: 'marketing' },
      ]),
    );
    for (const [index, body] of bodies.entries()) {
      const token = /\/unsubscribe\/([^/>]+)>$/.exec(body.headers!['List-Unsubscribe']!)?.[1];
      expect(mailwarden.unsubscribeLinks.read('acme', token!)).toMatchObject({ email: recipients[index], stream: 'marketing' });
      expect(body.headers!['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
      expect(await delivered(body, `email-${index}`)).toMatchObject({ trackingId: 'spring-sale', stream: 'marketing' });
    }
  });
});
