// The Mailjet carrier through the real `node-mailjet` SDK: the Send API v3.1 request the SDK would POST,
// kept by a local HTTP server the SDK reaches as its proxy (axios sends the whole request there), then
// `EventPayload` as Mailjet echoes it (`Payload`) in an event posted to the service: the same tracking ID
// and stream come back, and `MessageID`, past 2^53, is the one the send answered, digit for digit.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attachMailjetTrackingId, createMailwarden, type UnsubscribeLinkOf } from '@mailwarden/core';
import { mailjetWebhook } from '@mailwarden/core/testing';
import Mailjet from 'node-mailjet';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const MESSAGE_ID = '1152921506435409873';
let server: Server;
let port = 0;
let sent: { url: string; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      const body = JSON.parse(text) as { Messages: { CustomID?: string; To: { Email: string }[] }[] };
      sent.push({ url: request.url ?? '', body });
      // Mailjet's answer, MessageID a bare integer past 2^53.
      const messages = body.Messages.map((message) => ({
        Status: 'success',
        CustomID: message.CustomID ?? '',
        To: message.To.map((to) => ({ Email: to.Email, MessageUUID: '1ab23cd4-e567-8901-2345-6789f0123456', MessageID: '__ID__' })),
      }));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ Messages: messages }).replaceAll('"__ID__"', MESSAGE_ID));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  sent = [];
});

const mailjet = () =>
  Mailjet.Client.apiConnect('api-key', 'api-secret', { options: { proxy: { protocol: 'http', host: '127.0.0.1', port }, timeout: 5000 } });
const credentials = { username: 'mailjet', password: 'mailjet-webhook-secret' };

/** The event Mailjet posts for a message: its EventPayload and CustomID echoed as `Payload` and `CustomID`. */
async function delivered(message: Record<string, unknown>, recipient: string) {
  const mailwarden = createMailwarden({ webhooks: { auth: { acme: { mailjet: { basic: [credentials] } } } } });
  const payload = `[${JSON.stringify({
    event: 'sent',
    time: 1762164250,
    MessageID: '__ID__',
    Message_GUID: '1ab23cd4-e567-8901-2345-6789f0123456',
    email: recipient,
    mj_campaign_id: 0,
    mj_contact_id: 4,
    customcampaign: '',
    mj_message_id: MESSAGE_ID,
    smtp_reply: '250 2.0.0 OK',
    CustomID: message['CustomID'] ?? '',
    Payload: message['EventPayload'] ?? '',
  }).replace('"__ID__"', MESSAGE_ID)}]`;
  await mailwarden.ingestWebhook('mailjet', 'acme', mailjetWebhook({ payload, auth: { basic: credentials } }));
  const [summary] = (await mailwarden.messages.list('acme')).items;
  return summary;
}

describe('Mailjet EventPayload through node-mailjet: in the wire request, and back from the webhook', () => {
  it("post('send', v3.1): the caller's payload keys and CustomID kept; the ID, stream and MessageID come back", async () => {
    const trackingId = 'Frühling 🌷 "2026"';
    const request = attachMailjetTrackingId(
      {
        Messages: [
          {
            From: { Email: 'news@example.com', Name: 'News' },
            To: [{ Email: 'jane@example.com', Name: 'Jane' }],
            Subject: 'Hello',
            TextPart: 'Hi',
            CustomID: 'order-42',
            EventPayload: '{"user":42}',
          },
        ],
      },
      trackingId,
      { stream: 'newsletter' },
    );
    const result = await mailjet().post('send', { version: 'v3.1' }).request(request);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://api.mailjet.com/v3.1/send');
    const [wire] = (sent[0]!.body as { Messages: Record<string, unknown>[] }).Messages;
    expect(wire).toMatchObject({ CustomID: 'order-42', To: [{ Email: 'jane@example.com', Name: 'Jane' }] });
    expect(JSON.parse(wire!['EventPayload'] as string)).toEqual({ user: 42, service_id: trackingId, service_stream: 'newsletter' });
    // The SDK reads the answer's MessageID with json-bigint: its digits are those the webhook carries.
    const answered = (result.body as { Messages: { To: { MessageID: unknown }[] }[] }).Messages[0]!.To[0]!.MessageID;
    expect(String(answered)).toBe(MESSAGE_ID);

    const message = await delivered(wire!, 'jane@example.com');
    expect(message).toMatchObject({ trackingId, stream: 'newsletter', provider: 'mailjet', messageId: MESSAGE_ID, status: 'delivered' });
  });

  it('each message of a batch carries its own recipient’s one-click unsubscribe headers', async () => {
    const unsubscribe: UnsubscribeLinkOf = (email) => ({
      headers: { 'List-Unsubscribe': `<https://mw.example.com/u/${email}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    const request = attachMailjetTrackingId(
      {
        Messages: ['ana@example.org', 'bo@example.org'].map((Email) => ({
          From: { Email: 'news@example.com' },
          To: [{ Email }],
          Subject: 'Hello',
          TextPart: 'Hi',
          Headers: { 'X-Campaign': 'spring' },
        })),
      },
      'spring',
      { unsubscribe },
    );
    await mailjet().post('send', { version: 'v3.1' }).request(request);
    const wire = (sent[0]!.body as { Messages: { Headers: Record<string, string>; EventPayload: string }[] }).Messages;
    expect(wire.map((message) => message.Headers)).toEqual(
      ['ana@example.org', 'bo@example.org'].map((email) => ({
        'X-Campaign': 'spring',
        'List-Unsubscribe': `<https://mw.example.com/u/${email}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      })),
    );
    expect(wire.map((message) => message.EventPayload)).toEqual(['{"service_id":"spring"}', '{"service_id":"spring"}']);
  });
});
