import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryEventTypes, providers } from '../src/events/delivery-event.js';
import { plainDeliveryEvent } from '../src/events/plain-delivery-event.js';
import { deliveryEventSchema } from '../src/api-schemas.js';

/** Strings near every edge the schema has: empty, lengths at the limits, U+0000, lone surrogates, SMTP statuses. */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', 'a', '\u0000', 'x\ud800', '\udc00y', '😀', '5.1.1', '550', '4.2.2', '5.1', 'abc'),
  fc.constantFrom(16, 17, 511, 512, 513, 1024, 1025).map((length) => 'x'.repeat(length)),
);
/** A value of any JSON-ish kind, or one of the schema's own words. */
const anything = fc.oneof(
  text,
  fc.constantFrom<unknown>(
    null,
    undefined,
    0,
    1.5,
    true,
    [],
    {},
    new Date(Number.NaN),
    new Date(0),
    ...providers,
    ...deliveryEventTypes,
    'hard',
    'soft',
    'undetermined',
    'bounce',
    'complaint',
    'unsubscribe',
  ),
);

const detailNames = [
  'smtpStatus',
  'diagnostic',
  'bounceClassification',
  'feedbackType',
  'rejectReason',
  'url',
  'userAgent',
  'extra',
  'toString',
];
const details = fc.oneof(
  fc.dictionary(fc.constantFrom(...detailNames), fc.oneof(text, fc.constantFrom<unknown>(undefined, null, 7)), { maxKeys: 4 }),
  fc.constantFrom<unknown>(undefined, null, [], 'text', new Date(0), Object.create(null) as object),
);

/** Mostly `valid`, sometimes anything else. */
const mostly = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 12 }, { arbitrary: anything, weight: 1 });

/** Events mostly valid, a field now and then replaced by something else, and now and then keys left out. */
const event = fc
  .record({
    provider: mostly(fc.constantFrom(...providers)),
    type: mostly(fc.constantFrom(...deliveryEventTypes)),
    bounceClass: mostly(fc.constantFrom('hard', 'soft', 'undetermined', null, undefined)),
    providerSuppression: mostly(fc.constantFrom('bounce', 'complaint', 'unsubscribe', null, undefined)),
    messageId: mostly(fc.oneof(text, fc.constant(null))),
    recipient: mostly(fc.emailAddress()),
    trackingId: mostly(fc.oneof(text, fc.constant(null))),
    stream: mostly(fc.oneof(text, fc.constantFrom(null, undefined, 'weekly-digest', 'Marketing'))),
    occurredAt: mostly(fc.date({ noInvalidDate: true })),
    eventKey: mostly(text),
    details,
    description: mostly(text),
    unknown: anything,
  })
  .chain((record) =>
    fc.oneof(
      { arbitrary: fc.constant(record), weight: 3 },
      {
        arbitrary: fc
          .subarray(Object.keys(record))
          .map((kept) => Object.fromEntries(Object.entries(record).filter(([key]) => kept.includes(key)))),
        weight: 1,
      },
    ),
  );

describe('plainDeliveryEvent', () => {
  it("answers exactly the schema's output, key order included, or leaves the event to the schema", () => {
    let fast = 0;
    fc.assert(
      fc.property(fc.oneof({ arbitrary: event, weight: 9 }, { arbitrary: anything, weight: 1 }), (input) => {
        const plain = plainDeliveryEvent(input);
        if (plain === undefined) return;
        fast++;
        const parsed = deliveryEventSchema.safeParse(input);
        expect(parsed.success).toBe(true);
        expect(plain).toStrictEqual(parsed.data);
        expect(Object.keys(plain)).toEqual(Object.keys(parsed.data!));
        if (plain.details !== undefined) expect(Object.keys(plain.details)).toEqual(Object.keys(parsed.data!.details!));
      }),
      { numRuns: 3000 },
    );
    // The law says something only about events that take the fast path: enough of them must.
    expect(fast).toBeGreaterThan(100);
  });

  it.each<[string, Record<string, unknown>]>([
    ['an invalid date', { occurredAt: new Date(Number.NaN) }],
    ['an unknown detail', { details: { toString: 'x' } }],
    ['an SMTP status that is none', { details: { smtpStatus: '5.1' } }],
    ['an empty event key', { eventKey: '' }],
    ['a message ID left out (null is the absence)', { messageId: undefined }],
    ['a stream that is not text', { stream: 7 }],
  ])('leaves %s to the schema', (_, change) => {
    const valid = {
      provider: 'sendgrid',
      type: 'delivered',
      messageId: 'm1',
      recipient: 'a@example.com',
      trackingId: null,
      occurredAt: new Date(0),
      eventKey: 'e1',
    };
    expect(plainDeliveryEvent(valid)).toStrictEqual(deliveryEventSchema.parse(valid));
    expect(plainDeliveryEvent({ ...valid, ...change })).toBeUndefined();
    expect(deliveryEventSchema.safeParse({ ...valid, ...change }).success).toBe(false);
  });

  it('takes the fast path for events as the receivers make them', () => {
    const valid = fc.record({
      provider: fc.constantFrom(...providers),
      type: fc.constantFrom(...deliveryEventTypes),
      messageId: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }),
      recipient: fc.emailAddress(),
      trackingId: fc.option(fc.string({ maxLength: 20 })),
      stream: fc.constantFrom(undefined, null, 'marketing', 'weekly-digest'),
      occurredAt: fc.date({ noInvalidDate: true }),
      eventKey: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }),
      details: fc.record(
        { smtpStatus: fc.constantFrom('5.1.1', '550'), diagnostic: fc.string({ minLength: 1, maxLength: 50, unit: 'grapheme-ascii' }) },
        { requiredKeys: [] },
      ),
    });
    const withAndWithoutStream = valid.chain((event) =>
      fc.constantFrom(event, Object.fromEntries(Object.entries(event).filter(([key]) => key !== 'stream'))),
    );
    fc.assert(
      fc.property(withAndWithoutStream, (input) => {
        expect(plainDeliveryEvent(input)).toStrictEqual(deliveryEventSchema.parse(input));
      }),
    );
  });
});
