import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachPostalTrackingId } from '../../src/carriers/postal.js';
import { MailwardenError } from '../../src/errors.js';
import { signPostalBody } from '../../src/testing/postal.js';
import { createPostalWebhook, parsePostalWebhook } from '../../src/webhooks/postal.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { deliverPostalMessage } from './postal.simulator.js';
import { maxLengthTrackingIdArbitrary, streamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const auth = { publicKey: keys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
const webhook = createPostalWebhook(env);

/** A caller's own tag: none, empty, or any text Postal accepts (at most 255 characters). */
const callerTagArbitrary = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** Caller headers: any names and values, sometimes Postal's own tag header. */
const callerHeadersArbitrary = fc.option(
  fc.dictionary(
    fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.constantFrom('X-Postal-Tag', 'x-postal-tag', 'List-Unsubscribe')),
    fc.string({ maxLength: 40 }),
    { maxKeys: 4 },
  ),
  { nil: undefined },
);

describe('Postal carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Postal -> signed webhook gives back %s, or the message already has another tag', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        callerTagArbitrary,
        callerHeadersArbitrary,
        fc.array(fc.emailAddress(), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('MessageSent' as const, 'MessageDeliveryFailed' as const, 'MessageBounced' as const, 'MessageLinkClicked' as const),
        fc.boolean(),
        fc.boolean(),
        async (trackingId, tag, headers, to, event, legacy, escapeNonAscii) => {
          const message = {
            to,
            from: 'news@example.com',
            subject: 'Hello',
            plain_body: 'Hi',
            ...(tag === undefined ? {} : { tag }),
            ...(headers === undefined ? {} : { headers }),
          };
          let sent: ReturnType<typeof attachPostalTrackingId<typeof message>>;
          try {
            sent = attachPostalTrackingId(message, trackingId);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
            // Only when the caller's own tag (field or header) is another text: Postal keeps one tag.
            const own = [
              tag,
              ...Object.entries(headers ?? {}).flatMap(([name, value]) => (name.toLowerCase() === 'x-postal-tag' ? [value] : [])),
            ];
            expect(own.some((value) => typeof value === 'string' && value !== '' && value !== trackingId)).toBe(true);
            return;
          }
          // The caller's headers are kept as they were (none is ours without `unsubscribe`).
          expect(sent.headers).toStrictEqual(headers);
          const posts = deliverPostalMessage(sent, { event, privateKey: keys.privateKey, legacy, escapeNonAscii });
          expect(posts).toHaveLength(to.length);
          for (const [index, { request, messageId, uuid }] of posts.entries()) {
            const receipt = await webhook.receive(request, auth);
            expect(receipt.warnings).toEqual([]);
            expect(receipt.events).toHaveLength(1);
            expect(receipt.events[0]).toMatchObject({ trackingId, messageId, recipient: to[index], eventKey: uuid });
            expect(receipt.events[0]!.stream).toBeUndefined();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a stream cannot travel with a Postal message: refused, never dropped silently', () => {
    fc.assert(
      fc.property(trackingIdArbitrary, streamArbitrary, (trackingId, stream) => {
        try {
          attachPostalTrackingId({ to: ['a@example.com'] }, trackingId, { stream } as never);
          expect.unreachable('a stream must be refused');
        } catch (error) {
          expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
        }
      }),
    );
  });
});

describe('parsePostalWebhook on arbitrary input', () => {
  /** Envelopes shaped like Postal's, with any values where the fields are. */
  const messageLike = fc.record(
    {
      id: fc.jsonValue(),
      direction: fc.oneof(fc.constantFrom('outgoing', 'incoming'), fc.jsonValue()),
      message_id: fc.jsonValue(),
      to: fc.oneof(fc.constant('a@example.com'), fc.jsonValue()),
      tag: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  const envelopeLike = fc.record(
    {
      event: fc.oneof(
        fc.constantFrom(
          'MessageSent',
          'MessageDelayed',
          'MessageDeliveryFailed',
          'MessageHeld',
          'MessageBounced',
          'MessageLinkClicked',
          'MessageLoaded',
          'DomainDNSError',
          'SendLimitExceeded',
        ),
        fc.jsonValue(),
      ),
      timestamp: fc.oneof(fc.double(), fc.jsonValue()),
      uuid: fc.jsonValue(),
      payload: fc.oneof(
        fc.record(
          {
            status: fc.jsonValue(),
            details: fc.oneof(fc.constantFrom('Maximum number of delivery attempts', 'Permanent SMTP delivery error'), fc.jsonValue()),
            output: fc.jsonValue(),
            timestamp: fc.oneof(fc.double(), fc.jsonValue()),
            message: fc.oneof(messageLike, fc.jsonValue()),
            original_message: fc.oneof(messageLike, fc.jsonValue()),
            url: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      ),
    },
    { requiredKeys: [] },
  );

  it('returns a receipt or throws invalid_payload for any text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          envelopeLike.map((value) => JSON.stringify(value)),
        ),
        (text) => expectSuccessOrMailwardenError(() => parsePostalWebhook(text), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any signed body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          envelopeLike.map((value) => JSON.stringify(value)),
          fc.uint8Array(),
        ),
        async (body) => {
          const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
          const headers = signPostalBody(keys.privateKey, rawBody);
          try {
            await webhook.receive({ method: 'POST', headers, rawBody }, auth);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('invalid_payload');
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});
