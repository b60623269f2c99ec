import fc from 'fast-check';
import { checkTrackingId, type DeliveryEvent, type DeliveryEventType, type Provider } from '@mailwarden/core';
import type { CursorScope } from '@mailwarden/core/store';

// Arbitraries shared by the *.property.test.ts files of @mailwarden/core. Pools are small on purpose:
// collisions (same recipient, same message, same time) are where order and dedup bugs live.

// --- text -------------------------------------------------------------------------------------------

/** Any UTF-16 code unit, lone surrogates included: what a JavaScript string can really hold. */
export const anyCodeUnit = fc.nat(0xffff).map((unit) => String.fromCharCode(unit));

/** Any string at all: arbitrary code units (lone surrogates too), well-formed code points, or graphemes. */
export const anyString = fc.oneof(
  fc.string({ unit: anyCodeUnit, maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ maxLength: 80 }),
);

/**
 * Code points whose case changes round-trip one code point at a time: upper and lower case are each a
 * single code point and lower-casing the upper case gives the lower case (`a`/`A`, `σ`/`Σ`, `ж`/`Ж`,
 * Deseret `𐐨`/`𐐀`, title-case `ǅ`, Kelvin `K`). Excluded: `ß` (upper is `SS`), `İ` (lower is two code
 * points), `ς`, `ſ` and `ı` (their upper case lowers to another letter).
 */
export const caseRoundTrippingLetters: readonly string[] = (() => {
  const letters: string[] = [];
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const letter = String.fromCodePoint(cp);
    const upper = letter.toUpperCase();
    const lower = letter.toLowerCase();
    if (upper === lower || [...upper].length !== 1 || [...lower].length !== 1) continue;
    if (upper.toLowerCase() === lower) letters.push(letter);
  }
  return letters;
})();

/** The case changes of one code point that keep its lower case: itself, its upper case, its lower case. */
export function caseChangesOf(codePoint: string): string[] {
  const lower = codePoint.toLowerCase();
  const changes = [codePoint, codePoint.toUpperCase(), lower].filter(
    (candidate) => [...candidate].length === 1 && candidate.toLowerCase() === lower,
  );
  return [...new Set(changes)];
}

/** `text` with the case of each code point changed at random (only changes that round-trip, see above). */
export function caseVariantOf(text: string): fc.Arbitrary<string> {
  const codePoints = [...text];
  return fc.tuple(...codePoints.map((codePoint) => fc.constantFrom(...caseChangesOf(codePoint)))).map((changed) => changed.join(''));
}

/**
 * White space that surrounds an address pasted from a form, a CSV or a mail header: everything
 * `String.prototype.trim` removes (Unicode `Zs`, line terminators, BOM) and U+0085 NEL, the one
 * Unicode `White_Space` character `trim` keeps.
 */
export const whiteSpaceCharacters = [
  ' ',
  '\t',
  '\n',
  '\v',
  '\f',
  '\r',
  '\u0085',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u2001',
  '\u2002',
  '\u2003',
  '\u2004',
  '\u2005',
  '\u2006',
  '\u2007',
  '\u2008',
  '\u2009',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
] as const;
export const surroundingWhiteSpace = fc.string({ unit: fc.constantFrom(...whiteSpaceCharacters), maxLength: 4 });

// --- email addresses ------------------------------------------------------------------------------

const atextSymbols = "!#$%&'*+/=?^_`{|}~-";
const asciiLetterOrDigit = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
/** Letters that tend to break case and Unicode handling: Greek sigmas, ß, dotted/dotless i, Kelvin, Å… */
const trickyLetters = fc.constantFrom(
  'σ',
  'Σ',
  'ς',
  'ß',
  'ẞ',
  'İ',
  'ı',
  'ſ',
  '\u212a',
  '\u212b',
  'Å',
  'å',
  'ǅ',
  'ǆ',
  'Ǆ',
  'ﬀ',
  'ŉ',
  'Ａ',
  'ａ',
  'ж',
  'Ж',
  'ა',
  'Ა',
  '𐐀',
  '𐐨',
  'Ꭰ',
  'ꭰ',
  'é',
  'É',
  'ü',
  'Ü',
  'ñ',
  '漢',
  '字',
  '😀',
  'Ω',
  'ω',
  '\u2126',
);
const combiningMark = fc.constantFrom('\u0301', '\u0308', '\u0307', '\u0345', '\u030a', '\u0327', '\u200d');
const roundTrippingLetter = fc.constantFrom(...caseRoundTrippingLetters);

