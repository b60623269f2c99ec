import { createHash, createHmac } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMailwarden, normalizeEmail, tryNormalizeEmail } from '@mailwarden/core';
import { createEmailHasher, isEmailHash } from '@mailwarden/core/store';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const octets = (text: string) => Buffer.byteLength(text, 'utf8');

/** A valid domain of exactly `length` characters: labels of at most 63, ending in `.com`. */
function domainOfLength(length: number): string {
  const labels: string[] = [];
  let rest = length - 'com'.length;
  while (rest > 0) {
    // Each label takes its size plus the dot after it; leave at least 2 for a last label.
    const size = rest <= 64 ? rest - 1 : Math.min(63, rest - 3);
    labels.push('d'.repeat(size));
    rest -= size + 1;
  }
  const domain = `${labels.join('.')}.com`;
  expect(domain).toHaveLength(length);
  return domain;
}

async function expectInvalid(input: string): Promise<string> {
  const result = tryNormalizeEmail(input);
  expect(result.ok, `${JSON.stringify(input)} should be invalid`).toBe(false);
  const error = await expectMailwardenError(() => normalizeEmail(input), 'invalid_email');
  expect(error.status).toBe(400);
  expect(error.details).toEqual([{ index: 0, email: input, reason: expect.any(String) }]);
  return result.ok ? '' : result.reason;
}

describe('normalizeEmail', () => {
  it.each([
    ['trims white space', '  jane@example.com \t\n', 'jane@example.com'],
    ['trims Unicode white space too', '\u00a0jane@example.com\u2003', 'jane@example.com'],
    ['lower-cases the whole address', 'Jane.DOE@Example.COM', 'jane.doe@example.com'],
    ['composes to NFC', 'jose\u0301@example.com', 'jos\u00e9@example.com'],
    ['composes after lower-casing', 'JOSE\u0301@EXAMPLE.COM', 'jos\u00e9@example.com'],
    ['keeps a Unicode local part as Unicode', 'ÜNÏCÖDÉ@example.com', 'ünïcödé@example.com'],
    ['converts an IDN domain to punycode', 'user@Bücher.Example', 'user@xn--bcher-kva.example'],
    ['converts a decomposed IDN domain to the same punycode', 'user@bu\u0308cher.example', 'user@xn--bcher-kva.example'],
    ['drops a trailing dot of the domain', 'jane@example.com.', 'jane@example.com'],
    ['drops a trailing dot after an IDN domain', 'jane@bücher.example.', 'jane@xn--bcher-kva.example'],
    ['keeps dots of the local part', 'first.last@example.com', 'first.last@example.com'],
    ['keeps +tags', 'jane+news@example.com', 'jane+news@example.com'],
    ['does all of it at once', '  Jane.Doe+News@Bücher.Example. ', 'jane.doe+news@xn--bcher-kva.example'],
    ['keeps RFC 5322 atext', "a!#$%&'*+/=?^_`{|}~-z@example.com", "a!#$%&'*+/=?^_`{|}~-z@example.com"],
    ['accepts an astral character in the local part', '😀@example.com', '😀@example.com'],
    ['accepts a punycode domain as is', 'jane@xn--bcher-kva.example', 'jane@xn--bcher-kva.example'],
  ])('%s', (_, input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
    expect(tryNormalizeEmail(input)).toEqual({ ok: true, email: expected });
    // Normalizing a normalized address changes nothing.
    expect(normalizeEmail(expected)).toBe(expected);
  });

  it('keeps dotted, undotted and tagged addresses apart (they are different mailboxes)', () => {
    const forms = ['firstlast@example.com', 'first.last@example.com', 'firstlast+x@example.com', 'firstlast+y@example.com'];
    expect(new Set(forms.map(normalizeEmail)).size).toBe(forms.length);
  });
});

