// One-click unsubscribe headers through the real SDKs: each recipient's link, made by the service in
// process, is on the wire the provider would receive (docs/providers/README.md, "One-click unsubscribe on
// the send side"). AWS SDK v3 through a capturing request handler; @sendgrid/mail, postmark and
// mailgun.js against a stand-in of their API on a loopback port.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SESv2Client, SendBulkEmailCommand } from '@aws-sdk/client-sesv2';
import sgMail from '@sendgrid/mail';
import Mailgun from 'mailgun.js';
import { ServerClient } from 'postmark';
import {
  attachMailgunTrackingId,
  attachPostmarkTrackingId,
  attachSendGridTrackingId,
  attachSesHeaderTrackingId,
  createMailwarden,
  type UnsubscribeLinkOf,
} from '@mailwarden/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const mailwarden = createMailwarden({
  unsubscribeLinks: { baseUrl: 'https://mail.example.com/mw', secrets: ['s'.repeat(32)] },
});
const links: UnsubscribeLinkOf = (email) => mailwarden.unsubscribeLinks.create('acme', { email, stream: 'marketing' });
const recipients = ['ana@example.org', 'bo@example.net'];

/** The address and stream a `List-Unsubscribe` value unsubscribes, read back by the service. */
function unsubscribes(value: string | undefined) {
  const token = /^<[^>]*\/unsubscribe\/([^/>]+)>$/.exec(value ?? '')?.[1];
  if (token === undefined) throw new Error(`not one of our List-Unsubscribe values: ${value}`);
  return mailwarden.unsubscribeLinks.read('acme', token);
}

let server: Server;
let received: { url: string; contentType: string; body: Buffer }[] = [];
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ url: request.url ?? '', contentType: request.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      response.writeHead(200, { 'content-type': 'application/json' });
      // Enough of each provider's answer for its SDK to take the call as sent.
      response.end(JSON.stringify({ id: '<1@mg.example.com>', message: 'Queued.', ErrorCode: 0, MessageID: 'x', To: recipients[0] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('each recipient’s link on the wire', () => {
  it('AWS SDK v3 SendBulkEmail: each entry’s ReplacementHeaders', async () => {
    let body = '';
    const ses = new SESv2Client({
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 1,
      requestHandler: {
        async handle(request: { body?: unknown }): Promise<never> {
          body = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
          throw new Error('captured');
        },
      },
    });
    const input = attachSesHeaderTrackingId(
      {
        FromEmailAddress: 'news@example.com',
        DefaultContent: { Template: { TemplateName: 'weekly' } },
        BulkEmailEntries: recipients.map((email) => ({ Destination: { ToAddresses: [email] } })),
      },
      'spring-sale',
      { stream: 'marketing', unsubscribe: links },
    );
    await expect(ses.send(new SendBulkEmailCommand(input))).rejects.toThrow('captured');
    const entries = (JSON.parse(body) as { BulkEmailEntries: { ReplacementHeaders: { Name: string; Value: string }[] }[] })
      .BulkEmailEntries;
    entries.forEach((entry, i) => {
      const headers = Object.fromEntries(entry.ReplacementHeaders.map(({ Name, Value }) => [Name, Value]));
      expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
      expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: recipients[i], stream: 'marketing' });
    });
  });

  it('@sendgrid/mail: each personalization’s headers', async () => {
    received = [];
    sgMail.setApiKey('SG.test');
    // The SDK's own client (`@sendgrid/client`), pointed at the stand-in.
    const { client } = sgMail as unknown as { client: { setDefaultRequest(key: string, value: string): void } };
    client.setDefaultRequest('baseUrl', `http://${base}/`);
    await sgMail.send(
      attachSendGridTrackingId(
        {
          from: 'news@example.com',
          subject: 'Hello',
          text: 'Hi',
          personalizations: recipients.map((email) => ({ to: [{ email }] })),
        },
        'spring-sale',
        { stream: 'marketing', unsubscribe: links },
      ),
    );
    const sent = JSON.parse(received[0]!.body.toString('utf8')) as { personalizations: { headers: Record<string, string> }[] };
    sent.personalizations.forEach((personalization, i) => {
      expect(personalization.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
      expect(unsubscribes(personalization.headers['List-Unsubscribe'])).toEqual({ email: recipients[i], stream: 'marketing' });
    });
  });

  it('postmark: a batch, each message’s Headers', async () => {
    received = [];
    const client = new ServerClient('server-token', { useHttps: false, requestHost: base });
    await client
      .sendEmailBatch(
        attachPostmarkTrackingId(
          recipients.map((email) => ({ From: 'news@example.com', To: email, Subject: 'Hello', TextBody: 'Hi' })),
          'spring-sale',
          { stream: 'marketing', unsubscribe: links },
        ),
      )
      .catch(() => undefined); // the stand-in's answer is not a batch's; the request is what counts
    const sent = JSON.parse(received[0]!.body.toString('utf8')) as { Headers: { Name: string; Value: string }[] }[];
    sent.forEach((message, i) => {
      const headers = Object.fromEntries(message.Headers.map(({ Name, Value }) => [Name, Value]));
      expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: recipients[i], stream: 'marketing' });
    });
  });

  it('mailgun.js: several recipients, each link in recipient-variables behind %recipient.h:List-Unsubscribe%', async () => {
    received = [];
    const mg = new Mailgun(FormData).client({ username: 'api', key: 'key-test', url: `http://${base}` });
    await mg.messages.create(
      'mg.example.com',
      attachMailgunTrackingId({ from: 'news@mg.example.com', to: recipients, subject: 'Hello', text: 'Hi' }, 'spring-sale', {
        stream: 'marketing',
        unsubscribe: links,
      }),
    );
    const { body, contentType } = received[0]!;
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
    expect(form.get('h:List-Unsubscribe')).toBe('%recipient.h:List-Unsubscribe%');
    expect(form.get('h:List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const variables = JSON.parse(form.get('recipient-variables') as string) as Record<string, Record<string, string>>;
    for (const email of recipients) expect(unsubscribes(variables[email]!['h:List-Unsubscribe'])).toEqual({ email, stream: 'marketing' });
  });
});
