import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachMandrillTrackingId } from '../../src/carriers/mandrill.js';
import { MailwardenError } from '../../src/errors.js';
import { createMandrillWebhook, parseMandrillWebhook } from '../../src/webhooks/mandrill.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { deliverMandrillMessage } from './mandrill.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const webhookKey = randomBytes(16).toString('base64url');
const url = 'https://mail.example.com/projects/acme/webhooks/mandrill';
const auth = { webhookKey, url };
const webhook = createMandrillWebhook(env);

/** Caller metadata Mandrill itself accepts: small scalar values under valid key names. */
const callerMetadataArbitrary = fc.option(
  fc.dictionary(
    fc.oneof(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_]{0,11}$/), fc.constant('service_id')),
    fc.oneof(fc.string({ maxLength: 60 }), fc.integer(), fc.boolean()),
    { maxKeys: 3 },
  ),
  { nil: undefined },
);

describe('Mandrill carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Mandrill -> webhook gives back %s, or the 200-byte limit truly cannot be met', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        optionalStreamArbitrary,
        callerMetadataArbitrary,
        fc.constantFrom('send', 'delivered', 'hard_bounce', 'open', 'click'),
        fc.boolean(),
        async (trackingId, stream, metadata, event, escapeNonAscii) => {
          const sendRequest = {
            message: {
              from_email: 'news@example.com',
              to: [{ email: 'jane@example.net' }, { email: 'john@example.net' }],
              subject: 'Hi',
              ...(metadata === undefined ? {} : { metadata }),
            },
          };
          let sent: typeof sendRequest;
          try {
            sent =
              stream === undefined
                ? attachMandrillTrackingId(sendRequest, trackingId)
                : attachMandrillTrackingId(sendRequest, trackingId, { stream });
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
            // Independently: the plain value, the only encoding Mandrill's carrier allows (docs/providers/mandrill.md#carrier-limits-and-encodings), is over 200 bytes.
            const ours = stream === undefined ? { service_id: trackingId } : { service_id: trackingId, service_stream: stream };
            expect(Buffer.byteLength(JSON.stringify({ ...metadata, ...ours }))).toBeGreaterThan(200);
            return;
          }
          const { request, messageIds } = deliverMandrillMessage(sent, { webhookKey, url, event, escapeNonAscii });
          const receipt = await webhook.receive(request, auth);
          expect(receipt.warnings).toEqual([]);
          expect(receipt.events.map((delivery) => delivery.trackingId)).toEqual([trackingId, trackingId]);
          expect(receipt.events.map((delivery) => delivery.stream)).toEqual([stream, stream]);
          expect(receipt.events.map((delivery) => delivery.messageId)).toEqual(messageIds);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('parseMandrillWebhook on arbitrary input', () => {
  /** Events shaped like Mandrill's, with any values where the fields are. */
  const eventLike = fc.record(
    {
      event: fc.oneof(fc.constantFrom('send', 'hard_bounce', 'click', 'reject', 'inbound'), fc.jsonValue()),
      type: fc.constantFrom('blacklist', 'whitelist'),
      _id: fc.jsonValue(),
      ts: fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.jsonValue()),
      url: fc.jsonValue(),
      msg: fc.oneof(
        fc.record(
          {
            email: fc.oneof(fc.constant('a@example.net'), fc.jsonValue()),
            metadata: fc.jsonValue(),
            _id: fc.jsonValue(),
            diag: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      ),
    },
    { requiredKeys: [] },
  );

  it('returns a receipt or throws invalid_payload for any JSON value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(eventLike), fc.array(fc.jsonValue())), (value) => {
        try {
          parseMandrillWebhook(value);
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('invalid_payload');
        }
      }),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any correctly signed form', async () => {
    const fieldsArbitrary = fc.oneof(
      fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 3 }),
      fc.array(eventLike).map((batch): [string, string][] => [['mandrill_events', JSON.stringify(batch)]]),
      fc.json().map((json): [string, string][] => [['mandrill_events', json]]),
    );
    await fc.assert(
      fc.asyncProperty(fieldsArbitrary, async (entries) => {
        const rawBody = new TextEncoder().encode(new URLSearchParams(entries).toString());
        // Sign what a form parser reads back, as Mandrill signs the fields it posts.
        const fields = new Map(new URLSearchParams(new TextDecoder().decode(rawBody)));
        const text =
          url +
          [...fields.keys()]
            .sort()
            .map((name) => name + fields.get(name))
            .join('');
        const signature = createHmac('sha1', webhookKey).update(text).digest('base64');
        try {
          await webhook.receive({ method: 'POST', headers: { 'x-mandrill-signature': signature }, rawBody }, auth);
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('invalid_payload');
        }
      }),
    );
  });

  it('receive never throws anything but invalid_payload or webhook_unauthorized for arbitrary bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array(), fc.string(), async (rawBody, signature) => {
        try {
          await webhook.receive({ method: 'POST', headers: { 'x-mandrill-signature': signature }, rawBody }, auth);
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect(['invalid_payload', 'webhook_unauthorized']).toContain((error as MailwardenError).code);
        }
      }),
    );
  });
});
