import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_ADDRESS_SEARCH_LENGTH,
  MailwardenError,
  normalizeAddressDomain,
  normalizeAddressPrefix,
  tryNormalizeEmail,
} from '@mailwarden/core';
import { trimWhiteSpace } from '../src/email/normalize.js';
import { storableTextProblem } from '../src/storable-text.js';
import { codePointLength } from '../src/tracking-id.js';
import { anyString, caseVariantOf, emailLike, surroundingWhiteSpace } from './arbitraries.js';

/** Addresses that normalize, as typed and as stored; without a trailing dot (a prefix keeps one: see below). */
const validAddress = emailLike
  .map((input) => ({ input, result: tryNormalizeEmail(input) }))
  .filter((entry) => entry.result.ok && !trimWhiteSpace(entry.input).endsWith('.'))
  .map(({ input, result }) => ({ input, email: (result as { email: string }).email }));

/** A stored address, cut after any of its code points. */
const storedPrefix = validAddress.chain(({ email }) => {
  const codePoints = Array.from(email);
  return fc.integer({ min: 1, max: codePoints.length }).map((length) => codePoints.slice(0, length).join(''));
});

describe('normalizeAddressPrefix', () => {
  it('a whole address as typed searches for the address as stored', () => {
    fc.assert(
      fc.property(validAddress, ({ input, email }) => {
        expect(normalizeAddressPrefix(input, 'recipientPrefix')).toBe(email);
      }),
    );
  });

  it('the start of a stored address, in any case and white space, searches for itself', () => {
    fc.assert(
      fc.property(
        storedPrefix.chain((prefix) => fc.tuple(fc.constant(prefix), caseVariantOf(prefix), surroundingWhiteSpace, surroundingWhiteSpace)),
        ([prefix, variant, before, after]) => {
          expect(normalizeAddressPrefix(`${before}${variant}${after}`, 'recipientPrefix')).toBe(prefix);
        },
      ),
    );
  });

  it('is idempotent, and any text is a search: only what no store can hold, or over 254 characters, is invalid_request', () => {
    fc.assert(
      fc.property(fc.oneof(emailLike, anyString), (text) => {
        let prefix: string | undefined;
        try {
          prefix = normalizeAddressPrefix(text, 'recipientPrefix');
        } catch (error) {
          expect(error).toBeInstanceOf(MailwardenError);
          expect((error as MailwardenError).code).toBe('invalid_request');
          expect(storableTextProblem(text) !== undefined || codePointLength(trimWhiteSpace(text)) > MAX_ADDRESS_SEARCH_LENGTH).toBe(true);
          return;
        }
        expect(prefix === undefined).toBe(trimWhiteSpace(text) === '');
        if (prefix !== undefined) expect(normalizeAddressPrefix(prefix, 'recipientPrefix')).toBe(prefix);
      }),
    );
  });

  it('keeps a trailing dot: `jane@example.` is typed on the way to `jane@example.com`', () => {
    expect(normalizeAddressPrefix('Jane@Example.', 'recipientPrefix')).toBe('jane@example.');
    expect(normalizeAddressPrefix('fé@Bücher.', 'recipientPrefix')).toBe('fé@xn--bcher-kva.');
    // Found by the laws (when the test trimmed with `trim`): U+0085 (NEL) is white space `trim` keeps; the dot before it stays.
    expect(normalizeAddressPrefix('a@a.com.\u0085', 'recipientPrefix')).toBe('a@a.com.');
  });
});

describe('normalizeAddressDomain', () => {
  it('the domain of an address as typed, with or without its @ and trailing dot, in any case, is its domain as stored', () => {
    fc.assert(
      fc.property(
        validAddress.chain(({ input, email }) => {
          const typed = trimWhiteSpace(input);
          const domain = typed.slice(typed.lastIndexOf('@') + 1);
          return fc.tuple(
            fc.constant(email),
            caseVariantOf(domain),
            fc.constantFrom('', '@'),
            fc.constantFrom('', '.'),
            surroundingWhiteSpace,
          );
        }),
        ([email, domain, at, dot, space]) => {
          expect(normalizeAddressDomain(`${space}${at}${domain}${dot}${space}`, 'recipientDomain')).toBe(
            email.slice(email.indexOf('@') + 1),
          );
        },
      ),
    );
  });

  it('is idempotent; empty text and a lone @ are no filter', () => {
    fc.assert(
      fc.property(fc.oneof(emailLike, anyString), (text) => {
        let domain: string | undefined;
        try {
          domain = normalizeAddressDomain(text, 'recipientDomain');
        } catch (error) {
          expect((error as MailwardenError).code).toBe('invalid_request');
          return;
        }
        // Not for text that is no domain and starts with `@` or holds white space: one `@` and the ends go each time.
        if (domain !== undefined && !/^@|[\s\u0085]/.test(domain)) expect(normalizeAddressDomain(domain, 'recipientDomain')).toBe(domain);
      }),
    );
    for (const empty of ['', ' ', '@', ' @ ', '@.']) expect(normalizeAddressDomain(empty, 'recipientDomain'), empty).toBeUndefined();
    // Found by the idempotence law: `domainToASCII` parses a URL host and stopped at `?` (`a.?a@σ.com` came
    // back as `a.`); text with ASCII that no domain holds now stays as it is, and finds nothing.
    expect(normalizeAddressDomain('a.?a@σ.com', 'recipientDomain')).toBe('a.?a@σ.com');
    expect(normalizeAddressDomain('bücher.example?x', 'recipientDomain')).toBe('bücher.example?x');
    // Found by the idempotence law: one trailing dot dropped left `σ.` of `σ..`; all of them go.
    expect(normalizeAddressDomain('\u0001@σ..', 'recipientDomain')).toBe('\u0001@σ');
    // Found by the laws (when the test trimmed with `trim`): NEL around a domain is trimmed, then its trailing dot dropped.
    expect(normalizeAddressDomain('aA.Example.\u0085', 'recipientDomain')).toBe('aa.example');
  });
});
