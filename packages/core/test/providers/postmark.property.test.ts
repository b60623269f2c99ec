import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachPostmarkTrackingId } from '../../src/carriers/postmark.js';
import { MailwardenError } from '../../src/errors.js';
import { createPostmarkWebhook, parsePostmarkWebhook } from '../../src/webhooks/postmark.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { deliverPostmarkMessages } from './postmark.simulator.js';
import { maxLengthTrackingIdArbitrary, trackingIdArbitrary, optionalStreamArbitrary } from './tracking-id.arbitrary.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const credentials = { username: 'postmark', password: randomBytes(16).toString('hex') };
const auth = { basic: [credentials] };
const webhook = createPostmarkWebhook(env);

/** Caller Metadata that Postmark itself accepts: keys of 1–20 characters unique but for case, values of at most 80. */
const callerMetadataArbitrary = fc
  .uniqueArray(
    fc.tuple(
      fc.oneof(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.constantFrom(
          'ID',
          'service_id',
          'service_id_2',
          'Service_Id',
          'SERVICE_ID_2',
          'service_id_9',
          'service_stream',
          'Service_Stream',
        ),
      ),
      fc.string({ maxLength: 80 }),
    ),
    { maxLength: 10, selector: ([key]) => key.toLowerCase() },
  )
  .map((entries) => Object.fromEntries(entries));

/** Independently of the carrier: the fewest values of at most 80 UTF-16 units, cut between code points. */
function fieldsNeeded(trackingId: string): number {
  let fields = 1;
  let used = 0;
  for (const char of Array.from(trackingId)) {
    if (used + char.length > 80) {
      fields++;
      used = 0;
    }
    used += char.length;
  }
  return fields;
}

describe('Postmark carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Postmark -> webhook gives back %s, or Postmark’s Metadata limits truly cannot be met', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        optionalStreamArbitrary,
        fc.array(callerMetadataArbitrary, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.constantFrom('Delivery' as const, 'Bounce' as const),
        fc.boolean(),
        async (trackingId, stream, metadatas, asBatch, record, escapeNonAscii) => {
          const messages = metadatas.map((Metadata, index) => ({ From: 'news@example.com', To: `r${index}@example.com`, Metadata }));
          let sent: unknown;
          try {
            const options = stream === undefined ? undefined : { stream };
            sent = asBatch
              ? attachPostmarkTrackingId(messages, trackingId, options)
              : attachPostmarkTrackingId(messages[0]!, trackingId, options);
          } catch (error) {
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
            const needed = fieldsNeeded(trackingId);
            const ours = Array.from({ length: needed }, (_, index) => (index === 0 ? 'service_id' : `service_id_${index + 1}`));
            if (stream !== undefined) ours.push('service_stream');
            const impossible = (asBatch ? metadatas : metadatas.slice(0, 1)).some((metadata) => {
              const others = Object.keys(metadata).filter(
                (key) => !/^service_id(_\d+)?$/.test(key) && !(stream !== undefined && key === 'service_stream'),
              );
              return others.length + ours.length > 10 || others.some((key) => ours.includes(key.toLowerCase()));
            });
            expect(impossible).toBe(true);
            return;
          }
          const posts = deliverPostmarkMessages(sent, { record, escapeNonAscii, credentials });
          for (const [index, { request, messageId, id }] of posts.entries()) {
            const receipt = await webhook.receive(request, auth);
            expect(receipt.warnings).toEqual([]);
            expect(receipt.events).toHaveLength(1);
            expect(receipt.events[0]!.trackingId).toBe(trackingId);
            // Without a stream, the caller's own service_stream (if any) is left as it was, and read back.
            const callers = metadatas[index]!['service_stream'];
            expect(receipt.events[0]!.stream).toBe(stream ?? (callers === '' ? undefined : callers));
            expect(receipt.events[0]!.messageId).toBe(messageId);
            if (id !== undefined) expect(receipt.events[0]!.eventKey).toBe(`Bounce:${id}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('parsePostmarkWebhook on arbitrary input', () => {
  const receivedAt = new Date(0);

  /** Records shaped like Postmark's, with any values where the fields are. */
  const recordLike = fc.record(
    {
      RecordType: fc.oneof(fc.constantFrom('Bounce', 'SpamComplaint', 'Delivery', 'Open', 'Click', 'SubscriptionChange'), fc.jsonValue()),
      ID: fc.oneof(
        fc.bigInt({ min: 0n, max: 2n ** 70n }).map((n) => ({ big: n.toString() })),
        fc.jsonValue(),
      ),
      Type: fc.jsonValue(),
      TypeCode: fc.oneof(fc.constantFrom(1, 2, 16, 4096, 100000, 100001), fc.jsonValue()),
      Email: fc.oneof(fc.constant('a@example.com'), fc.jsonValue()),
      Recipient: fc.jsonValue(),
      MessageID: fc.jsonValue(),
      BouncedAt: fc.oneof(fc.constant('2026-01-01T00:00:00Z'), fc.string(), fc.jsonValue()),
      SuppressSending: fc.jsonValue(),
      SuppressionReason: fc.oneof(fc.constantFrom('HardBounce', 'SpamComplaint', 'ManualSuppression'), fc.jsonValue()),
      Metadata: fc.oneof(fc.dictionary(fc.constantFrom('ID', 'service_id', 'service_id_2', 'x'), fc.jsonValue()), fc.jsonValue()),
    },
    { requiredKeys: [] },
  );
  // A big integer ID is written as raw digits, as Postmark writes it.
  const recordText = recordLike.map((record) => JSON.stringify(record).replace(/\{"big":"(\d+)"\}/, '$1'));

  it('returns a receipt or throws invalid_payload for any text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          recordText,
          fc.jsonValue().map((value) => JSON.stringify(value) ?? ''),
        ),
        (text) => expectSuccessOrMailwardenError(() => parsePostmarkWebhook(text, receivedAt), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any authenticated body', async () => {
    const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), recordText, fc.uint8Array()), async (body) => {
        const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
        try {
          await webhook.receive({ method: 'POST', headers: { authorization }, rawBody }, auth);
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('invalid_payload');
        }
      }),
    );
  });
});
