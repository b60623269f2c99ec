// The stream a message carried (`service_stream`), from the receivers into `applyEvents`: a stream name is
// taken as it is, anything else makes the event recorded without it, with a warning, as for tracking IDs.
import { describe, expect, it } from 'vitest';
import { createMailwarden, type DeliveryEvent } from '@mailwarden/core';
import { createSendGridKeyPair, mailgunWebhook, postmarkWebhook, sendGridWebhook } from '@mailwarden/core/testing';

const now = new Date('2026-01-01T00:00:00Z');

function event(overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  return {
    provider: 'sendgrid',
    type: 'delivered',
    messageId: 'msg-1',
    recipient: 'jane@example.com',
    trackingId: 'spring-sale',
    occurredAt: now,
    eventKey: 'e-1',
    ...overrides,
  };
}

describe('applyEvents and the stream', () => {
  it.each([undefined, null, 'weekly-digest', '0', 'a'.repeat(64)])('takes %j without a warning', async (stream) => {
    const result = await createMailwarden().applyEvents('acme', [event({ stream })]);
    expect(result).toStrictEqual({ accepted: 1, duplicates: 0, skipped: 0, warnings: [] });
  });

  it.each(['', 'Marketing', '-digest', '_digest', 'a'.repeat(65), 'week ly', 'digest\ud800'])(
    'records an event whose stream is %j without it, and warns invalid_stream',
    async (stream) => {
      const result = await createMailwarden().applyEvents('acme', [event({ stream, type: 'bounced', bounceClass: 'hard' })]);
      expect(result).toStrictEqual({
        accepted: 1,
        duplicates: 0,
        skipped: 0,
        warnings: [{ index: 0, code: 'invalid_stream', message: 'stream is not a stream name; the event was recorded without it' }],
      });
    },
  );

  it('skips an event whose stream is not text, as the schema says', async () => {
    const result = await createMailwarden().applyEvents('acme', [event({ stream: 7 as unknown as string })]);
    expect(result).toMatchObject({ accepted: 0, skipped: 1, warnings: [{ index: 0, code: 'invalid_event' }] });
  });
});

describe('receivers read service_stream back', () => {
  const keys = createSendGridKeyPair();
  const auth = {
    acme: {
      sendgrid: { publicKey: keys.publicKey },
      mailgun: { signingKey: 'mailgun-signing-key' },
      postmark: { basic: [{ username: 'postmark', password: 'secret' }] },
    },
  };

  it('a stream name comes back in the event; a webhook with an invalid one is recorded without it, with a warning', async () => {
    const mailwarden = createMailwarden({ webhooks: { auth } });
    // Another recipient each: SendGrid events are keyed on their fields, so the same one would be a duplicate.
    const sendgrid = (serviceStream: string, email: string) =>
      sendGridWebhook({
        payload: [
          {
            email,
            timestamp: Math.floor(Date.now() / 1000),
            event: 'delivered',
            sg_event_id: `ev-${serviceStream}`,
            sg_message_id: 'abc.filter-1',
            service_id: 'spring-sale',
            service_stream: serviceStream,
          },
        ],
        privateKey: keys.privateKey,
      });
    expect(await mailwarden.ingestWebhook('sendgrid', 'acme', sendgrid('weekly-digest', 'jane@example.com'))).toMatchObject({
      accepted: 1,
      warnings: [],
    });
    expect(await mailwarden.ingestWebhook('sendgrid', 'acme', sendgrid('Weekly Digest', 'john@example.com'))).toMatchObject({
      accepted: 1,
      skipped: 0,
      warnings: [{ index: 0, code: 'invalid_stream' }],
    });
  });

  it('the testing kit carries a stream through Mailgun and Postmark', async () => {
    const mailwarden = createMailwarden({ webhooks: { auth } });
    const mailgun = mailgunWebhook({
      events: [{ type: 'delivered', recipient: 'jane@example.com', stream: 'weekly-digest' }],
      signingKey: 'mailgun-signing-key',
    });
    const postmark = postmarkWebhook({
      events: [{ type: 'delivered', recipient: 'jane@example.com', trackingId: 't', stream: 'product-updates' }],
      auth: { basic: { username: 'postmark', password: 'secret' } },
    });
    expect(mailgun.events.map((reported) => reported.stream)).toEqual(['weekly-digest']);
    expect(postmark.events.map((reported) => reported.stream)).toEqual(['product-updates']);
    expect(await mailwarden.ingestWebhook('mailgun', 'acme', mailgun)).toMatchObject({ accepted: 1, warnings: [] });
    expect(await mailwarden.ingestWebhook('postmark', 'acme', postmark)).toMatchObject({ accepted: 1, warnings: [] });
  });

  it('the event hook sees an invalid stream dropped, as an invalid tracking ID is, and a valid one as sent', async () => {
    const seen: (string | null | undefined)[] = [];
    const mailwarden = createMailwarden({ on: { event: ({ event }) => void seen.push(event.stream) } });
    const base = { provider: 'sendgrid', type: 'delivered', messageId: 'm', recipient: 'a@example.com', trackingId: null } as const;
    await mailwarden.applyEvents('acme', [
      { ...base, occurredAt: new Date(1), eventKey: 'e1', stream: 'Not A Stream' },
      { ...base, occurredAt: new Date(2), eventKey: 'e2', stream: 'weekly-digest' },
      { ...base, occurredAt: new Date(3), eventKey: 'e3' },
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([null, 'weekly-digest', undefined]);
  });
});