const localUnit = fc.oneof(
  { weight: 6, arbitrary: asciiLetterOrDigit },
  { weight: 1, arbitrary: fc.constantFrom(...atextSymbols) },
  { weight: 3, arbitrary: trickyLetters },
  { weight: 2, arbitrary: roundTrippingLetter },
  { weight: 1, arbitrary: combiningMark },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
const localAtom = fc.string({ unit: localUnit, minLength: 1, maxLength: 8 });
/** A local part: dot-separated atoms of ASCII atext, Unicode letters, marks and the odd arbitrary code point. */
export const emailLocalPart = fc.array(localAtom, { minLength: 1, maxLength: 3 }).map((atoms) => atoms.join('.'));

const labelUnit = fc.oneof(
  { weight: 6, arbitrary: asciiLetterOrDigit },
  { weight: 3, arbitrary: trickyLetters },
  { weight: 2, arbitrary: roundTrippingLetter },
  { weight: 1, arbitrary: combiningMark },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constantFrom('-', '.', '。', '．', 'ß', 'ς', '\u200c', '\u00ad'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
  },
);
const domainLabel = fc.string({ unit: labelUnit, minLength: 1, maxLength: 10 });
const topLevelDomain = fc.oneof(fc.constantFrom('com', 'COM', 'de', 'gr', 'рф', 'РФ', 'ελλασ', 'ΕΛΛΑΣ', '中国', 'Example'), domainLabel);
/**
 * A domain: ASCII, internationalized or mixed labels, any case, sometimes with a trailing dot; with
 * characters IDNA maps or rejects (ideographic and full-width dots, soft hyphen, ZWNJ, ß and ς, which
 * IDNA 2008 keeps) and the odd arbitrary code point.
 */
export const emailDomain = fc
  .tuple(fc.array(domainLabel, { minLength: 1, maxLength: 3 }), topLevelDomain, fc.boolean())
  .map(([labels, tld, trailingDot]) => `${[...labels, tld].join('.')}${trailingDot ? '.' : ''}`);

/** Strings shaped like addresses (most normalize, some do not), sometimes wrapped in white space. */
export const emailLike = fc
  .tuple(surroundingWhiteSpace, emailLocalPart, emailDomain, surroundingWhiteSpace)
  .map(([before, local, domain, after]) => `${before}${local}@${domain}${after}`);

// --- cursors --------------------------------------------------------------------------------------

const filterValue = fc.option(fc.oneof(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 10 })), {
  nil: undefined,
});

/** Any cursor scope: a listing, a project and a few filters (some `undefined`, as the services pass them). */
export const cursorScope: fc.Arbitrary<CursorScope> = fc.record({
  listing: fc.constantFrom('suppressions' as const, 'messages' as const, 'tracking-ids' as const),
  projectId: fc.oneof(fc.constantFrom('acme', 'acme-2', 'ACME'), fc.string({ minLength: 1, maxLength: 12 })),
  filters: fc.dictionary(fc.constantFrom('trackingId', 'status', 'search', 'x'), filterValue, { maxKeys: 3 }),
});

/** Whether two scopes are the same query (the codec ignores filter key order; `undefined` is a value). */
export function sameScope(a: CursorScope, b: CursorScope): boolean {
  const filters = (scope: CursorScope) =>
    JSON.stringify(
      Object.keys(scope.filters)
        .sort()
        .map((name) => [name, scope.filters[name] ?? null]),
    );
  return a.listing === b.listing && a.projectId === b.projectId && filters(a) === filters(b);
}

/** `-0` is the one JSON value that `JSON.stringify` cannot carry (it writes `0`); cursors are JSON. */
function withoutMinusZero(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutMinusZero);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, withoutMinusZero(entry)]));
  }
  return value;
}

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
const safeTime = fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.maxSafeInteger(), fc.integer({ min: -8.64e15, max: 8.64e15 }));

