import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SPARKPOST_METADATA_MAX_BYTES, attachSparkPostTrackingId } from '../../src/carriers/sparkpost.js';
import { MailwardenError } from '../../src/errors.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { createSparkPostWebhook, parseSparkPostWebhook } from '../../src/webhooks/sparkpost.js';
import { deliverSparkPostTransmission } from './sparkpost.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};

const credentials = { username: 'sparkpost', password: randomBytes(16).toString('hex') };
const auth = { basic: [credentials] };
const webhook = createSparkPostWebhook(env);

/** Caller metadata: usually small, sometimes large enough to reach the 10 KB limit with the tracking ID. */
const metadataArbitrary = fc.option(
  fc.dictionary(
    fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constant('service_id')),
    fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.integer({ min: 9_500, max: 10_300 }).map((size) => 'x'.repeat(size)),
    ),
    { maxKeys: 3 },
  ),
  { nil: undefined },
);

const transmissionArbitrary = fc.record({
  metadata: metadataArbitrary,
  recipients: fc.array(
    fc.record(
      { address: fc.constantFrom('jane@example.net', 'John@Example.net'), metadata: metadataArbitrary },
      { requiredKeys: ['address'] },
    ),
    { minLength: 1, maxLength: 3 },
  ),
  level: fc.constantFrom('transmission' as const, 'recipient' as const),
});

describe('SparkPost carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> SparkPost -> webhook gives back %s, or the 10 KB limit truly cannot be met', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(ids, optionalStreamArbitrary, transmissionArbitrary, async (trackingId, stream, { level, ...transmission }) => {
        let sent: typeof transmission;
        const ours = stream === undefined ? { service_id: trackingId } : { service_id: trackingId, service_stream: stream };
        try {
          sent = attachSparkPostTrackingId(transmission, trackingId, stream === undefined ? { level } : { level, stream });
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
          // Independently: some recipient's merged metadata with the plain ID is over the limit.
          const sizes = transmission.recipients.map((recipient) => {
            const merged =
              level === 'transmission'
                ? {
                    ...transmission.metadata,
                    ...ours,
                    ...recipient.metadata,
                    ...(recipient.metadata && 'service_id' in recipient.metadata ? ours : {}),
                  }
                : { ...transmission.metadata, ...recipient.metadata, ...ours };
            return Buffer.byteLength(JSON.stringify(merged));
          });
          const transmissionSize = Buffer.byteLength(
            JSON.stringify(level === 'transmission' ? { ...transmission.metadata, ...ours } : (transmission.metadata ?? {})),
          );
          expect(Math.max(transmissionSize, ...sizes)).toBeGreaterThan(SPARKPOST_METADATA_MAX_BYTES);
          return;
        }
        const { request, transmissionId } = deliverSparkPostTransmission(sent, credentials);
        const receipt = await webhook.receive(request, auth);
        expect(receipt.warnings).toEqual([]);
        expect(receipt.events).toHaveLength(transmission.recipients.length);
        for (const event of receipt.events) {
          expect(event.trackingId).toBe(trackingId);
          expect(event.stream).toBe(stream);
          expect(event.messageId).toBe(transmissionId);
          expect(event.type).toBe('delivered');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseSparkPostWebhook on arbitrary input', () => {
  /** Batches shaped like SparkPost's, with any values where the fields are. */
  const eventLike = fc.record(
    {
      msys: fc.dictionary(
        fc.constantFrom('message_event', 'track_event', 'gen_event', 'unsubscribe_event', 'relay_event', 'other'),
        fc.record(
          {
            type: fc.oneof(fc.constantFrom('bounce', 'out_of_band', 'delivery', 'open', 'policy_rejection'), fc.jsonValue()),
            bounce_class: fc.oneof(fc.constantFrom('1', '10', '25', '60', '90'), fc.jsonValue()),
            rcpt_to: fc.oneof(fc.constant('a@example.net'), fc.jsonValue()),
            raw_rcpt_to: fc.jsonValue(),
            rcpt_meta: fc.oneof(fc.record({ service_id: fc.jsonValue() }), fc.jsonValue()),
            timestamp: fc.oneof(fc.constant('1700000000'), fc.jsonValue(), fc.string()),
            event_id: fc.jsonValue(),
            transmission_id: fc.jsonValue(),
            raw_reason: fc.jsonValue(),
          },
          { requiredKeys: [] },
        ),
        { maxKeys: 2 },
      ),
    },
    { requiredKeys: [] },
  );

  it('returns a receipt or throws invalid_payload for any JSON value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(eventLike), fc.array(fc.jsonValue())), (value) =>
        expectSuccessOrMailwardenError(() => parseSparkPostWebhook(value), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any authenticated body', async () => {
    const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.array(eventLike).map((batch) => JSON.stringify(batch)),
          fc.uint8Array(),
        ),
        async (body) => {
          const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
          try {
            await webhook.receive({ method: 'POST', headers: { authorization }, rawBody }, auth);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('invalid_payload');
          }
        },
      ),
    );
  });
});
