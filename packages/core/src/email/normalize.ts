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
const encoder = new TextEncoder();

export type NormalizeResult = { ok: true; email: string } | { ok: false; reason: string };

/**
 * Normalizes an address as DESIGN §3 says: trim, Unicode NFC, lower-case, domain to ASCII (IDNA), no
 * trailing dot on the domain. Dots and `+tags` stay: they are different mailboxes. Returns why an
 * address is invalid instead of throwing, so batch callers can report every bad entry at once.
 */
export function tryNormalizeEmail(input: string): NormalizeResult {
  if (typeof input !== 'string') return { ok: false, reason: 'not a string' };
  // Lower-casing can produce sequences that NFC composes (and vice versa), so compose again after it.
  const text = input.trim().normalize('NFC').toLowerCase().normalize('NFC');
  const at = text.lastIndexOf('@');
  if (at <= 0) return { ok: false, reason: at === 0 ? 'empty local part' : 'missing @' };
  const local = text.slice(0, at);
  let domain = text.slice(at + 1);
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  if (domain === '') return { ok: false, reason: 'empty domain' };

  if (encoder.encode(local).length > MAX_LOCAL_OCTETS) return { ok: false, reason: 'local part over 64 octets' };
  if (!LOCAL_PART.test(local)) return { ok: false, reason: 'local part has characters outside a dot-atom' };

  const asciiDomain = isAscii(domain) ? domain : domainToASCII(domain);
  if (asciiDomain === '') return { ok: false, reason: 'domain is not a valid internationalized domain name' };
  const labels = asciiDomain.split('.');
  if (labels.length < 2) return { ok: false, reason: 'domain needs at least one dot' };
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH || !LABEL.test(label)) {
      return { ok: false, reason: `domain label "${label}" is not a valid hostname label` };
    }
  }

  const email = `${local}@${asciiDomain}`;
  if (encoder.encode(email).length > MAX_ADDRESS_OCTETS) return { ok: false, reason: 'address over 254 octets' };
  return { ok: true, email };
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

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}