/**
 * Valid tracking IDs (docs/decisions.md#what-a-tracking-id-is: 1–128 code points, any content), long ones and ones of characters
 * that JSON escapes (controls, quotes) or that take 4 bytes of UTF-8 (astral) included: a tracking-ID
 * cursor carries the ID, so these make the longest cursors.
 */
const trackingIdUnits = [
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.nat(0x1f).map((unit) => String.fromCharCode(unit)),
  fc.constantFrom('"', '\\', '😀', '\u{10ffff}', '\u2028'),
];
export const validTrackingId = fc.oneof(
  fc.string({ unit: fc.oneof(...trackingIdUnits), minLength: 1, maxLength: 128 }),
  // IDs of one kind of character (all controls, all astral…), often at the 128 code point limit.
  fc
    .tuple(fc.constantFrom(...trackingIdUnits), fc.oneof(fc.constant(128), fc.integer({ min: 1, max: 128 })))
    .chain(([unit, length]) => fc.string({ unit, minLength: length, maxLength: length })),
);

/** A tracking ID that intake stores and a `trackingId` filter accepts (U+0000, which both refuse, becomes `0`). */
export const storableTrackingId = validTrackingId.map((id) => id.replaceAll('\u0000', '0')).filter((id) => checkTrackingId(id).ok);

/** Short IDs of letters with case (ASCII and not, `ß`, `İ`, Deseret…): ones that case variants change. */
const caseRichTrackingId = fc.string({
  unit: fc.oneof(asciiLetterOrDigit, trickyLetters, roundTrippingLetter, fc.constant('-')),
  minLength: 1,
  maxLength: 12,
});

/** `trackingId`, a case variant of it, a prefix of it, or it with a suffix: IDs an exact lookup must tell apart. */
function relativeOf(trackingId: string): fc.Arbitrary<string> {
  const codePoints = [...trackingId];
  return fc.oneof(
    fc.constant(trackingId),
    caseVariantOf(trackingId),
    fc.integer({ min: 1, max: codePoints.length }).map((length) => codePoints.slice(0, length).join('')),
    fc.constantFrom('-2', 'x', ' ', '😀').map((suffix) => trackingId + suffix),
  );
}

/**
 * A few tracking IDs with their relatives (case variants, prefixes, longer IDs), each one storable and
 * none twice: the sets an exact lookup must not confuse. Never empty: a relative may be too long and is
 * dropped, the ID itself is kept.
 */
export const relatedTrackingIds: fc.Arbitrary<string[]> = fc
  .array(fc.oneof(storableTrackingId, caseRichTrackingId), { minLength: 1, maxLength: 4 })
  .chain((ids) => fc.tuple(...ids.map((id) => fc.array(relativeOf(id), { maxLength: 3 }).map((relatives) => [id, ...relatives]))))
  .map((families) => [...new Set(families.flat())].filter((id) => checkTrackingId(id).ok));

/** Positions of the real listings: suppressions, messages, tracking IDs. */
export const listingPosition: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ c: safeTime, h: hex(64) }),
  fc.record({ t: safeTime, k: hex(32) }),
  fc.record({ i: fc.oneof(validTrackingId, fc.string({ unit: anyCodeUnit, minLength: 1, maxLength: 20 })) }),
);

/** Positions of the real listings and arbitrary JSON. */
export const cursorPosition: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: listingPosition },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(withoutMinusZero) },
);

export const cursorSecret = fc.option(
  fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.uint8Array({ minLength: 1, maxLength: 32 })),
  { nil: undefined },
);

const base64UrlAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const cursorCharacter = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...base64UrlAlphabet) },
  { weight: 1, arbitrary: fc.constantFrom('.', '=', '+', '/', ' ', '%') },
  { weight: 1, arbitrary: anyCodeUnit },
);

/** One edit of a cursor: flip, delete or insert a character, or truncate (the result may equal the input). */
export function mutationOf(cursor: string): fc.Arbitrary<string> {
  const at = fc.nat(Math.max(0, cursor.length - 1));
  return fc.oneof(
    fc.tuple(at, cursorCharacter).map(([i, c]) => cursor.slice(0, i) + c + cursor.slice(i + 1)),
    at.map((i) => cursor.slice(0, i) + cursor.slice(i + 1)),
    fc.tuple(fc.nat(cursor.length), cursorCharacter).map(([i, c]) => cursor.slice(0, i) + c + cursor.slice(i)),
    // Truncation: what a copy-paste accident does.
    fc.nat(cursor.length).map((i) => cursor.slice(0, i)),
  );
}

