import { domainToASCII } from 'node:url';
import { MailwardenError } from '../errors.js';

const MAX_LOCAL_OCTETS = 64;
const MAX_ADDRESS_OCTETS = 254;
const MAX_LABEL_LENGTH = 63;

// atext of RFC 5322 plus non-ASCII characters other than controls, no-break space and lone surrogates
// (RFC 6531 allows UTF-8 local parts).
const LOCAL_PART =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~\u{A1}-\u{D7FF}\u{E000}-\u{10FFFF}-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~\u{A1}-\u{D7FF}\u{E000}-\u{10FFFF}-]+)*$/u;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// Two or more LABELs of at most 63 characters, joined by dots: one test instead of a split and a loop.
const HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// What `trim` removes, plus U+0085 (NEL): the one Unicode White_Space character `trim` keeps.
const WHITE_SPACE = /[\s\u0085]/;

/** ASCII codes a plain address may hold: see `plainAddress`. */
const LOCAL_CHAR = 1;
const DOT = 2;
const HOST_CHAR = 4;
const UPPER_CASE = 8;
const HYPHEN = 0x2d;
const PLAIN_CHARS = new Uint8Array(128);
for (const char of "!#$%&'*+/=?^_`{|}~") PLAIN_CHARS[char.charCodeAt(0)] = LOCAL_CHAR;
for (const char of '0123456789abcdefghijklmnopqrstuvwxyz-') PLAIN_CHARS[char.charCodeAt(0)] = LOCAL_CHAR | HOST_CHAR;
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') PLAIN_CHARS[char.charCodeAt(0)] = LOCAL_CHAR | HOST_CHAR | UPPER_CASE;
PLAIN_CHARS[0x2e] = DOT;

export type NormalizeResult = { ok: true; email: string } | { ok: false; reason: string };

/**
 * Normalizes an address as docs/decisions.md#normalization says: trim, Unicode NFC, lower-case, domain to ASCII (IDNA), no
 * trailing dot on the domain. Dots and `+tags` stay: they are different mailboxes. Returns why an
 * address is invalid instead of throwing, so batch callers can report every bad entry at once.
 */
export function tryNormalizeEmail(input: string): NormalizeResult {
  if (typeof input !== 'string') return { ok: false, reason: 'not a string' };
  const plain = plainAddress(input);
  return plain === undefined ? normalizeInFull(input) : { ok: true, email: plain };
}

/**
 * The address lower-cased when it is plain: printable ASCII with nothing to trim, a dot-atom local part
 * of at most 64 characters, a host name of two or more labels (letters, digits, inner hyphens, at most
 * 63 each) without a trailing dot, 254 characters in all. Nearly every address is, and for one that is
 * every step of `normalizeInFull` but lower-casing leaves it as it is: one pass instead of the
 * regular expressions. `undefined` for anything else, valid or not, which `normalizeInFull` decides.
 */
function plainAddress(input: string): string | undefined {
  const length = input.length;
  const at = input.lastIndexOf('@');
  if (at < 1 || at > MAX_LOCAL_OCTETS || length > MAX_ADDRESS_OCTETS) return undefined;
  // Whether any letter is upper-case: `toLowerCase` costs about as much as this whole pass.
  let seen = 0;
  // The local part: no dot first, last or after another.
  let previous = DOT;
  for (let i = 0; i < at; i++) {
    const code = input.charCodeAt(i);
    const kind = code < 128 ? PLAIN_CHARS[code]! : 0;
    if ((kind & (LOCAL_CHAR | DOT)) === 0 || (kind & previous & DOT) !== 0) return undefined;
    previous = kind;
    seen |= kind;
  }
  if (previous === DOT) return undefined;
  // The domain, label by label; the end of the text closes the last one.
  let labels = 0;
  let labelStart = at + 1;
  for (let i = labelStart; i <= length; i++) {
    const code = i === length ? 0x2e : input.charCodeAt(i);
    if (code === 0x2e) {
      const labelLength = i - labelStart;
      if (labelLength === 0 || labelLength > MAX_LABEL_LENGTH) return undefined;
      if (input.charCodeAt(labelStart) === HYPHEN || input.charCodeAt(i - 1) === HYPHEN) return undefined;
      labels++;
      labelStart = i + 1;
    } else {
      const kind = code < 128 ? PLAIN_CHARS[code]! : 0;
      if ((kind & HOST_CHAR) === 0) return undefined;
      seen |= kind;
    }
  }
  if (labels < 2) return undefined;
  return (seen & UPPER_CASE) === 0 ? input : input.toLowerCase();
}

