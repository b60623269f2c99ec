import { describe, expect, it } from 'vitest';
import { MAX_TRACKING_ID_CODE_POINTS, assertTrackingId, checkTrackingId } from '@mailwarden/core';
import { codePointLength, compareCodePoints, trackingIdSearchKey } from '@mailwarden/core/store';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const GRINNING = '\u{1F600}'; // one code point, two UTF-16 units, four UTF-8 octets

describe('tracking ID length', () => {
  it('is 128 code points at most (the spec\'s "128 characters")', () => {
    expect(MAX_TRACKING_ID_CODE_POINTS).toBe(128);
  });

  it('accepts 128 code points and rejects 129', () => {
    expect(checkTrackingId('a'.repeat(128))).toEqual({ ok: true, trackingId: 'a'.repeat(128) });
    expect(checkTrackingId('a'.repeat(129))).toEqual({ ok: false, problem: 'too_long', reason: expect.any(String) });
  });

  it('counts an astral character once', () => {
    expect(codePointLength(GRINNING)).toBe(1);
    expect(codePointLength(`a${GRINNING}b`)).toBe(3);
    const astral128 = GRINNING.repeat(128);
    expect(astral128.length).toBe(256);
    expect(checkTrackingId(astral128)).toEqual({ ok: true, trackingId: astral128 });
    expect(checkTrackingId(GRINNING.repeat(129))).toMatchObject({ ok: false, problem: 'too_long' });
    const mixed = `${'x'.repeat(64)}${GRINNING.repeat(64)}`;
    expect(checkTrackingId(mixed)).toEqual({ ok: true, trackingId: mixed });
    expect(checkTrackingId(`${mixed}x`)).toMatchObject({ ok: false, problem: 'too_long' });
  });

  it('counts a combining mark as a code point of its own', () => {
    const decomposed = 'e\u0301'.repeat(64);
    expect(codePointLength(decomposed)).toBe(128);
    expect(checkTrackingId(decomposed)).toEqual({ ok: true, trackingId: decomposed });
    expect(checkTrackingId(`${decomposed}e`)).toMatchObject({ ok: false, problem: 'too_long' });
  });
});

describe('checkTrackingId', () => {
  it.each([
    ['an empty string', ''],
    ['null', null],
    ['undefined', undefined],
  ])('takes %s as absent', (_, value) => {
    expect(checkTrackingId(value)).toEqual({ ok: true, trackingId: null });
  });

  it.each([
    ['a lone high surrogate', '\ud83d'],
    ['a lone low surrogate', 'spring-\ude00-sale'],
    ['a high surrogate at the end', `spring${'\ud83d'}`],
    ['two high surrogates', '\ud83d\ud83d'],
    ['a reversed pair', '\ude00\ud83d'],
    // PostgreSQL text cannot hold U+0000: accepting it would make a batch that can never be stored.
    ['U+0000', 'spring\u0000sale'],
  ])('rejects %s as malformed', (_, value) => {
    expect(checkTrackingId(value)).toEqual({ ok: false, problem: 'malformed', reason: expect.any(String) });
  });

  it.each([
    ['surrounding white space', '  Spring Sale  '],
    ['upper case', 'Spring-SALE-2024'],
    ['a decomposed character (no NFC)', 'Cafe\u0301'],
    ['a single space', ' '],
    ['punctuation and non-Latin text', 'newsletter/2024-05 #12 — 春'],
    ['an astral character', `launch ${GRINNING}`],
  ])('takes a value with %s exactly as given', (_, value) => {
    expect(checkTrackingId(value)).toEqual({ ok: true, trackingId: value });
    expect(assertTrackingId(value)).toBe(value);
  });
});

describe('assertTrackingId', () => {
  it.each([
    ['too long', 'a'.repeat(129)],
    ['malformed', 'a\ud800'],
    ['empty', ''],
  ])('throws invalid_tracking_id for a value that is %s', async (_, value) => {
    const error = await expectMailwardenError(() => assertTrackingId(value), 'invalid_tracking_id');
    expect(error.status).toBe(400);
  });

  it('returns 128 code points unchanged', () => {
    expect(assertTrackingId('z'.repeat(128))).toBe('z'.repeat(128));
  });
});

describe('trackingIdSearchKey', () => {
  it('lower-cases, so searching is case-insensitive', () => {
    expect(trackingIdSearchKey('Spring-SALE')).toBe('spring-sale');
    expect(trackingIdSearchKey('ÉTÉ')).toBe('été');
  });
});

describe('compareCodePoints', () => {
  const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const samples = [
    '',
    'a',
    'A',
    'b',
    'ab',
    'aa',
    'a ',
    'z',
    '~',
    '\u007f',
    '\u0080',
    '\u00e9',
    'e\u0301',
    '\u07ff',
    '\u0800',
    '\ud7ff',
    '\ue000',
    '\uff61',
    '\ufffd',
    '\uffff',
    '\u{10000}',
    GRINNING,
    `${GRINNING}a`,
    `a${GRINNING}`,
    'a\uffff',
    'a\ue000',
    '\u{1F601}',
    '\u{10FFFF}',
    '中',
    '中文',
    'spring-sale',
    'Spring-Sale',
    'spring-sale-2',
  ];

  it('orders every pair of samples as their UTF-8 bytes do', () => {
    for (const a of samples) {
      for (const b of samples) {
        expect(Math.sign(compareCodePoints(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(Math.sign(utf8Order(a, b)));
      }
    }
  });

  it('sorts like UTF-8 bytes, which differs from UTF-16 (JavaScript) order for astral characters', () => {
    const byCodePoint = [...samples].sort(compareCodePoints);
    const byBytes = [...samples].sort(utf8Order);
    expect(byCodePoint).toEqual(byBytes);
    // JavaScript's default order puts the astral character before U+FFFF; code-point order does not.
    expect(GRINNING < '\uffff').toBe(true);
    expect(compareCodePoints(GRINNING, '\uffff')).toBeGreaterThan(0);
    expect(compareCodePoints('\ue000', GRINNING)).toBeLessThan(0);
  });

  it('is zero only for equal strings', () => {
    expect(compareCodePoints('same', 'same')).toBe(0);
    expect(compareCodePoints(GRINNING, GRINNING)).toBe(0);
    expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
  });
});
