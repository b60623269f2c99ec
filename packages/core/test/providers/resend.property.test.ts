import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachResendTrackingId } from '../../src/carriers/resend.js';
import { MailwardenError } from '../../src/errors.js';
import { resendRequest } from '../../src/testing/resend.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { createResendWebhook, parseResendWebhook } from '../../src/webhooks/resend.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';
import { deliverResendEmails } from './resend.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const env: WebhookEnvironment = {
  now: () => NOW,
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const signingSecret = `whsec_${Buffer.from('resend-property-secret').toString('base64')}`;
const auth = { signingSecret };
const webhook = createResendWebhook(env);

const tagText = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
/** Caller tags Resend itself accepts, with names of ours among them; one per name (the webhook echoes them as an object). */
const callerTagsArbitrary = fc.uniqueArray(
  fc.record({ name: fc.oneof(tagText, fc.constantFrom('service_id', 'service_id_enc', 'service_stream', 'campaign')), value: tagText }),
  { maxLength: 75, selector: (tag) => tag.name },
);
/** Caller headers, with ours (in any case) among them. */
const callerHeadersArbitrary = fc.dictionary(
  fc.oneof(
    fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/),
    fc.constantFrom('X-Service-Id', 'x-service-id', 'X-Service-Stream', 'X-Entity-Ref-ID'),
  ),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }),
  { maxKeys: 5 },
);

describe('Resend carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Resend -> signed webhook -> receive gives back %s, with the caller’s tags and headers kept', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        optionalStreamArbitrary,
        fc.array(fc.tuple(callerTagsArbitrary, callerHeadersArbitrary), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.constantFrom('object' as const, 'list' as const),
        fc.constantFrom('email.delivered' as const, 'email.bounced' as const),
        async (trackingId, stream, callers, asBatch, tagsAs, type) => {
          const emails = callers.map(([tags, headers], index) => ({
            from: 'news@example.com',
            to: `r${index}@example.com`,
            subject: 'Hi',
            text: 'Hello',
            tags,
            headers,
          }));
          const options = stream === undefined ? undefined : { stream };
          // Resend's limits never make the ID uncarriable: the header takes what the tags cannot.
          const sent = asBatch
            ? attachResendTrackingId(emails, trackingId, options)
            : attachResendTrackingId(emails[0]!, trackingId, options);
          const posts = deliverResendEmails(sent, { type, tagsAs, signingSecret, signedAt: new Date(NOW) });
          for (const [index, { request, emailId }] of posts.entries()) {
            const receipt = await webhook.receive(request, auth);
            expect(receipt.warnings).toEqual([]);
            expect(receipt.events).toHaveLength(1);
            const event = receipt.events[0]!;
            expect(event.trackingId).toBe(trackingId);
            // Without a stream, the caller's own service_stream tag or X-Service-Stream header (if any) is left
            // as it was, and read back (the tag first).
            const [tags, headers] = callers[index]!;
            const callersStream =
              tags.find((tag) => tag.name === 'service_stream')?.value ??
              Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-service-stream')?.[1];
            expect(event.stream).toBe(stream ?? callersStream);
            expect(event.messageId).toBe(emailId);
            // The caller's other tags and headers go out unchanged, in order.
            const out = (Array.isArray(sent) ? sent[index] : sent) as (typeof emails)[number];
            const ours = new Set(['service_id', 'service_id_enc', ...(stream === undefined ? [] : ['service_stream'])]);
            expect(out.tags.filter((tag) => !ours.has(tag.name))).toStrictEqual(tags.filter((tag) => !ours.has(tag.name)));
            const ourHeaders = (name: string) =>
              ['x-service-id', ...(stream === undefined ? [] : ['x-service-stream'])].includes(name.toLowerCase());
            expect(Object.entries(out.headers).filter(([name]) => !ourHeaders(name))).toStrictEqual(
              Object.entries(headers).filter(([name]) => !ourHeaders(name)),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('an ID whose base64url is over 256 characters goes in X-Service-Id, the stream beside it', () => {
    // 128 astral characters: 512 bytes of UTF-8, 683 characters of base64url.
    const id = '😀'.repeat(128);
    const email = attachResendTrackingId({ to: 'a@example.com', tags: [{ name: 'campaign', value: 'spring' }] }, id, { stream: 'digest' });
    expect(email.tags).toStrictEqual([{ name: 'campaign', value: 'spring' }]);
    expect(Object.keys(email.headers!)).toStrictEqual(['X-Service-Id', 'X-Service-Stream']);
  });
});

describe('parseResendWebhook on arbitrary input', () => {
  const eventLike = fc.record(
    {
      type: fc.oneof(
        fc.constantFrom(
          'email.sent',
          'email.delivered',
          'email.bounced',
          'email.suppressed',
          'email.clicked',
          'contact.created',
          'email.new',
        ),
        fc.jsonValue(),
      ),
      created_at: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), fc.string(), fc.jsonValue()),
      data: fc.oneof(
        fc.record(
          {
            email_id: fc.jsonValue(),
            to: fc.oneof(fc.constant(['a@example.com']), fc.array(fc.jsonValue()), fc.jsonValue()),
            tags: fc.oneof(
              fc.dictionary(fc.constantFrom('service_id', 'service_id_enc', 'service_stream'), fc.jsonValue()),
              fc.jsonValue(),
            ),
            headers: fc.oneof(fc.array(fc.record({ name: fc.constantFrom('X-Service-Id', 'x'), value: fc.jsonValue() })), fc.jsonValue()),
            bounce: fc.oneof(fc.record({ type: fc.jsonValue(), diagnosticCode: fc.jsonValue() }), fc.jsonValue()),
            click: fc.jsonValue(),
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
      fc.property(fc.oneof(eventLike, fc.jsonValue()), fc.option(fc.string(), { nil: undefined }), (payload, svixId) =>
        expectSuccessOrMailwardenError(() => parseResendWebhook(payload, { svixId }), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any signed body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          eventLike.map((event) => JSON.stringify(event)),
        ),
        async (body) => {
          try {
            await webhook.receive(resendRequest(body, [], signingSecret, new Date(NOW)), auth);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('invalid_payload');
          }
        },
      ),
    );
  });
});
