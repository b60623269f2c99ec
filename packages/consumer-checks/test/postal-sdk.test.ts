// The Postal carrier through Postal's HTTP API as documented (Postal has no official Node SDK: a plain
// `fetch` is how a Node app sends). A local server plays `POST /api/v1/send/message`, keeps the request
// exactly as it arrived on the socket and answers as Postal does; the tag it kept then comes back in a
// webhook signed with the server's RSA key, through the service to the same tracking ID.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { attachPostalTrackingId, createMailwarden, type UnsubscribeLinkOf } from '@mailwarden/core';
import { createPostalKeyPair, postalWebhook } from '@mailwarden/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

interface Captured {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  answer: { message_id: string; messages: Record<string, { id: number; token: string }> };
}

let postal: Server;
let baseUrl = '';
let captured: Captured[] = [];

beforeAll(async () => {
  postal = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const to = body['to'] as string[];
      // Postal's answer: one Message-ID for the send, a numeric id and token per recipient.
      const answer = {
        message_id: `${randomUUID()}@rp.postal.example.com`,
        messages: Object.fromEntries(to.map((address, index) => [address, { id: 1000 + index, token: `tok${index}` }])),
      };
      captured.push({ path: request.url!, headers: request.headers, body, answer });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', time: 0.05, flags: {}, data: answer }));
    });
  });
  await new Promise<void>((resolve) => postal.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(postal.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => postal.close(() => resolve()));
});

beforeEach(() => {
  captured = [];
});

async function send(message: object): Promise<Captured> {
  const response = await fetch(`${baseUrl}/api/v1/send/message`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Server-API-Key': 'postal-api-key' },
    body: JSON.stringify(message),
  });
  expect(((await response.json()) as { status: string }).status).toBe('success');
  return captured.at(-1)!;
}

const keys = createPostalKeyPair();

/** The MessageSent Postal posts for `recipient` of the captured send: the tag as Postal stored it. */
async function delivered(sent: Captured, recipient: string) {
  const mailwarden = createMailwarden({ webhooks: { auth: { acme: { postal: { publicKey: keys.publicKey } } } } });
  const payload = {
    event: 'MessageSent',
    timestamp: 1762164100.512,
    uuid: randomUUID(),
    payload: {
      status: 'Sent',
      details: 'Message accepted by mx.example.org',
      output: '250 2.0.0 OK',
      sent_with_ssl: true,
      timestamp: 1762164100.45,
      time: 0.62,
      message: {
        id: sent.answer.messages[recipient]!.id,
        token: sent.answer.messages[recipient]!.token,
        direction: 'outgoing',
        message_id: sent.answer.message_id,
        to: recipient,
        from: sent.body['from'],
        subject: sent.body['subject'],
        timestamp: 1762164000.2,
        spam_status: 'NotChecked',
        tag: sent.body['tag'] ?? null,
      },
    },
  };
  await mailwarden.ingestWebhook('postal', 'acme', postalWebhook({ payload, privateKey: keys.privateKey }));
  const [message] = (await mailwarden.messages.list('acme')).items;
  return message;
}

describe('the Postal tag through Postal’s HTTP API: on the wire, and back from the signed webhook', () => {
  it('send/message: the tag is the tracking ID verbatim; the caller’s headers travel untouched', async () => {
    const trackingId = 'Frühling 🌷 <2026> & "co"';
    const sent = await send(
      attachPostalTrackingId(
        { to: ['ana@example.org'], from: 'news@example.com', subject: 'Hello', plain_body: 'Hi', headers: { 'X-Campaign': '7' } },
        trackingId,
      ),
    );
    expect(sent.path).toBe('/api/v1/send/message');
    expect(sent.headers['x-server-api-key']).toBe('postal-api-key');
    expect(sent.body['tag']).toBe(trackingId);
    expect(sent.body['headers']).toEqual({ 'X-Campaign': '7' });
    expect(await delivered(sent, 'ana@example.org')).toMatchObject({
      trackingId,
      provider: 'postal',
      messageId: sent.answer.message_id,
      status: 'delivered',
    });
  });

  it('a 128-code-point ID of 4-byte characters travels whole', async () => {
    const trackingId = '😀'.repeat(128);
    const sent = await send(attachPostalTrackingId({ to: ['bo@example.net'], from: 'news@example.com', subject: 'Hi' }, trackingId));
    expect(await delivered(sent, 'bo@example.net')).toMatchObject({ trackingId });
  });

  it('unsubscribe: the message’s one recipient gets its own link in headers', async () => {
    const mailwarden = createMailwarden({ unsubscribeLinks: { baseUrl: 'https://mail.example.com/mw', secrets: ['s'.repeat(32)] } });
    const links: UnsubscribeLinkOf = (email) => mailwarden.unsubscribeLinks.create('acme', { email, stream: 'marketing' });
    const sent = await send(
      attachPostalTrackingId({ to: ['ana@example.org'], from: 'news@example.com', subject: 'Hi' }, 'spring-sale', { unsubscribe: links }),
    );
    const headers = sent.body['headers'] as Record<string, string>;
    expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const token = /^<[^>]*\/unsubscribe\/([^/>]+)>$/.exec(headers['List-Unsubscribe']!)?.[1];
    expect(mailwarden.unsubscribeLinks.read('acme', token!)).toEqual({ email: 'ana@example.org', stream: 'marketing' });
  });
});
