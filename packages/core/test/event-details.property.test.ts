// What receivers make of provider text always passes the event schema: hostile text (U+0000, lone
// surrogates, over-long strings) is fitted, never a reason to skip the event.
import { eventDetails, eventDetailLimits } from '@mailwarden/core';
import { eventDetailsSchema } from '@mailwarden/core/schemas';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { smtpStatusIn } from '../src/events/delivery-event.js';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 290, maxLength: 1100 }),
  fc.constantFrom('', '   ', '\u0000', '\ud800', '\udc00x', 'a\ud83d', '5.1.1', '550', '605', ' 4.2.2 '),
);
const value = fc.oneof(text, fc.integer(), fc.double(), fc.constant(null), fc.constant(undefined), fc.constant({ nested: 'x' }));
const raw = fc.record(
  Object.fromEntries(Object.keys(eventDetailLimits).map((name) => [name, value])) as Record<keyof typeof eventDetailLimits, typeof value>,
  {
    requiredKeys: [],
  },
);

describe('eventDetails', () => {
  test('law: whatever a payload holds, the details pass deliveryEventSchema, within each limit, non-empty', () => {
    fc.assert(
      fc.property(raw, (input) => {
        const details = eventDetails(input);
        if (details === undefined) return;
        expect(eventDetailsSchema.safeParse(details).success).toBe(true);
        expect(Object.keys(details).length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });

  test('cuts at the limit but never inside a surrogate pair, and replaces what no store keeps', () => {
    expect(eventDetails({ diagnostic: `${'x'.repeat(499)}😀` })).toStrictEqual({ diagnostic: 'x'.repeat(499) });
    expect(eventDetails({ diagnostic: 'a\u0000b\ud800c' })).toStrictEqual({ diagnostic: 'a\ufffdb\ufffdc' });
    expect(eventDetails({ smtpStatus: '605', diagnostic: '  ' })).toBeUndefined();
    expect(eventDetails({ smtpStatus: 550 })).toStrictEqual({ smtpStatus: '550' });
  });

  test('smtpStatusIn: the enhanced code, else the reply code the text starts with', () => {
    expect(smtpStatusIn('smtp; 550 5.1.1 user unknown')).toBe('5.1.1');
    expect(smtpStatusIn('smtp;550 Rejected')).toBe('550');
    expect(smtpStatusIn('452 4.2.2 Mailbox full')).toBe('4.2.2');
    expect(smtpStatusIn('250 OK')).toBe('250');
    // A version number or an IP address is no status.
    expect(smtpStatusIn('Mailer 10.5.1.1 says no')).toBeUndefined();
    expect(smtpStatusIn('Out of office until Monday')).toBeUndefined();
    expect(smtpStatusIn(undefined)).toBeUndefined();
  });
});
