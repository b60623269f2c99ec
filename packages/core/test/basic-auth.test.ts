import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { decodeBasicCredentials } from '../src/webhooks/auth.js';

const token = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');

describe('Basic credentials are canonical base64 of UTF-8, or refused', () => {
  test('UTF-8 credentials decode exactly, non-ASCII included', () => {
    expect(decodeBasicCredentials(token('postmark:pässwörd 🎉'))).toBe('postmark:pässwörd 🎉');
    expect(decodeBasicCredentials(token('a:'))).toBe('a:');
    expect(decodeBasicCredentials('')).toBe('');
  });

  test('the Latin-1 spelling of a non-ASCII password is refused, not decoded with replacement characters', () => {
    expect(decodeBasicCredentials(token(Buffer.from('postmark:pässwörd', 'latin1')))).toBeUndefined();
    // Before, both decoded to the same string, so either spelling matched a password containing U+FFFD.
    expect(decodeBasicCredentials(token(Buffer.from([0x61, 0x3a, 0xe4])))).toBeUndefined();
    expect(decodeBasicCredentials(token(Buffer.from([0x61, 0x3a, 0xf6])))).toBeUndefined();
  });

  test.each([
    ['extra padding', `${token('user:pass')}=`],
    ['padding inside', 'dXNl=cjpwYXNz'],
    ['no padding', token('user:pas').replace(/=+$/, '')],
    ['stray bits in the last character', 'YR=='],
    ['white space', ` ${token('user:pass')}`],
    ['URL-safe alphabet', token('user:>>>?').replace(/\+/g, '-').replace(/\//g, '_')],
  ])('%s is refused', (_name, credentials) => {
    expect(decodeBasicCredentials(credentials)).toBeUndefined();
  });

  test('law: every string round-trips through its one canonical token, and no other token of it decodes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (credentials) => {
        expect(decodeBasicCredentials(token(credentials))).toBe(credentials);
        expect(decodeBasicCredentials(`${token(credentials)}=`)).toBeUndefined();
      }),
    );
  });
});
