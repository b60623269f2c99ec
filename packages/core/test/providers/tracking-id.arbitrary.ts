import fc from 'fast-check';

/**
 * Every valid tracking ID: 1–128 code points of arbitrary Unicode, biased towards the characters that
 * break carriers (quotes, backslashes, spaces, `=?` sequences that look like RFC 2047 encoded words,
 * control characters, astral characters, long runs).
 */
export const trackingIdArbitrary: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          '"',
          "'",
          '\\',
          ' ',
          '=?',
          '?=',
          '=?UTF-8?B?',
          '?Q?',
          '\t',
          '\n',
          '\r\n',
          ',',
          ';',
          ':',
          '{',
          '}',
          '%',
          '+',
          '/',
          '.',
          '_',
          '-',
        ),
      },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constantFrom('😀', '𝔘', '€', 'ü', '日本', '\u0001', '\u007f', '\u00a0', '\ufeff', '\u2028') },
    ),
    { minLength: 1, maxLength: 40 },
  )
  // U+0000 is the one character a tracking ID may not hold (no store or header can keep it).
  .map((parts) => [...parts.join('').replaceAll('\u0000', '')].slice(0, 128).join(''))
  .filter((id) => id.length > 0);

/** Tracking IDs of exactly 128 code points, the spec's limit, in the widest UTF-8 encoding. */
export const maxLengthTrackingIdArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', minLength: 128, maxLength: 128 }),
  fc.array(fc.constantFrom('😀', '𝔘', '€', 'a', '"'), { minLength: 128, maxLength: 128 }).map((chars) => chars.join('')),
);

/** Every valid stream name (`isStreamName`): 1–64 of `[a-z0-9_-]`, starting with a letter or digit. */
export const streamArbitrary: fc.Arbitrary<string> = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/);

/** A stream or none (`undefined`), for the round trips that must hold with and without one. */
export const optionalStreamArbitrary: fc.Arbitrary<string | undefined> = fc.option(streamArbitrary, { nil: undefined });
