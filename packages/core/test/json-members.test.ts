import { describe, expect, it } from 'vitest';
import { jsonObjectMembers } from '../src/json/members.js';

describe('jsonObjectMembers', () => {
  it('keeps every digit of an integer JSON.parse would round (Postmark IDs past 2^53)', () => {
    expect(jsonObjectMembers('{"ID":4323372036854775807}')).toEqual([
      { name: 'ID', text: '"ID":4323372036854775807', value: '4323372036854775807' },
    ]);
  });

  it('keeps each member as written, white space inside values and escapes included, without the white space around it', () => {
    expect(jsonObjectMembers(' {\r\n "a" :\t[ 1 , {"b" : "\\u00e9\\/"} ] ,"c":true }\n')).toEqual([
      { name: 'a', text: '"a" :\t[ 1 , {"b" : "\\u00e9\\/"} ]', value: '[ 1 , {"b" : "\\u00e9\\/"} ]' },
      { name: 'c', text: '"c":true', value: 'true' },
    ]);
  });

  it('reads only top-level members: nested objects, and strings that look like members, are values', () => {
    expect(
      jsonObjectMembers('{"Metadata":{"ID":"nested"},"Details":"\\"ID\\":5","List":[{"ID":9}],"ID":7}')?.map((m) => [m.name, m.value]),
    ).toEqual([
      ['Metadata', '{"ID":"nested"}'],
      ['Details', '"\\"ID\\":5"'],
      ['List', '[{"ID":9}]'],
      ['ID', '7'],
    ]);
  });

  it('gives a repeated name every time, in order (JSON.parse keeps the last)', () => {
    expect(jsonObjectMembers('{"ID":1,"\\u0049D":2}')?.map((m) => [m.name, m.value])).toEqual([
      ['ID', '1'],
      ['ID', '2'],
    ]);
  });

  it('reads names that end in a backslash and values of escaped quotes', () => {
    expect(jsonObjectMembers('{"Key\\\\":"\\\\","ID":8}')?.map((m) => [m.name, m.value])).toEqual([
      ['Key\\', '"\\\\"'],
      ['ID', '8'],
    ]);
  });

  it.each([
    ['{}', []],
    ['{ \n}', []],
  ])('reads the empty object %j', (text, members) => {
    expect(jsonObjectMembers(text)).toEqual(members);
  });

  it.each([
    ['not JSON', '{"ID":5,"unterminated'],
    ['a dangling escape', '{"\\'],
    ['an array', '[{"ID":1}]'],
    ['a string', '"{}"'],
    ['null', 'null'],
    ['a trailing comma', '{"a":1,}'],
    ['white space JSON does not allow', '\u00a0{}'],
    ['the empty text', ''],
  ])('is undefined for %s', (_, text) => {
    expect(jsonObjectMembers(text)).toBeUndefined();
  });
});
