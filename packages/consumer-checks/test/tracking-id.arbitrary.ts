import fc from 'fast-check';

/**
 * Valid tracking IDs (1–128 code points, no U+0000), biased towards what the real SDKs and carriers
 * change: bare CR and LF, CRLF, quotes and backslashes, `=?` encoded-word look-alikes, blanks at the
 * ends, non-ASCII and astral characters, and the longest IDs.
 */
export const trackingIdArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }) },
        {
          weight: 3,
          arbitrary: fc.constantFrom(
            '\n',
            '\r',
            '\r\n',
            '"',
            '\\',
            ' ',
            '\t',
            '=?',
            '?=',
            '=?UTF-8?B?IiI=?=',
            '=?utf-8?q?=22?=',
            '{',
            '}',
            ',',
          ),
        },
        { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }) },
        { weight: 1, arbitrary: fc.constantFrom('😀', 'ü', '日本', '\u007f', '\u0085', '\u00a0', '\ufeff', '\u2028') },
      ),
      { minLength: 1, maxLength: 30 },
    )
    .map((parts) => [...parts.join('').replaceAll('\u0000', '')].slice(0, 128).join(''))
    .filter((id) => id.length > 0),
  fc.array(fc.constantFrom('😀', 'a', '\n', '"', 'ü'), { minLength: 128, maxLength: 128 }).map((chars) => chars.join('')),
);

/** A valid stream name (1–64 of `[a-z0-9_-]`, starting with a letter or digit), or none (`undefined`). */
export const optionalStreamArbitrary: fc.Arbitrary<string | undefined> = fc.option(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/), {
  nil: undefined,
});
