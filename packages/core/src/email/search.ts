import { MailwardenError } from '../errors.js';
import { storableTextProblem } from '../storable-text.js';
import { codePointLength } from '../tracking-id.js';
import { foldAddressCase, idnaDomain, isAscii, trimWhiteSpace } from './normalize.js';

/** The longest search text, after trimming: an address holds at most 254 octets, so no longer text can find one. */
export const MAX_ADDRESS_SEARCH_LENGTH = 254;

/**
 * The start of an address as a search of stored, normalized addresses compares it (docs/http.md,
 * "Partial search"): trimmed, lower-cased as `normalizeEmail` does, and the part after an `@` in
 * IDNA form when it is not ASCII (`fé@bücher.` → `fé@xn--bcher-kva.`), so a non-ASCII domain label
 * matches once it is typed whole. Any other text is a search that may find nothing; `undefined` for
 * empty text (no filter). Text over `MAX_ADDRESS_SEARCH_LENGTH` code points, or that no store can
 * hold (U+0000, a lone surrogate), throws `invalid_request` naming `parameter`.
 *
 * @example
 * normalizeAddressPrefix(' Jane.D ', 'recipientPrefix') // 'jane.d'
 */
export function normalizeAddressPrefix(text: string | undefined, parameter: string): string | undefined {
  const trimmed = searchText(text, parameter);
  if (trimmed === undefined) return undefined;
  const folded = foldAddressCase(trimmed);
  const at = folded.indexOf('@');
  if (at < 0) return folded;
  return `${folded.slice(0, at + 1)}${asciiDomain(folded.slice(at + 1))}`;
}

/**
 * A domain as a search of stored, normalized addresses compares it (docs/http.md, "Partial search"):
 * trimmed, one leading `@` dropped, lower-cased, without trailing dots, in IDNA form when it is not
 * ASCII (`Bücher.example` → `xn--bcher-kva.example`). Text that is no domain stays as it is, a search
 * that finds nothing; `undefined` when that leaves nothing (``, `@`: no filter). Throws as
 * `normalizeAddressPrefix` does.
 *
 * @example
 * normalizeAddressDomain('@Example.COM.', 'recipientDomain') // 'example.com'
 */
export function normalizeAddressDomain(text: string | undefined, parameter: string): string | undefined {
  const trimmed = searchText(text, parameter);
  if (trimmed === undefined) return undefined;
  // Trailing dots after IDNA, which maps other full stops (`。`) to `.`; all of them, so that the result is its own normal form.
  const domain = asciiDomain(foldAddressCase(trimmed.startsWith('@') ? trimmed.slice(1) : trimmed)).replace(/\.+$/, '');
  return domain === '' ? undefined : domain;
}

/** The trimmed text, `undefined` when empty, or `invalid_request` for text that cannot be a search. */
function searchText(text: string | undefined, parameter: string): string | undefined {
  if (text === undefined) return undefined;
  const problem = storableTextProblem(text);
  if (problem !== undefined) throw new MailwardenError('invalid_request', `Invalid ${parameter}: it ${problem}.`);
  const trimmed = trimWhiteSpace(text);
  if (codePointLength(trimmed) > MAX_ADDRESS_SEARCH_LENGTH) {
    throw new MailwardenError('invalid_request', `Invalid ${parameter}: it is over ${MAX_ADDRESS_SEARCH_LENGTH} characters.`);
  }
  return trimmed === '' ? undefined : trimmed;
}

/** As addresses store their domain: IDNA for non-ASCII text; text IDNA refuses stays, and finds nothing. */
function asciiDomain(domain: string): string {
  if (isAscii(domain)) return domain;
  return idnaDomain(domain) || domain;
}
