/**
 * Parses JSON text as `JSON.parse` does, except that an integer literal beyond `Number.MAX_SAFE_INTEGER`
 * (either sign) becomes the string of its digits, exactly as written, instead of a rounded number. Node
 * 20's `JSON.parse` has no access to a number's source text, so such literals are quoted in the text
 * first, by one linear scan that skips strings; text with no run of 16 digits is parsed as is. Mailjet's
 * `MessageID` is such an integer (docs/providers/mailjet.md#message-id-and-dedup-key).
 *
 * Throws what `JSON.parse` throws for text that is not JSON.
 *
 * @example
 * parseJsonWithExactIntegers('{"MessageID":19421777835146490}'); // { MessageID: '19421777835146490' }
 */
export function parseJsonWithExactIntegers(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  let quoted = '';
  let copiedTo = 0;
  let index = 0;
  while (index < text.length) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      index = stringEnd(text, index);
    } else if (char === MINUS || isDigit(char)) {
      const start = index;
      index++;
      while (index < text.length && isDigit(text.charCodeAt(index))) index++;
      const next = text.charCodeAt(index);
      if (next === DOT || next === LOWER_E || next === UPPER_E) {
        // A fraction or an exponent: a number JSON.parse reads as well as it can be read; skip its rest.
        index++;
        while (index < text.length && /[0-9eE+-]/.test(text.charAt(index))) index++;
      } else if (index - start > 15) {
        const literal = text.slice(start, index);
        if (/^-?(0|[1-9]\d*)$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
          quoted += `${text.slice(copiedTo, start)}"${literal}"`;
          copiedTo = index;
        }
      }
    } else {
      index++;
    }
  }
  return JSON.parse(copiedTo === 0 ? text : quoted + text.slice(copiedTo));
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

function isDigit(char: number): boolean {
  return char >= 0x30 && char <= 0x39;
}

/** The index just past the string that opens at `start` (or the end of the text, for an unterminated one). */
function stringEnd(text: string, start: number): number {
  let quote = text.indexOf('"', start + 1);
  while (quote !== -1) {
    // A quote ends the string unless an odd run of backslashes escapes it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
}
