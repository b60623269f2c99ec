import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createUnsubscribeTokenCodec, type UnsubscribeTokenContents } from '../src/unsubscribe/token.js';
import { PROJECT_ID } from '../src/input.js';
import { emailLike } from './arbitraries.js';

// Laws of the unsubscribe token (docs/unsubscribe.md#the-token): what is sealed opens unchanged, under
// any configured secret list whose first secret sealed it or that still lists it; any change to a token
// is refused; nothing of the address can be read from it.

const secret = fc.string({ minLength: 32, maxLength: 48 });
const projectId = fc.stringMatching(PROJECT_ID);
const stream = fc.option(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/), { nil: null });
const contents: fc.Arbitrary<UnsubscribeTokenContents> = fc.record({
  projectId,
  stream,
  // Any text: the codec seals what it is given (the links normalize first), lone surrogates included.
  email: fc.oneof(
    emailLike,
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: fc.nat(0xffff).map((unit) => String.fromCharCode(unit)) }),
  ),
});

describe('unsubscribe tokens', () => {
  it('open to what was sealed, for any project, stream and address', () => {
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 3 }), contents, (secrets, sealed) => {
        const codec = createUnsubscribeTokenCodec(secrets);
        const token = codec.seal(sealed);
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(codec.open(token)).toStrictEqual({ ...sealed });
      }),
    );
  });

  it('refuse any single-byte change', () => {
    const codec = createUnsubscribeTokenCodec(['a'.repeat(32)]);
    fc.assert(
      fc.property(contents, fc.nat(), fc.integer({ min: 1, max: 255 }), (sealed, at, change) => {
        const bytes = Buffer.from(codec.seal(sealed), 'base64url');
        bytes[at % bytes.length]! ^= change;
        expect(codec.open(bytes.toString('base64url'))).toBeUndefined();
      }),
    );
  });

  it('refuse any change of one character of the text', () => {
    const codec = createUnsubscribeTokenCodec(['a'.repeat(32)]);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(contents, fc.nat(), fc.constantFrom(...alphabet, '=', '.', '+', '/'), (sealed, at, replacement) => {
        const token = codec.seal(sealed);
        const index = at % token.length;
        fc.pre(token[index] !== replacement);
        expect(codec.open(token.slice(0, index) + replacement + token.slice(index + 1))).toBeUndefined();
      }),
    );
  });

  it('refuse cut, extended and foreign texts', () => {
    const codec = createUnsubscribeTokenCodec(['a'.repeat(32)]);
    const token = codec.seal({ projectId: 'acme', stream: 'marketing', email: 'ana@example.com' });
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.string({ maxLength: 8 }), (cut, tail) => {
        expect(codec.open(token.slice(0, cut))).toBeUndefined();
        if (tail !== '') expect(codec.open(token + tail)).toBeUndefined();
        expect(codec.open(tail)).toBeUndefined();
      }),
    );
  });

  it('rotate: the first secret seals, every listed one opens, an unlisted one does not', () => {
    fc.assert(
      fc.property(secret, secret, contents, (oldSecret, newSecret, sealed) => {
        fc.pre(oldSecret !== newSecret);
        const before = createUnsubscribeTokenCodec([oldSecret]);
        const during = createUnsubscribeTokenCodec([newSecret, oldSecret]);
        const after = createUnsubscribeTokenCodec([newSecret]);
        const oldToken = before.seal(sealed);
        const newToken = during.seal(sealed);
        expect(during.open(oldToken)).toStrictEqual({ ...sealed });
        expect(during.open(newToken)).toStrictEqual({ ...sealed });
        expect(after.open(newToken)).toStrictEqual({ ...sealed });
        expect(after.open(oldToken)).toBeUndefined();
        expect(before.open(newToken)).toBeUndefined();
      }),
    );
  });

  it('keep the address unreadable: a fresh nonce each time, no byte run of the address in the token', () => {
    const codec = createUnsubscribeTokenCodec(['s'.repeat(32)]);
    const sealed = { projectId: 'acme', stream: null, email: 'jane.doe@example.com' };
    const tokens = new Set(Array.from({ length: 20 }, () => codec.seal(sealed)));
    expect(tokens.size).toBe(20);
    for (const token of tokens) {
      expect(token).not.toContain('jane.doe');
      expect(Buffer.from(token, 'base64url').includes(Buffer.from('jane.doe'))).toBe(false);
      expect(Buffer.from(token, 'base64url').includes(Buffer.from('example'))).toBe(false);
    }
  });

  it('take only secrets of 32 characters or more, at least one', () => {
    expect(() => createUnsubscribeTokenCodec([])).toThrow(TypeError);
    expect(() => createUnsubscribeTokenCodec(['x'.repeat(31)])).toThrow(/at least 32/);
    expect(() => createUnsubscribeTokenCodec(['x'.repeat(32), 'short'])).toThrow(/at least 32/);
  });
});
