import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonObjectMembers } from '../src/json/members.js';
import { anyString, jsonMutationOf, jsonObjectText, jsonText } from './arbitraries.js';

// The one scanner of raw JSON text (Postmark's big IDs, Mailgun's variables kept byte for byte): it
// must agree with JSON.parse on everything JSON.parse can say, and add only what JSON.parse loses.

/** Whether JSON.parse reads the text as one object: exactly when the scanner must answer. */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** The own members of a parsed object, `__proto__` included, in JSON.parse's order. */
const ownEntries = (value: object): [string, unknown][] =>
  Object.getOwnPropertyNames(value).map((name) => [name, Object.getOwnPropertyDescriptor(value, name)!.value]);

describe('jsonObjectMembers', () => {
  it('gives every top-level member exactly as written: name unescaped, member and value verbatim', () => {
    fc.assert(
      fc.property(jsonObjectText, ({ text, members }) => {
        expect(jsonObjectMembers(text)).toEqual(
          members.map((m) => ({
            name: JSON.parse(m.name) as string,
            text: `${m.name}${m.beforeColon}:${m.afterColon}${m.value}`,
            value: m.value,
          })),
        );
      }),
    );
  });

  it('agrees with JSON.parse: the same names, and each value (the last of a repeated name) parses to what JSON.parse gives', () => {
    fc.assert(
      fc.property(jsonObjectText, ({ text }) => {
        const parsed = JSON.parse(text) as object;
        const members = jsonObjectMembers(text)!;
        const last = new Map(members.map((member) => [member.name, JSON.parse(member.value) as unknown]));
        expect(ownEntries(parsed).sort(([a], [b]) => (a < b ? -1 : 1))).toEqual([...last].sort(([a], [b]) => (a < b ? -1 : 1)));
      }),
    );
  });

  it('round trip: its members rejoined into an object mean what the text means', () => {
    fc.assert(
      fc.property(jsonObjectText, ({ text }) => {
        const rejoined = `{${jsonObjectMembers(text)!
          .map((member) => member.text)
          .join(',')}}`;
        expect(ownEntries(JSON.parse(rejoined) as object)).toEqual(ownEntries(JSON.parse(text) as object));
      }),
    );
  });

  it('answers exactly when JSON.parse reads one object: any JSON text, any string, and JSON texts one edit away', () => {
    const candidates = fc.oneof(
      jsonText,
      anyString,
      jsonText.chain(jsonMutationOf),
      jsonObjectText.chain(({ text }) => jsonMutationOf(text)),
    );
    fc.assert(
      fc.property(candidates, (text) => {
        expect(jsonObjectMembers(text) !== undefined).toBe(isJsonObject(text));
      }),
      { numRuns: 1000 },
    );
  });
});
