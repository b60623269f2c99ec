import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAILERSEND_MAX_TAGS, attachMailerSendTrackingId } from '../../src/carriers/mailersend.js';
import { MailwardenError } from '../../src/errors.js';
import { createMailerSendWebhook, mailerSendSignature, parseMailerSendWebhook } from '../../src/webhooks/mailersend.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { deliverMailerSendEmail } from './mailersend.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const secret = randomBytes(16).toString('hex');
const auth = { signingSecret: secret };
const webhook = createMailerSendWebhook(env);

/** The caller's own tags: any strings, ours among them sometimes, up to the limit. */
const callerTagsArbitrary = fc.option(
  fc.array(
    fc.oneof(
      fc.string({ minLength: 1, maxLength: 20 }).filter((tag) => tag.trim() === tag && tag !== ''),
      fc.constantFrom('service_id:old', 'service_id_b64u:b2xk', 'service_stream:old', 'newsletter'),
    ),
    { maxLength: MAILERSEND_MAX_TAGS },
  ),
  { nil: undefined },
);

const emailArbitrary = fc.record({
  tags: callerTagsArbitrary,
  to: fc.array(fc.record({ email: fc.constantFrom('jane@example.net', 'John@Example.net') }), { minLength: 1, maxLength: 3 }),
});

describe('MailerSend carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> MailerSend -> webhook gives back %s, or the 5-tag limit truly cannot be met', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(ids, optionalStreamArbitrary, emailArbitrary, async (trackingId, stream, { tags, ...rest }) => {
        const email = tags === undefined ? rest : { ...rest, tags };
        let sent: typeof email;
        try {
          sent = attachMailerSendTrackingId(email, trackingId, stream === undefined ? {} : { stream });
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
          // Independently: the caller's tags that are not ours, plus one tag (two with a stream), are over 5.
          const ours = stream === undefined ? /^service_id(_b64u)?:/ : /^(service_id(_b64u)?|service_stream):/;
          const others = (tags ?? []).filter((tag) => !ours.test(tag));
          expect(others.length + (stream === undefined ? 1 : 2)).toBeGreaterThan(MAILERSEND_MAX_TAGS);
          return;
        }
        const { requests, messageId } = deliverMailerSendEmail(sent, secret);
        expect(requests).toHaveLength(rest.to.length);
        for (const request of requests) {
          const receipt = await webhook.receive(request, auth);
          expect(receipt.warnings).toEqual([]);
          expect(receipt.events).toHaveLength(1);
          expect(receipt.events[0]).toMatchObject({ type: 'delivered', trackingId, messageId });
          if (stream !== undefined) expect(receipt.events[0]!.stream).toBe(stream);
        }
        // The caller's own tags (not ours) are kept, in order.
        const kept = (tags ?? []).filter(
          (tag) => !/^service_id(_b64u)?:/.test(tag) && !(stream !== undefined && tag.startsWith('service_stream:')),
        );
        expect((sent as { tags: string[] }).tags.slice(0, kept.length)).toEqual(kept);
      }),
      { numRuns: 300 },
    );
  });

  // Found by the law above: a trailing space is trimmed by MailerSend, so such an ID travels encoded.
  it('pins: an ID ending with a space comes back with it', async () => {
    const sent = attachMailerSendTrackingId({ to: [{ email: 'a@example.net' }] }, 'a ');
    const [request] = deliverMailerSendEmail(sent, secret).requests;
    expect((await webhook.receive(request!, auth)).events[0]!.trackingId).toBe('a ');
  });
});

describe('parseMailerSendWebhook on arbitrary input', () => {
  /** Bodies shaped like MailerSend's, both versions, with any values where the fields are. */
  const activityLike = fc.record(
    {
      type: fc.oneof(fc.constantFrom('activity.sent', 'activity.hard_bounced', 'webhook.test', 'activity.clicked'), fc.jsonValue()),
      created_at: fc.oneof(fc.constant('2026-09-12T18:42:56.000000Z'), fc.constant('2026-09-12 18:42:56'), fc.jsonValue(), fc.string()),
      data: fc.oneof(
        fc.record(
          {
            id: fc.jsonValue(),
            type: fc.oneof(fc.constantFrom('sent', 'soft_bounced', 'suppressed', 'clicked'), fc.jsonValue()),
            recipient: fc.oneof(fc.constant('r@example.net'), fc.record({ email: fc.jsonValue() }), fc.jsonValue()),
            message_id: fc.jsonValue(),
            tags: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constant('service_id_b64u:AA'), fc.jsonValue())), fc.jsonValue()),
            meta: fc.oneof(fc.constant([]), fc.record({ bounce_code: fc.jsonValue(), bounce_reason: fc.jsonValue(), url: fc.jsonValue() })),
            email: fc.oneof(
              fc.record({
                tags: fc.jsonValue(),
                message: fc.oneof(fc.record({ id: fc.jsonValue() }), fc.jsonValue()),
                recipient: fc.oneof(fc.record({ email: fc.jsonValue() }), fc.jsonValue()),
              }),
              fc.jsonValue(),
            ),
            morph: fc.oneof(fc.record({ object: fc.jsonValue(), reason: fc.jsonValue(), url: fc.jsonValue() }), fc.jsonValue()),
            created_at: fc.jsonValue(),
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
      fc.property(fc.oneof(fc.jsonValue(), activityLike), (value) =>
        expectSuccessOrMailwardenError(() => parseMailerSendWebhook(value), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any signed body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          activityLike.map((body) => JSON.stringify(body)),
          fc.uint8Array(),
        ),
        async (body) => {
          const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
          const signature = mailerSendSignature(rawBody, secret);
          try {
            await webhook.receive({ method: 'POST', headers: { signature }, rawBody }, auth);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('invalid_payload');
          }
        },
      ),
    );
  });
});
