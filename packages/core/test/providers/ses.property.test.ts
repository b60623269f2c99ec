import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachSesHeaderTrackingId, decodeHeaderValue, encodeServiceIdHeader } from '../../src/carriers/ses-header.js';
import { attachSesTagsTrackingId } from '../../src/carriers/ses-tags.js';
import { isMailwardenError } from '../../src/errors.js';
import { deliveryEventSchema } from '../../src/api-schemas.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { createSesWebhook, parseSesWebhook, type SesWebhookAuth } from '../../src/webhooks/ses.js';
import {
  certificateUrl,
  sesNotification,
  snsEnvelope,
  snsRequest,
  snsSigningCertificate,
  topicArn,
  type SentMessage,
} from '../../src/testing/ses.js';
import { mimeMessage, sesV1SendEmail, sesV1SendRawEmail, sesV2SendEmail } from './ses.simulator.js';
import { maxLengthTrackingIdArbitrary, trackingIdArbitrary, optionalStreamArbitrary } from './tracking-id.arbitrary.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-04-01T09:00:05Z'),
  fetchCertificate: async () => snsSigningCertificate,
  confirmSubscription: async () => {},
};
const ses = createSesWebhook(env);
const auth: SesWebhookAuth = { topicArns: [topicArn] };
const anyTrackingId = fc.oneof(trackingIdArbitrary, maxLengthTrackingIdArbitrary);
const to = ['ana@example.org', 'bo@example.org'];

/** What SES does with the sent message, through SNS (signed, either signature version), into our receiver. */
async function deliverAndRead(
  sent: SentMessage,
  options: { family: 'event-publishing' | 'feedback'; eventType: 'Delivery' | 'Bounce' | 'Open'; signatureVersion: '1' | '2' },
  expected?: { stream: string | undefined },
): Promise<(string | null)[]> {
  const notification = sesNotification(sent, options.eventType, { family: options.family, includeHeaders: true });
  const envelope = snsEnvelope(JSON.stringify(notification), { signatureVersion: options.signatureVersion });
  const receipt = await ses.receive(snsRequest(envelope), auth);
  expect(receipt.warnings).toEqual([]);
  expect(receipt.events.map((event) => event.recipient)).toEqual(sent.destination);
  if (expected !== undefined) expect(receipt.events.map((event) => event.stream)).toEqual(sent.destination.map(() => expected.stream));
  return receipt.events.map((event) => event.trackingId);
}

const delivery = fc.record({
  family: fc.constantFrom('event-publishing' as const, 'feedback' as const),
  eventType: fc.constantFrom('Delivery' as const, 'Bounce' as const, 'Open' as const),
  signatureVersion: fc.constantFrom('1' as const, '2' as const),
});

/** The limit of SES tags, computed independently of the carrier: plain fits the alphabet, else base64url of the UTF-8. */
function fitsInSesTag(id: string): boolean {
  if (/^[A-Za-z0-9_-]{1,256}$/.test(id)) return true;
  return Math.ceil((Buffer.byteLength(id, 'utf8') * 4) / 3) <= 256;
}

