import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { checkSharedSecret } from '../src/webhooks/auth.js';
import type { WebhookRequest } from '../src/webhooks/request.js';

const token = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The model: the `user:password` of a Basic credentials token, or `undefined` unless it is canonical
 * base64 (RFC 4648: padded, no stray `=`, no stray bits) of UTF-8 (RFC 7617 with `charset="UTF-8"`).
 * `checkSharedSecret` must admit a token exactly when this decodes it to a configured `user:password`.
 */
function decodeBasicCredentials(credentials: string): string | undefined {
  if (!BASE64.test(credentials)) return undefined;
  const bytes = Buffer.from(credentials, 'base64');
  if (bytes.toString('base64') !== credentials) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function admits(credentials: string, username: string, password: string): boolean {
  const request: WebhookRequest = { method: 'POST', headers: { authorization: `Basic ${credentials}` }, rawBody: new Uint8Array() };
  try {
    checkSharedSecret(request, { basic: [{ username, password }] });
    return true;
  } catch {
    return false;
  }
}

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

  test('law: checkSharedSecret admits a token exactly when the model decodes it to the configured user:password', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.constantFrom('', ':', 'a:b', 'ä', '\ud800'),
    );
    const spelling = (credentials: string) =>
      fc.oneof(
        fc.constant(token(credentials)),
        fc.constant(`${token(credentials)}=`),
        fc.constant(token(Buffer.from(credentials, 'latin1'))),
        fc.constant(token(credentials).replace(/=+$/, '')),
        fc.string({ unit: fc.constantFrom(...'ABab01+/='), maxLength: 12 }),
      );
    fc.assert(
      fc.property(
        fc
          .tuple(text, text)
          .chain(([username, password]) =>
            fc.tuple(fc.constant(username), fc.constant(password), fc.oneof(spelling(`${username}:${password}`), text.chain(spelling))),
          ),
        ([username, password, credentials]) => {
          expect(admits(credentials, username, password)).toBe(decodeBasicCredentials(credentials) === `${username}:${password}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a password with a lone surrogate, which no UTF-8 spells, admits nothing', () => {
    const configured = 'a:\ud800';
    for (const spelling of [token(configured), token('a:\ufffd'), token(Buffer.from(configured, 'utf16le'))])
      expect(admits(spelling, 'a', '\ud800')).toBe(false);
  });
});