/**
 * Strings no codec made: anything, base64url text with and without a 22-character tag, and base64url
 * of JSON that looks like a cursor body (version, scope tag, position) but was not made by the codec.
 */
export const garbageCursor = fc.oneof(
  anyString,
  fc.base64String({ maxLength: 200 }),
  fc.string({ unit: fc.constantFrom(...base64UrlAlphabet), minLength: 1, maxLength: 200 }),
  fc
    .tuple(
      fc.string({ unit: fc.constantFrom(...base64UrlAlphabet), minLength: 1, maxLength: 100 }),
      fc.string({ unit: fc.constantFrom(...base64UrlAlphabet), minLength: 22, maxLength: 22 }),
    )
    .map(([body, tag]) => `${body}.${tag}`),
  fc
    .tuple(fc.oneof(fc.constant(1), fc.integer()), fc.string({ maxLength: 14 }), cursorPosition)
    .map((body) => Buffer.from(JSON.stringify(body)).toString('base64url')),
  fc.jsonValue({ maxDepth: 2 }).map((value) => Buffer.from(JSON.stringify(value) ?? '').toString('base64url')),
);

// --- delivery events ------------------------------------------------------------------------------

/** A few providers, so the same event key can belong to two providers (dedup is per provider). */
export const eventProvider = fc.constantFrom<Provider>('ses', 'sendgrid', 'postmark');

/** Few message ids (one differing only by case) and `null` (SendGrid asynchronous bounces). */
export const eventMessageId = fc.constantFrom<string | null>('m-1', 'm-2', 'M-1', 'm-😀', null);

/**
 * Few recipients, several spellings of the same address (case, white space, IDN in Unicode and in
 * punycode), so different events land on the same message and the same suppression, plus one address
 * that never normalizes (skipped with a warning).
 */
export const eventRecipients = [
  'ann@example.com',
  'Ann@Example.COM',
  ' ann@example.com\n',
  'bob@example.com',
  'jürgen@bücher.de',
  'JÜRGEN@xn--bcher-kva.de',
  'σοφία@ελλάδα.gr',
  'not an address',
] as const;
export const eventRecipient = fc.constantFrom(...eventRecipients);

/**
 * Tracking IDs from a small pool: `null` and `''` (absent), IDs differing only by case, astral
 * characters (whose UTF-16 order differs from code-point order: `\uffff` < `😀` by code point only),
 * two of 128 code points, one over 128 and one with a lone surrogate (both dropped at intake with a
 * warning). Two events of one message with different IDs are the "sender error" of docs/decisions.md#conflicting-tracking-ids-on-one-message.
 */
export const eventTrackingIds: readonly (string | null)[] = [
  null,
  null,
  '',
  'spring-sale',
  'Spring-Sale',
  'SPRING-SALE',
  'welcome',
  '😀',
  '😀-promo',
  '\uffff',
  'ｆｕｌｌ',
  'x'.repeat(128),
  '\u0001'.repeat(128), // the longest cursor a tracking ID makes (JSON escapes each character to 6 bytes)
  'y'.repeat(129),
  'bad\ud800',
];
export const eventTrackingId = fc.constantFrom(...eventTrackingIds);

export const eventType = fc.constantFrom<DeliveryEventType>(
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'bounced',
  'complained',
  'rejected',
  'rejected',
  'opened',
  'clicked',
  'unsubscribed',
  'unknown',
);

/** Event times span a few milliseconds, so ties (same first event time, same suppression time) happen. */
export const EVENT_EPOCH = Date.UTC(2025, 0, 1);
export const eventTime = fc.integer({ min: 0, max: 5 }).map((offset) => EVENT_EPOCH + offset);