/** Every step of the normalization, for any input string: see `tryNormalizeEmail`. */
export function normalizeInFull(input: string): NormalizeResult {
  const trimmed = trimWhiteSpace(input);
  // ASCII (nearly every address) is its own NFC and stays ASCII when lower-cased: it skips the Unicode
  // steps. Otherwise each letter is lower-cased on its own, as IDNA does: `toLowerCase` alone turns a
  // word-final Σ into ς, so `ΑΣ@x.gr` and `Ασ@x.gr` would be two addresses. Lower-casing can produce
  // sequences that NFC composes (and vice versa), so compose again after it.
  const ascii = isAscii(trimmed);
  const text = ascii ? trimmed.toLowerCase() : foldUnicodeCase(trimmed);
  const at = text.lastIndexOf('@');
  if (at <= 0) return { ok: false, reason: at === 0 ? 'empty local part' : 'missing @' };
  const local = text.slice(0, at);
  let domain = text.slice(at + 1);
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  if (domain === '') return { ok: false, reason: 'empty domain' };

  const localOctets = ascii ? local.length : utf8Length(local);
  if (localOctets > MAX_LOCAL_OCTETS) return { ok: false, reason: 'local part over 64 octets' };
  if (!LOCAL_PART.test(local)) return { ok: false, reason: 'local part has characters outside a dot-atom' };

  const asciiDomain = ascii || isAscii(domain) ? domain : idnaDomain(domain);
  if (asciiDomain === '') return { ok: false, reason: 'domain is not a valid internationalized domain name' };
  if (!HOSTNAME.test(asciiDomain)) {
    // Invalid: find out why.
    const labels = asciiDomain.split('.');
    if (labels.length < 2) return { ok: false, reason: 'domain needs at least one dot' };
    for (const label of labels) {
      if (label.length > MAX_LABEL_LENGTH || !LABEL.test(label)) {
        return { ok: false, reason: `domain label "${label}" is not a valid hostname label` };
      }
    }
  }

  const email = `${local}@${asciiDomain}`;
  // `asciiDomain` is ASCII: one octet per character.
  if (localOctets + 1 + asciiDomain.length > MAX_ADDRESS_OCTETS) return { ok: false, reason: 'address over 254 octets' };
  return { ok: true, email };
}

// ASCII that a lower-cased domain in Unicode may hold: IDNA maps no other ASCII, so anything else could
// only fail the hostname test, and `domainToASCII` parses a URL host: it stops at `/`, `?` or `#` and
// decodes `%`, so `bücher.example?x` would come back as `xn--bcher-kva.example`, another address.
const OUTSIDE_A_DOMAIN = /[^a-z0-9.\-\u0080-\u{10FFFF}]/u;

/**
 * A lower-cased domain with non-ASCII characters in IDNA form (`bücher.example` → `xn--bcher-kva.example`),
 * or `''` when it is not a valid internationalized domain name.
 */
export function idnaDomain(domain: string): string {
  return OUTSIDE_A_DOMAIN.test(domain) ? '' : domainToASCII(domain);
}

/**
 * Lower-cases text as addresses are (see `normalizeInFull`): ASCII with `toLowerCase`, anything else
 * composed (NFC), each letter lower-cased on its own, and composed again. For the address searches too.
 */
export function foldAddressCase(text: string): string {
  return isAscii(text) ? text.toLowerCase() : foldUnicodeCase(text);
}

function foldUnicodeCase(text: string): string {
  return text.normalize('NFC').replaceAll('\u03a3', '\u03c3').toLowerCase().normalize('NFC');
}

/**
 * Normalizes an address, or throws `invalid_email`.
 *
 * @example
 * normalizeEmail('  Jane.Doe+news@Bücher.example ') // 'jane.doe+news@xn--bcher-kva.example'
 */
export function normalizeEmail(input: string): string {
  const result = tryNormalizeEmail(input);
  if (!result.ok) {
    throw new MailwardenError('invalid_email', `Invalid email address: ${result.reason}.`, {
      details: [{ index: 0, email: input, reason: result.reason }],
    });
  }
  return result.email;
}

/** Like `trim`, with U+0085 too. A loop, not `/\s+$/`, which is quadratic on long runs of white space. */
export function trimWhiteSpace(text: string): string {
  // Nearly every address starts and ends with printable ASCII, which is not white space.
  if (isPrintableAscii(text.charCodeAt(0)) && isPrintableAscii(text.charCodeAt(text.length - 1))) return text;
  let start = 0;
  let end = text.length;
  while (start < end && WHITE_SPACE.test(text[start]!)) start++;
  while (end > start && WHITE_SPACE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/**
 * Octets of `text` in UTF-8, as `new TextEncoder().encode(text).length` counts them (a lone surrogate
 * becomes U+FFFD, 3 octets) without encoding: `TextEncoder` costs over a microsecond per call.
 */
function utf8Length(text: string): number {
  let octets = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) octets += 1;
    else if (code <= 0xdbff && code >= 0xd800 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      octets += 2; // a surrogate pair: two code units, four octets
      i++;
    } else octets += 2;
  }
  return octets;
}

function isPrintableAscii(code: number): boolean {
  return code > 0x20 && code < 0x7f;
}

export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