describe('email validation', () => {
  it('accepts a local part of 64 octets and rejects 65', async () => {
    expect(normalizeEmail(`${'a'.repeat(64)}@example.com`)).toBe(`${'a'.repeat(64)}@example.com`);
    const reason = await expectInvalid(`${'a'.repeat(65)}@example.com`);
    expect(reason).toMatch(/64 octets/);
  });

  it('counts the local part in UTF-8 octets, not characters', async () => {
    // é is 2 octets, € is 3, 😀 is 4.
    for (const local of ['é'.repeat(32), `${'€'.repeat(21)}a`, '😀'.repeat(16)]) {
      expect(octets(local)).toBe(64);
      expect(normalizeEmail(`${local}@example.com`)).toBe(`${local}@example.com`);
    }
    for (const local of [`${'é'.repeat(32)}a`, '€'.repeat(22), `${'😀'.repeat(16)}a`]) {
      expect(octets(local)).toBeGreaterThan(64);
      expect(local.length).toBeLessThan(64);
      expect(await expectInvalid(`${local}@example.com`)).toMatch(/64 octets/);
    }
  });

  it('counts the local part after normalization (an upper-case Unicode letter lower-cases to the same size)', () => {
    const local = 'É'.repeat(32);
    expect(normalizeEmail(`${local}@example.com`)).toBe(`${'é'.repeat(32)}@example.com`);
  });

  it('accepts a whole address of 254 octets and rejects 255', async () => {
    const ok = `${'a'.repeat(64)}@${domainOfLength(189)}`;
    expect(ok).toHaveLength(254);
    expect(normalizeEmail(ok)).toBe(ok);
    const tooLong = `${'a'.repeat(64)}@${domainOfLength(190)}`;
    expect(tooLong).toHaveLength(255);
    expect(await expectInvalid(tooLong)).toMatch(/254 octets/);
  });

  it('counts the whole address in octets', async () => {
    const ok = `${'é'.repeat(32)}@${domainOfLength(189)}`;
    expect(octets(ok)).toBe(254);
    expect(normalizeEmail(ok)).toBe(ok);
    const tooLong = `${'é'.repeat(32)}@${domainOfLength(190)}`;
    expect(octets(tooLong)).toBe(255);
    expect(tooLong.length).toBeLessThan(254);
    expect(await expectInvalid(tooLong)).toMatch(/254 octets/);
  });

  it('counts the whole address with its domain in punycode', async () => {
    // "ñandúes" is 9 octets in UTF-8 and 15 characters in punycode ("xn--andes-nta0e").
    const domain = `${'ñandúes.'.repeat(15)}com`;
    const address = `${'a'.repeat(60)}@${domain}`;
    expect(octets(address)).toBeLessThanOrEqual(254);
    expect(octets(`${'a'.repeat(60)}@${domainToASCII(domain)}`)).toBeGreaterThan(254);
    expect(await expectInvalid(address)).toMatch(/254 octets/);
  });

  it('accepts a domain label of 63 characters and rejects 64', async () => {
    expect(normalizeEmail(`a@${'b'.repeat(63)}.com`)).toBe(`a@${'b'.repeat(63)}.com`);
    await expectInvalid(`a@${'b'.repeat(64)}.com`);
  });

  it.each([
    ['a label starting with a hyphen', 'a@-example.com'],
    ['a label ending with a hyphen', 'a@example-.com'],
    ['an underscore in the domain', 'a@ex_ample.com'],
    ['an empty label', 'a@example..com'],
    ['a leading dot in the domain', 'a@.example.com'],
    ['two trailing dots', 'a@example.com..'],
    ['a space in the domain', 'a@exa mple.com'],
    ['a domain that is not a valid IDN', 'a@ü%.com'],
    // Found through the partial search's laws: `domainToASCII` parses a URL host, so it stopped at `?`, `/`
    // or `#` and decoded `%`: each of these normalized to a@xn--bcher-kva.example, another address.
    ['a query mark after an IDN domain', 'a@bücher.example?x.com'],
    ['a slash after an IDN domain', 'a@bücher.example/x'],
    ['a hash after an IDN domain', 'a@bücher.example#x'],
    ['a backslash after an IDN domain', 'a@bücher.example\\x'],
    ['a percent-encoded letter in an IDN domain', 'a@b%C3%BCcher.exämple'],
    ['an empty punycode label', 'a@xn--.com'],
    ['an IDN label of 56 characters that is over 63 in punycode', `a@${'ñandúes'.repeat(8)}.com`],
  ])('rejects %s', async (_, input) => {
    await expectInvalid(input);
  });

  it.each([
    ['a single-label domain', 'a@localhost'],
    ['a single-label domain with a trailing dot', 'a@localhost.'],
    ['a single-label IDN domain', 'a@bücher'],
  ])('requires at least one dot in the domain: %s', async (_, input) => {
    expect(await expectInvalid(input)).toMatch(/dot/);
  });

  it.each([
    ['no @', 'jane.example.com'],
    ['an empty string', ''],
    ['only white space', '   '],
    ['an empty local part', '@example.com'],
    ['an empty domain', 'jane@'],
    ['only a dot as domain', 'jane@.'],
  ])('rejects %s', async (_, input) => {
    await expectInvalid(input);
  });

  it.each([
    ['consecutive dots', 'a..b@example.com'],
    ['a leading dot', '.ab@example.com'],
    ['a trailing dot', 'ab.@example.com'],
    ['a space', 'a b@example.com'],
    ['two @', 'a@b@example.com'],
    ['a quoted local part', '"a b"@example.com'],
    ['a control character', 'a\u0001b@example.com'],
    ['a no-break space inside', 'a\u00a0b@example.com'],
    ['a comma', 'a,b@example.com'],
  ])('rejects a local part with %s', async (_, input) => {
    await expectInvalid(input);
  });

  it.each([
    ['a lone high surrogate in the local part', 'a\ud800@example.com'],
    ['a lone low surrogate in the local part', 'a\udc00b@example.com'],
    ['a reversed surrogate pair in the local part', 'a\ude00\ud83d@example.com'],
    ['a lone surrogate in the domain', 'a@ex\ud800ample.com'],
  ])('rejects %s', async (_, input) => {
    await expectInvalid(input);
  });

  it('reports the offending address exactly as given in the error details', async () => {
    const input = '  Not An Address ';
    const error = await expectMailwardenError(() => normalizeEmail(input), 'invalid_email');
    expect(error.details).toEqual([{ index: 0, email: input, reason: expect.any(String) }]);
    expect(error.toBody().error.details).toEqual(error.details);
  });

  it('rejects a non-string without throwing from tryNormalizeEmail', () => {
    expect(tryNormalizeEmail(42 as unknown as string)).toEqual({ ok: false, reason: expect.any(String) });
  });
});

