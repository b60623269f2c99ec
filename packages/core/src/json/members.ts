import { isRecord } from './record.js';

/** One top-level member of a JSON object text, as written. */
export interface JsonMemberText {
  /** The member's name, unescaped: the key `JSON.parse` gives it. */
  name: string;
  /** The whole member as written, from its name's opening quote to the last character of its value. */
  text: string;
  /** The value as written: every digit of a number, a string with its own escapes, nested white space kept. */
  value: string;
}

/**
 * The top-level members of a JSON object text, in order and as written (a repeated name appears each
 * time; `JSON.parse` keeps the last), or `undefined` when the text is not one JSON object: exactly when
 * `JSON.parse` throws or gives something else. For what `JSON.parse` loses: integers past 2^53 (Postmark's
 * `ID`) and the writer's own spelling of each member (Mailgun variables kept byte for byte).
 *
 * @example
 * jsonObjectMembers('{"ID": 4323372036854775807}');
 * // [{ name: 'ID', text: '"ID": 4323372036854775807', value: '4323372036854775807' }]
 */
export function jsonObjectMembers(text: string): JsonMemberText[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  // From here on the text is known to be a JSON object, so the scan needs no error handling.
  const members: JsonMemberText[] = [];
  let i = skipWhiteSpace(text, skipWhiteSpace(text, 0) + 1);
  while (text[i] === '"') {
    const nameEnd = stringEnd(text, i);
    const valueStart = skipWhiteSpace(text, skipWhiteSpace(text, nameEnd) + 1);
    const end = valueEnd(text, valueStart);
    members.push({ name: JSON.parse(text.slice(i, nameEnd)) as string, text: text.slice(i, end), value: text.slice(valueStart, end) });
    const next = skipWhiteSpace(text, end);
    i = text[next] === ',' ? skipWhiteSpace(text, next + 1) : next;
  }
  return members;
}

/** The index of the first character at or after `i` that is not JSON white space. */
function skipWhiteSpace(text: string, i: number): number {
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
  return i;
}

/** The index just past the string literal that starts at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** The index just past the value that starts at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return stringEnd(text, start);
  if (first === '{' || first === '[') {
    let depth = 0;
    let i = start;
    do {
      const char = text[i];
      if (char === '"') {
        i = stringEnd(text, i);
        continue;
      }
      if (char === '{' || char === '[') depth++;
      else if (char === '}' || char === ']') depth--;
      i++;
    } while (depth > 0 && i < text.length);
    return i;
  }
  // A number or a literal runs up to the next delimiter or white space.
  let i = start;
  while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
  return i;
}
