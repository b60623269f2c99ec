import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachMailjetTrackingId } from '../../src/carriers/mailjet.js';
import { MailwardenError } from '../../src/errors.js';
import { parseJsonWithExactIntegers } from '../../src/json/exact-integers.js';
import { createMailjetWebhook, parseMailjetWebhook } from '../../src/webhooks/mailjet.js';
import type { WebhookEnvironment } from '../../src/webhooks/provider.js';
import { expectSuccessOrMailwardenError } from '../expect-mailwarden-error.js';
import { deliverMailjetMessages } from './mailjet.simulator.js';
import { maxLengthTrackingIdArbitrary, optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const env: WebhookEnvironment = {
  now: () => Date.parse('2026-01-01T00:00:00Z'),
  fetchCertificate: () => Promise.reject(new Error('no network in tests')),
  confirmSubscription: () => Promise.reject(new Error('no network in tests')),
};
const credentials = { username: 'mailjet', password: randomBytes(16).toString('hex') };
const auth = { basic: [credentials] };
const webhook = createMailjetWebhook(env);

/** A caller's EventPayload: none, a JSON object (which may hold our keys already), or text that is no JSON object. */
const callerPayloadArbitrary = fc.oneof(
  fc.constant(undefined),
  fc
    .dictionary(fc.oneof(fc.string(), fc.constantFrom('service_id', 'service_stream')), fc.jsonValue())
    .map((object) => JSON.stringify(object)),
  fc.oneof(fc.string(), fc.json()),
);

describe('Mailjet carrier round trip', () => {
  it.each([
    ['any tracking ID', trackingIdArbitrary],
    ['128-character tracking IDs', maxLengthTrackingIdArbitrary],
  ])('attach -> Mailjet -> webhook gives back %s, the caller’s payload and CustomID kept', async (_, ids) => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        optionalStreamArbitrary,
        fc.array(fc.tuple(callerPayloadArbitrary, fc.option(fc.string(), { nil: undefined })), { minLength: 1, maxLength: 3 }),
        fc.constantFrom('sent' as const, 'bounce' as const, 'unsub' as const),
        fc.boolean(),
        fc.boolean(),
        async (trackingId, stream, callers, event, grouped, escapeNonAscii) => {
          const Messages = callers.map(([EventPayload, CustomID], index) => ({
            From: { Email: 'news@example.com' },
            To: [{ Email: `r${index}@example.com` }],
            ...(EventPayload === undefined ? {} : { EventPayload }),
            ...(CustomID === undefined ? {} : { CustomID }),
          }));
          let sent: { Messages: Record<string, unknown>[] };
          try {
            sent = attachMailjetTrackingId({ Messages }, trackingId, stream === undefined ? {} : { stream });
          } catch (error) {
            // Only a caller's non-empty EventPayload that is no JSON object cannot also hold the ID.
            expect(error).toBeInstanceOf(MailwardenError);
            expect((error as MailwardenError).code).toBe('tracking_id_not_carriable');
            expect(callers.some(([payload]) => payload !== undefined && payload !== '' && !isJsonObjectText(payload))).toBe(true);
            return;
          }
          const posts = deliverMailjetMessages(sent, { event, grouped, escapeNonAscii, credentials });
          const received = [];
          for (const { request, messageIds } of posts) {
            const receipt = await webhook.receive(request, auth);
            expect(receipt.warnings).toEqual([]);
            expect(receipt.events.map((one) => one.messageId)).toEqual(messageIds);
            received.push(...receipt.events);
          }
          expect(received).toHaveLength(callers.length);
          received.forEach((one, index) => {
            expect(one.trackingId).toBe(trackingId);
            const [payload, customId] = callers[index]!;
            const own = payload === undefined || payload === '' ? {} : (JSON.parse(payload) as Record<string, unknown>);
            // Without a stream, the caller's own service_stream (if any) is left as it was, and read back.
            const callers_stream = own['service_stream'];
            expect(one.stream).toBe(stream ?? (typeof callers_stream === 'string' && callers_stream !== '' ? callers_stream : undefined));
            // Every other key of the caller's payload comes back as it was, and CustomID untouched.
            const echoed = JSON.parse(sent.Messages[index]!['EventPayload'] as string) as Record<string, unknown>;
            const { service_id: _id, service_stream: _stream, ...rest } = own;
            expect(echoed).toMatchObject(rest);
            expect(sent.Messages[index]!['CustomID']).toBe(customId);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

function hasUnsafeInteger(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(hasUnsafeInteger);
}

function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

describe('parseJsonWithExactIntegers', () => {
  it('gives what JSON.parse gives, with every unsafe integer as its exact digits', () => {
    // The other values hold no unsafe integer of their own (those are the digits case, checked on `big`).
    const withBig = fc
      .jsonValue()
      .filter((value) => !hasUnsafeInteger(value))
      .chain((value) =>
        fc
          .bigInt({ min: -(2n ** 80n), max: 2n ** 80n })
          .map((big) => ({ value, big, text: JSON.stringify([value, '__BIG__']).replace('"__BIG__"', String(big)) })),
      );
    fc.assert(
      fc.property(withBig, ({ value, big, text }) => {
        const parsed = parseJsonWithExactIntegers(text) as unknown[];
        expect(parsed[0]).toEqual(JSON.parse(JSON.stringify(value)));
        expect(parsed[1]).toEqual(Number.isSafeInteger(Number(big)) ? Number(big) : String(big));
      }),
    );
  });

  // Found by the property above: 2^53 itself is unsafe (2^53 + 1 rounds to it), so it comes back as digits.
  it('reads 2^53 as its digits', () => {
    expect(parseJsonWithExactIntegers('[9007199254740992]')).toEqual(['9007199254740992']);
  });

  it('throws exactly when JSON.parse throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.stringMatching(/^[\d\s,.eE+"\\[\]{}:-]{0,40}$/)), (text) => {
        let expected = true;
        try {
          JSON.parse(text);
        } catch {
          expected = false;
        }
        let actual = true;
        try {
          parseJsonWithExactIntegers(text);
        } catch {
          actual = false;
        }
        expect(actual).toBe(expected);
      }),
    );
  });
});

describe('parseMailjetWebhook on arbitrary input', () => {
  const eventLike = fc.record(
    {
      event: fc.oneof(fc.constantFrom('sent', 'open', 'click', 'bounce', 'spam', 'blocked', 'unsub'), fc.jsonValue()),
      time: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.jsonValue()),
      MessageID: fc.oneof(
        fc.bigInt({ min: 0n, max: 2n ** 70n }).map((n) => ({ big: n.toString() })),
        fc.jsonValue(),
      ),
      email: fc.oneof(fc.constant('a@example.com'), fc.jsonValue()),
      hard_bounce: fc.jsonValue(),
      error: fc.oneof(fc.constantFrom('preblocked', 'spam reporter', 'greylisted'), fc.jsonValue()),
      Payload: fc.oneof(fc.constant('{"service_id":"a"}'), fc.jsonValue()),
      url: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  // A big integer MessageID is written as raw digits, as Mailjet writes it.
  const bodyText = fc
    .oneof(eventLike, fc.array(eventLike, { maxLength: 4 }))
    .map((body) => JSON.stringify(body).replace(/\{"big":"(\d+)"\}/g, '$1'));

  it('returns a receipt or throws invalid_payload for any text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), bodyText), (text) =>
        expectSuccessOrMailwardenError(() => parseMailjetWebhook(text), 'invalid_payload'),
      ),
    );
  });

  it('receive returns a receipt or throws invalid_payload for any authenticated body', async () => {
    const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), bodyText, fc.uint8Array()), async (body) => {
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
