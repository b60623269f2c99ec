import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MAX_STREAM_LENGTH, assertStreamName, isStreamName } from '../src/stream.js';
import { expectMailwardenError } from './expect-mailwarden-error.js';

describe('stream names', () => {
  test.each(['marketing', 'weekly-digest', 'product_updates', '0', 'a'.repeat(MAX_STREAM_LENGTH)])('%s is a stream name', (name) => {
    expect(isStreamName(name)).toBe(true);
    expect(assertStreamName(name)).toBe(name);
  });

  test.each(['', 'Marketing', '-news', '_news', 'news letter', 'news.letter', 'café', 'a'.repeat(MAX_STREAM_LENGTH + 1)])(
    '%j is refused with invalid_stream',
    async (name) => {
      expect(isStreamName(name)).toBe(false);
      await expectMailwardenError(() => assertStreamName(name), 'invalid_stream');
    },
  );

  test('a value that is not a string is no stream name', () => {
    for (const value of [undefined, null, 1, {}, ['marketing']]) expect(isStreamName(value)).toBe(false);
  });

  test('a name is valid exactly when it is 1 to 64 of [a-z0-9_-] and does not start with - or _', () => {
    const character = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_A.@ é'.split(''));
    fc.assert(
      fc.property(fc.array(character, { maxLength: MAX_STREAM_LENGTH + 2 }), (characters) => {
        const name = characters.join('');
        const expected =
          name.length >= 1 && name.length <= MAX_STREAM_LENGTH && /^[a-z0-9]/.test(name) && [...name].every((c) => /[a-z0-9_-]/.test(c));
        expect(isStreamName(name)).toBe(expected);
      }),
    );
  });
});