/** One event, with its key drawn from a small pool (so the same key recurs across providers). */
export const deliveryEvent: fc.Arbitrary<DeliveryEvent> = fc
  .record({
    provider: eventProvider,
    type: eventType,
    bounceClass: fc.constantFrom('hard', 'soft', 'undetermined', null, undefined),
    providerSuppression: fc.constantFrom('bounce', 'complaint', 'unsubscribe', null, undefined),
    messageId: eventMessageId,
    recipient: eventRecipient,
    trackingId: eventTrackingId,
    at: eventTime,
    eventKey: fc.integer({ min: 0, max: 40 }).map((n) => `evt-${n}`),
  })
  .map(({ at, bounceClass, providerSuppression, ...event }) => ({
    ...event,
    occurredAt: new Date(at),
    // Only on the types that use them; there also null or absent, as parsers may leave them.
    ...(event.type === 'bounced' && bounceClass !== undefined ? { bounceClass } : {}),
    ...(event.type === 'rejected' && providerSuppression !== undefined ? { providerSuppression } : {}),
  }));

/** `deliveryEvent` at a whole hour from `EVENT_EPOCH` up to `hours`: for retention, whose windows are hours long. */
export function deliveryEventWithinHours(hours: number): fc.Arbitrary<DeliveryEvent> {
  return fc
    .tuple(deliveryEvent, fc.nat(hours))
    .map(([event, hour]) => ({ ...event, occurredAt: new Date(EVENT_EPOCH + hour * 3_600_000) }));
}

/**
 * Events about few messages (one provider, eight ids, two recipients) at `EVENT_EPOCH` + `min`..`max`
 * milliseconds: for walks that race writes, where each write should often touch a listed item (move
 * its first event earlier, move it to a smaller tracking ID, empty a tracking-ID row).
 */
export function crowdedEvent(min: number, max: number): fc.Arbitrary<DeliveryEvent> {
  return fc
    .record({
      type: eventType.filter((type) => type !== 'unknown'),
      messageId: fc.nat(7).map((n) => `m-${n}`),
      recipient: fc.constantFrom('ann@example.com', 'bob@example.com'),
      trackingId: eventTrackingId,
      offset: fc.integer({ min, max }),
    })
    .map(({ offset, ...event }) => ({
      ...event,
      provider: 'ses' as const,
      occurredAt: new Date(EVENT_EPOCH + offset),
      bounceClass: 'hard' as const,
      eventKey: 'replaced by the test',
    }));
}

/** A fresh copy of an event: a provider retry delivers the same content again, as a new object. */
export function resent(event: DeliveryEvent): DeliveryEvent {
  return { ...event, occurredAt: new Date(event.occurredAt.getTime()) };
}

/**
 * A multiset of events as providers deliver them: each (provider, event key) names one event, and some
 * are delivered again (retries), identically. An event key never names two different events: the law
 * of order independence is about retries, and two different events under one key would make "which
 * one counts" depend on arrival order by definition.
 */
export const deliveryEventMultiset: fc.Arbitrary<DeliveryEvent[]> = fc
  .uniqueArray(deliveryEvent, { maxLength: 40, size: 'medium', selector: (event) => `${event.provider}:${event.eventKey}` })
  .chain((events) =>
    fc
      .array(fc.nat(Math.max(0, events.length - 1)), { maxLength: events.length === 0 ? 0 : 15, size: 'medium' })
      .map((retries) => [...events, ...retries.map((index) => resent(events[index]!))]),
  );

/** A permutation of `items`. */
export function permutationOf<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });
}

/** `items` cut into consecutive batches of random sizes (empty batches included), for `applyEvents` calls. */
export function batchesOf<T>(items: readonly T[]): fc.Arbitrary<T[][]> {
  return fc.array(fc.nat(items.length), { maxLength: 6 }).map((cuts) => {
    const bounds = [0, ...cuts.sort((a, b) => a - b), items.length];
    return bounds.slice(1).map((end, i) => items.slice(bounds[i]!, end));
  });
}

export const pageLimit = fc.integer({ min: 1, max: 7 });

// --- JSON text --------------------------------------------------------------------------------------

/** The white space JSON allows between tokens. */
export const jsonWhiteSpace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 });

/**
 * One character of a JSON string literal as some writer spells it: literally (JSON's own punctuation
 * often, where a scanner that loses track of strings goes wrong), or any escape JSON allows.
 */