describe('email hash', () => {
  const normalized = 'jane.doe+news@xn--bcher-kva.example';
  const sha256 = createHash('sha256').update(normalized).digest('hex');

  it('is the lower-case hex SHA-256 of the normalized address by default', () => {
    const hash = createEmailHasher()(normalizeEmail('  Jane.Doe+News@Bücher.Example. '));
    expect(hash).toBe(sha256);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(isEmailHash(hash)).toBe(true);
  });

  it('is what the service uses for every spelling of one address', async () => {
    const mailwarden = createMailwarden();
    for (const spelling of [normalized, 'JANE.DOE+NEWS@BÜCHER.EXAMPLE', ' jane.doe+news@bu\u0308cher.example. ']) {
      expect(mailwarden.suppressions.hashOf(spelling)).toBe(sha256);
    }
    const { suppression } = await mailwarden.suppressions.add('acme', 'Jane.Doe+News@Bücher.Example');
    expect(suppression.hash).toBe(sha256);
  });

  it('is HMAC-SHA256 under hashKey, different from the plain hash', () => {
    const expected = createHmac('sha256', 'pepper').update(normalized).digest('hex');
    const hash = createEmailHasher('pepper')(normalized);
    expect(hash).toBe(expected);
    expect(hash).not.toBe(sha256);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(createEmailHasher('other pepper')(normalized)).not.toBe(hash);
  });

  it('accepts a binary hashKey', () => {
    const key = new Uint8Array([1, 2, 3, 250]);
    expect(createEmailHasher(key)(normalized)).toBe(createHmac('sha256', key).update(normalized).digest('hex'));
  });

  it('rejects an empty hashKey', () => {
    expect(() => createEmailHasher('')).toThrow(TypeError);
    expect(() => createEmailHasher(new Uint8Array(0))).toThrow(TypeError);
    expect(() => createMailwarden({ hashKey: '' })).toThrow(TypeError);
  });

  it('recognizes the hash shape', () => {
    expect(isEmailHash(sha256)).toBe(true);
    expect(isEmailHash(sha256.toUpperCase())).toBe(false);
    expect(isEmailHash(sha256.slice(1))).toBe(false);
    expect(isEmailHash(`${sha256}0`)).toBe(false);
    expect(isEmailHash(`g${sha256.slice(1)}`)).toBe(false);
    expect(isEmailHash('')).toBe(false);
  });
});
