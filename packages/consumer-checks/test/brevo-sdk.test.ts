// The Brevo carrier through the real `@getbrevo/brevo` SDK: the `POST /v3/smtp/email` request the SDK
// would send, kept by the `fetch` the client is given, then `X-Mailin-custom` as Brevo echoes it in an
// event posted to mailwarden: the same tracking ID and stream come back, with the message id the send
// answered, and the one-click unsubscribe headers ride in the request's `headers`.
import { BrevoClient } from '@getbrevo/brevo';
import { attachBrevoTrackingId, createMailwarden, type UnsubscribeLinkOf } from '@mailwarden/core';
import { brevoWebhook } from '@mailwarden/core/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { trackingIdArbitrary } from './tracking-id.arbitrary.js';
import fc from 'fast-check';

const MESSAGE_ID = '202611031004.12345678901@smtp-relay.mailin.fr';
let sent: { url: string; body: Record<string, unknown> }[] = [];

/** Brevo's send API, played: keeps the request and answers its `messageId`, in angle brackets as Brevo does. */
const capture: typeof fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  sent.push({ url, body: JSON.parse(String(init?.body)) as Record<string, unknown> });
  return new Response(JSON.stringify({ messageId: `<${MESSAGE_ID}>` }), { status: 201, headers: { 'content-type': 'application/json' } });
};

beforeEach(() => {
  sent = [];
});

const brevo = () => new BrevoClient({ apiKey: 'xkeysib-test', fetch: capture, maxRetries: 0 });
const credentials = { username: 'brevo', password: 'brevo-webhook-secret' };

/** The `delivered` event Brevo posts for the sent email, `X-Mailin-custom` echoed verbatim. */
async function delivered(body: Record<string, unknown>, recipient: string) {
  const mailwarden = createMailwarden({ webhooks: { auth: { acme: { brevo: { basic: [credentials] } } } } });
  const headers = body['headers'] as Record<string, string>;
  const event = {
    event: 'delivered',
    email: recipient,
    id: 123456,
    date: '2026-11-03 11:04:12',
    ts_epoch: 1762164252512,
    'message-id': `<${MESSAGE_ID}>`,
    subject: body['subject'],
    'X-Mailin-custom': headers['X-Mailin-custom'],
    tags: body['tags'],
  };
  const request = brevoWebhook({ auth: { basic: credentials }, payload: JSON.stringify(event) });
  await mailwarden.ingestWebhook('brevo', 'acme', request);
  return (await mailwarden.messages.list('acme')).items;
}

describe('Brevo through @getbrevo/brevo', () => {
  it('sendTransacEmail sends X-Mailin-custom in ASCII beside the caller’s headers and tags; the event gives the ID back', async () => {
    const trackingId = 'Frühling 🌷 "2026"';
    const answer = await brevo().transactionalEmails.sendTransacEmail(
      attachBrevoTrackingId(
        {
          sender: { email: 'shop@example.com' },
          to: [{ email: 'ana@example.org' }],
          subject: 'Spring',
          textContent: 'Hello',
          tags: ['spring'],
          headers: { 'X-Mailin-custom': '{"order":42}', 'Idempotency-Key': 'abc-123' },
        },
        trackingId,
        { stream: 'marketing' },
      ),
    );
    expect(answer.messageId).toBe(`<${MESSAGE_ID}>`);
    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request!.url).toMatch(/\/smtp\/email$/);
    const headers = request!.body['headers'] as Record<string, string>;
    expect(headers['Idempotency-Key']).toBe('abc-123');
    expect(headers['X-Mailin-custom']).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(headers['X-Mailin-custom']!)).toStrictEqual({ order: 42, service_id: trackingId, service_stream: 'marketing' });
    expect(request!.body['tags']).toStrictEqual(['spring']);
    const [message] = await delivered(request!.body, 'ana@example.org');
    expect(message).toMatchObject({
      trackingId,
      stream: 'marketing',
      messageId: MESSAGE_ID,
      recipient: 'ana@example.org',
      status: 'delivered',
    });
  });

  it('any tracking ID survives the SDK and the echo (property)', async () => {
    await fc.assert(
      fc.asyncProperty(trackingIdArbitrary, async (trackingId) => {
        sent = [];
        await brevo().transactionalEmails.sendTransacEmail(
          attachBrevoTrackingId(
            { sender: { email: 'shop@example.com' }, to: [{ email: 'bo@example.org' }], subject: 'S', textContent: 'T' },
            trackingId,
          ),
        );
        const [message] = await delivered(sent[0]!.body, 'bo@example.org');
        expect(message!.trackingId).toBe(trackingId);
      }),
      { numRuns: 25 },
    );
  });

  it('the one-click unsubscribe headers of the one recipient go in the request’s headers', async () => {
    const link = {
      headers: { 'List-Unsubscribe': '<https://mail.example.com/u/t>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    };
    const unsubscribe: UnsubscribeLinkOf = (email) => (email === 'cy@example.org' ? link : undefined);
    await brevo().transactionalEmails.sendTransacEmail(
      attachBrevoTrackingId(
        { sender: { email: 'shop@example.com' }, to: [{ email: 'cy@example.org' }], subject: 'News', textContent: 'Hi' },
        'news-1',
        { unsubscribe },
      ),
    );
    expect(sent[0]!.body['headers']).toStrictEqual({ 'X-Mailin-custom': '{"service_id":"news-1"}', ...link.headers });
  });
});