const jsonStringPiece = fc.oneof(
  anyCodeUnit.filter((unit) => unit !== '"' && unit !== '\\' && unit >= ' '),
  fc.constantFrom('{', '}', '[', ']', ',', ':', ' '),
  fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t'),
  fc.tuple(fc.nat(0xffff), fc.boolean()).map(([unit, upper]) => {
    const hex = unit.toString(16).padStart(4, '0');
    return `\\u${upper ? hex.toUpperCase() : hex}`;
  }),
);

/** A JSON string literal, quotes included. */
export const jsonStringLiteral = fc.array(jsonStringPiece, { maxLength: 12 }).map((pieces) => `"${pieces.join('')}"`);

/** A JSON number literal, digits past 2^53 and exponents past a double's range included. */
export const jsonNumberLiteral = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,30}$/)),
    fc.option(fc.stringMatching(/^\.[0-9]{1,8}$/), { nil: '' }),
    fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/), { nil: '' }),
  )
  .map((parts) => parts.join(''));

/**
 * Member names where a scanner's bugs hide: names repeated (a small pool), one name spelled with and
 * without escapes, `__proto__` (an own member to `JSON.parse`, a prototype setter to an object literal),
 * the empty name, and any other.
 */
const jsonMemberName = fc.oneof(fc.constantFrom('"ID"', '"\\u0049D"', '"I\\u0044"', '"__proto__"', '""', '"a"'), jsonStringLiteral);

/** A member of a JSON object as written: white space around it, its name, the white space around the colon, its value. */
export interface WrittenJsonMember {
  before: string;
  name: string;
  beforeColon: string;
  afterColon: string;
  value: string;
  after: string;
}

const writtenMember = (m: WrittenJsonMember): string => `${m.before}${m.name}${m.beforeColon}:${m.afterColon}${m.value}${m.after}`;

const { jsonValue: jsonValueText, member: jsonMember } = fc.letrec<{ jsonValue: string; member: WrittenJsonMember }>((tie) => ({
  jsonValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonStringLiteral,
    jsonNumberLiteral,
    fc.constantFrom('true', 'false', 'null'),
    fc
      .tuple(fc.array(fc.tuple(jsonWhiteSpace, tie('jsonValue'), jsonWhiteSpace), { maxLength: 4 }), jsonWhiteSpace)
      .map(([items, empty]) => `[${items.length === 0 ? empty : items.map(([before, value, after]) => before + value + after).join(',')}]`),
    fc
      .tuple(fc.array(tie('member'), { maxLength: 4 }), jsonWhiteSpace)
      .map(([members, empty]) => `{${members.length === 0 ? empty : members.map(writtenMember).join(',')}}`),
  ),
  member: fc.record({
    before: jsonWhiteSpace,
    name: jsonMemberName,
    beforeColon: jsonWhiteSpace,
    afterColon: jsonWhiteSpace,
    value: tie('jsonValue'),
    after: jsonWhiteSpace,
  }),
}));

/** Any JSON text (of any top-level value), spelled as some writer might. */
export const jsonText = fc.tuple(jsonWhiteSpace, jsonValueText, jsonWhiteSpace).map(([before, value, after]) => before + value + after);

/** A JSON object text with its top-level members as written, names repeated now and then. */
export const jsonObjectText: fc.Arbitrary<{ text: string; members: WrittenJsonMember[] }> = fc
  .tuple(jsonWhiteSpace, fc.array(jsonMember, { maxLength: 6 }), jsonWhiteSpace, jsonWhiteSpace)
  .map(([before, members, empty, after]) => ({
    text: `${before}{${members.length === 0 ? empty : members.map(writtenMember).join(',')}}${after}`,
    members,
  }));

/** A JSON text with one character dropped, one inserted, or cut short: mostly no longer JSON. */
export function jsonMutationOf(text: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat(Math.max(0, text.length - 1)).map((at) => text.slice(0, at) + text.slice(at + 1)),
    fc
      .tuple(fc.nat(text.length), fc.constantFrom('"', '\\', ',', ':', '{', '}', '[', ']', '0', '-', 'x', '\u0001'))
      .map(([at, char]) => text.slice(0, at) + char + text.slice(at)),
    fc.nat(text.length).map((at) => text.slice(0, at)),
  );
}