describe('carrier round trip: attach → SES → SNS → receive gives back the same tracking ID', () => {
  it('X-Service-Id in a raw MIME message (v1 SendRawEmail), either notification family', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyTrackingId,
        optionalStreamArbitrary,
        delivery,
        fc.constantFrom('\r\n', '\n'),
        async (id, stream, options, newline) => {
          const raw = attachSesHeaderTrackingId(mimeMessage(to, newline), id, { stream });
          const sent = sesV1SendRawEmail({ RawMessage: { Data: Buffer.from(raw, 'utf8') } });
          expect(await deliverAndRead(sent, options, { stream })).toEqual([id, id]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('X-Service-Id in SES v2 Content.Simple.Headers', async () => {
    await fc.assert(
      fc.asyncProperty(anyTrackingId, optionalStreamArbitrary, delivery, async (id, stream, options) => {
        const request = attachSesHeaderTrackingId(
          {
            FromEmailAddress: 'shop@example.com',
            Destination: { ToAddresses: to },
            Content: {
              Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } }, Headers: [{ Name: 'X-Campaign', Value: 'c' }] },
            },
          },
          id,
          { stream },
        );
        expect(await deliverAndRead(sesV2SendEmail(request), options, { stream })).toEqual([id, id]);
      }),
      { numRuns: 150 },
    );
  });

  for (const api of ['v1', 'v2'] as const) {
    it(`message tags (${api}: ${api === 'v1' ? 'Tags' : 'EmailTags'}) through event publishing, or refused because the tag limit truly cannot be met`, async () => {
      await fc.assert(
        fc.asyncProperty(
          anyTrackingId,
          optionalStreamArbitrary,
          fc.constantFrom('Delivery' as const, 'Bounce' as const, 'Open' as const),
          fc.constantFrom('1' as const, '2' as const),
          async (id, stream, eventType, signatureVersion) => {
            let sent: SentMessage;
            try {
              sent =
                api === 'v1'
                  ? sesV1SendEmail(
                      attachSesTagsTrackingId(
                        { Source: 'shop@example.com', Destination: { ToAddresses: to }, Tags: [{ Name: 'campaign', Value: 'c' }] },
                        id,
                        { api, stream },
                      ),
                    )
                  : sesV2SendEmail(
                      attachSesTagsTrackingId(
                        {
                          FromEmailAddress: 'shop@example.com',
                          Destination: { ToAddresses: to },
                          Content: { Simple: { Subject: { Data: 'Hi' } } },
                        },
                        id,
                        { api, stream },
                      ),
                    );
            } catch (error) {
              if (!isMailwardenError(error) || error.code !== 'tracking_id_not_carriable') throw error;
              expect(fitsInSesTag(id)).toBe(false);
              return;
            }
            expect(fitsInSesTag(id)).toBe(true);
            expect(await deliverAndRead(sent, { family: 'event-publishing', eventType, signatureVersion }, { stream })).toEqual([id, id]);
          },
        ),
        { numRuns: 150 },
      );
    });
  }

  it('the header value stays within every limit: words ≤ 75, v2 value printable ASCII ≤ 870, raw lines ≤ 76 when encoded', () => {
    fc.assert(
      fc.property(anyTrackingId, (id) => {
        const words = encodeServiceIdHeader(id);
        const value = words.join(' ');
        expect(value).toMatch(/^[ -~]{1,870}$/);
        expect(decodeHeaderValue(value)).toBe(id);
        if (words[0] !== id) for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
        const raw = attachSesHeaderTrackingId('Subject: s\r\n\r\nbody', id);
        const field = raw.slice(raw.indexOf('X-Service-Id:'), raw.indexOf('\r\n\r\n'));
        for (const line of field.split('\r\n')) expect(line.length).toBeLessThanOrEqual(words[0] === id ? 998 : 76);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('pinned counterexamples of the round trip', () => {
  const options = { family: 'event-publishing', eventType: 'Delivery', signatureVersion: '1' } as const;

  // Found when decoding dropped a leading U+FEFF as a byte-order mark (TextDecoder's default):
  // the ID must come back with it, from encoded words and from base64url tags alike.
  it('a leading U+FEFF survives the header and the tags', async () => {
    for (const id of ['\ufeff', '\ufeff ', '\ufeff"']) {
      const raw = attachSesHeaderTrackingId(mimeMessage(to), id);
      expect(await deliverAndRead(sesV1SendRawEmail({ RawMessage: { Data: raw } }), options)).toEqual([id, id]);
      const tagged = attachSesTagsTrackingId({ Source: 'shop@example.com', Destination: { ToAddresses: to } }, id, { api: 'v1' });
      expect(await deliverAndRead(sesV1SendEmail(tagged), options)).toEqual([id, id]);
    }
  });

  // Found when plain values could start or end with a space: SES (like every MIME parser) drops the
  // blanks after the colon, so such IDs must be encoded.
  it('IDs of spaces, or with blanks at either end, survive raw MIME', async () => {
    for (const id of [' '.repeat(128), ' a', 'a ']) {
      const raw = attachSesHeaderTrackingId(mimeMessage(to), id);
      expect(await deliverAndRead(sesV1SendRawEmail({ RawMessage: { Data: raw } }), options)).toEqual([id, id]);
    }
  });

  it('the tag limit at its edge: 192 bytes of UTF-8 fit (256 characters), 193 do not', async () => {
    const fits = '€'.repeat(64);
    const tagged = attachSesTagsTrackingId({ FromEmailAddress: 'shop@example.com', Destination: { ToAddresses: to }, Content: {} }, fits, {
      api: 'v2',
    });
    expect(await deliverAndRead(sesV2SendEmail({ ...tagged, Content: { Simple: {} } }), options)).toEqual([fits, fits]);
    expect(fitsInSesTag(`${fits}a`)).toBe(false);
    expect(() => attachSesTagsTrackingId({ Tags: [] }, `${fits}a`, { api: 'v1' })).toThrow(/256/);
  });
});

/** Receipts or invalid_payload / webhook_unauthorized: nothing else may escape. */
function expectOnlyMailwardenErrors(error: unknown): void {
  if (!isMailwardenError(error) || (error.code !== 'invalid_payload' && error.code !== 'webhook_unauthorized')) throw error;
}

const sesEventTypes = [
  'Bounce',
  'Complaint',
  'Delivery',
  'DeliveryDelay',
  'Send',
  'Reject',
  'Open',
  'Click',
  'Rendering Failure',
  'Subscription',
  'Received',
];
const jsonish = fc.jsonValue({ maxDepth: 3 });

/** SES-shaped notifications whose fields are each either plausible or arbitrary JSON. */
const sesLike = fc
  .record(
    {
      eventType: fc.oneof(fc.constantFrom(...sesEventTypes), jsonish),
      notificationType: fc.oneof(fc.constantFrom(...sesEventTypes), jsonish),
      mail: fc.oneof(
        jsonish,
        fc.record(
          {
            messageId: fc.oneof(fc.string(), jsonish),
            timestamp: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), fc.string(), jsonish),
            destination: fc.oneof(fc.array(fc.oneof(fc.emailAddress(), fc.string(), jsonish)), jsonish),
            headers: fc.oneof(
              fc.array(
                fc.oneof(
                  fc.record({ name: fc.constantFrom('X-Service-Id', 'x-service-id', 'From'), value: fc.oneof(fc.string(), jsonish) }),
                  jsonish,
                ),
              ),
              jsonish,
            ),
            tags: fc.oneof(
              fc.dictionary(fc.constantFrom('service_id', 'service_id_enc', 'x'), fc.oneof(fc.array(fc.string()), jsonish)),
              jsonish,
            ),
          },
          { requiredKeys: [] },
        ),
      ),
      detail: fc.oneof(
        jsonish,
        fc.record(
          {
            timestamp: fc.oneof(fc.constant('2026-01-01T00:00:01Z'), jsonish),
            bounceType: fc.oneof(fc.constantFrom('Permanent', 'Transient', 'Undetermined'), jsonish),
            bounceSubType: fc.oneof(fc.constantFrom('General', 'OnAccountSuppressionList', 'Suppressed'), jsonish),
            bouncedRecipients: fc.oneof(
              fc.array(fc.oneof(fc.record({ emailAddress: fc.oneof(fc.emailAddress(), jsonish) }), jsonish)),
              jsonish,
            ),
            complainedRecipients: fc.oneof(
              fc.array(fc.oneof(fc.record({ emailAddress: fc.oneof(fc.emailAddress(), jsonish) }), jsonish)),
              jsonish,
            ),
            delayedRecipients: fc.oneof(
              fc.array(fc.oneof(fc.record({ emailAddress: fc.oneof(fc.emailAddress(), jsonish) }), jsonish)),
              jsonish,
            ),
            recipients: fc.oneof(fc.array(fc.oneof(fc.emailAddress(), jsonish)), jsonish),
            complaintFeedbackType: fc.oneof(fc.constant('not-spam'), jsonish),
            newTopicPreferences: jsonish,
            oldTopicPreferences: jsonish,
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: ['mail', 'detail'] },
  )
  .map(({ detail, ...rest }) => {
    // The same detail object under every key SES uses, so whichever type was drawn finds one.
    const keys = ['bounce', 'complaint', 'delivery', 'deliveryDelay', 'send', 'reject', 'open', 'click', 'failure', 'subscription'];
    return { ...rest, ...Object.fromEntries(keys.map((key) => [key, detail])) };
  });

describe('parsers never throw anything but MailwardenError', () => {
  it('parseSesWebhook on arbitrary JSON: a receipt, or invalid_payload', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.anything().map((value) => JSON.parse(JSON.stringify(value ?? null)) as unknown),
        ),
        (value) => {
          try {
            parseSesWebhook(value, { snsMessageId: 'm' });
          } catch (error) {
            if (!isMailwardenError(error) || error.code !== 'invalid_payload') throw error;
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('parseSesWebhook on SES-shaped notifications: a receipt whose events are all valid DeliveryEvents', () => {
    fc.assert(
      fc.property(sesLike, fc.option(fc.uuid(), { nil: null }), (notification, snsMessageId) => {
        const receipt = parseSesWebhook(notification, { snsMessageId });
        expect(receipt.sources).toHaveLength(receipt.events.length);
        expect(receipt.skipped).toBe(receipt.warnings.length);
        for (const event of receipt.events) {
          // Long fuzzed recipients may exceed the 512-character event key; everything else must validate.
          if (event.eventKey.length <= 512) expect(deliveryEventSchema.safeParse(event).success).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('receive on arbitrary bodies and headers: a receipt, invalid_payload or webhook_unauthorized', async () => {
    const envelopeLike = fc.record(
      {
        Type: fc.oneof(fc.constantFrom('Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'), jsonish),
        MessageId: fc.oneof(fc.uuid(), jsonish),
        TopicArn: fc.oneof(fc.constant(topicArn), jsonish),
        Message: fc.oneof(fc.string(), jsonish),
        Timestamp: fc.oneof(fc.string(), jsonish),
        Subject: fc.oneof(fc.string(), jsonish),
        SignatureVersion: fc.oneof(fc.constantFrom('1', '2'), jsonish),
        Signature: fc.oneof(fc.base64String(), jsonish),
        SigningCertURL: fc.oneof(fc.constant(certificateUrl), fc.webUrl(), jsonish),
        SubscribeURL: fc.oneof(fc.webUrl(), jsonish),
        Token: fc.oneof(fc.string(), jsonish),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.string().map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 64 }),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value))),
      envelopeLike.map((value) => Buffer.from(JSON.stringify(value))),
      sesLike.map((value) => Buffer.from(JSON.stringify(value))),
    );
    const headers = fc.record(
      {
        'x-amz-sns-rawdelivery': fc.constantFrom('true', 'false', 'TRUE'),
        'x-amz-sns-message-type': fc.constantFrom('Notification', 'SubscriptionConfirmation', 'x'),
        'x-amz-sns-topic-arn': fc.constantFrom(topicArn, 'x'),
        authorization: fc.constantFrom(`Basic ${Buffer.from('u:p').toString('base64')}`, 'Basic !!', 'Bearer x', ''),
      },
      { requiredKeys: [] },
    );
    const authConfig = fc.record(
      {
        topicArns: fc.constantFrom([topicArn], []),
        basic: fc.constantFrom([{ username: 'u', password: 'p' }], []),
        signatureRequired: fc.boolean(),
      },
      { requiredKeys: ['topicArns'] },
    );
    await fc.assert(
      fc.asyncProperty(body, headers, authConfig, async (rawBody, requestHeaders, config) => {
        const request: WebhookRequest = { method: 'POST', headers: requestHeaders, rawBody };
        try {
          await ses.receive(request, config);
        } catch (error) {
          expectOnlyMailwardenErrors(error);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('receive of signed notifications with arbitrary Messages: a receipt or invalid_payload', async () => {
    const message = fc.oneof(
      fc.string(),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      sesLike.map((value) => JSON.stringify(value)),
    );
    await fc.assert(
      fc.asyncProperty(message, fc.option(fc.string(), { nil: undefined }), async (text, subject) => {
        try {
          await ses.receive(snsRequest(snsEnvelope(text, subject === undefined ? {} : { subject })), auth);
        } catch (error) {
          if (!isMailwardenError(error) || error.code !== 'invalid_payload') throw error;
        }
      }),
      { numRuns: 300 },
    );
  });
});
