// Laws of erasure and of the feed's actor filter (docs/core.md, "Erasure" and "Actors"). What a store
// holds after an erasure, byte for byte, is the conformance suite's; here the service's view of it.
import fc from 'fast-check';
import { createMailwarden, createMemoryStore, erasureForms, parseActorFilter, tryNormalizeEmail } from '@mailwarden/core';
import { describe, expect, test } from 'vitest';
import { trimWhiteSpace } from '../src/email/normalize.js';
import { emailLike } from './arbitraries.js';

const T0 = Date.UTC(2026, 10, 1, 9);
const normalizable = emailLike.filter((email) => tryNormalizeEmail(email).ok);

describe('erasureForms', () => {
  test('holds the address as given, trimmed, normalized and lower-cased, each also JSON-escaped; none empty, none twice', () => {
    fc.assert(
      fc.property(normalizable, (given) => {
        const normalized = (tryNormalizeEmail(given) as { email: string }).email;
        const forms = erasureForms(given, normalized);
        expect(new Set(forms).size).toBe(forms.length);
        expect(forms.every((form) => form.length > 0)).toBe(true);
        for (const form of [given, trimWhiteSpace(given), normalized, given.toLowerCase()]) {
          if (form === '') continue;
          expect(forms).toContain(form);
          expect(forms).toContain(JSON.stringify(form).slice(1, -1));
        }
      }),
      { numRuns: 200 },
    );
  });

  test('trims as normalization does, U+0085 included', () => {
    // Found by the law above: `String.prototype.trim` keeps U+0085, so the trimmed form must be normalization's.
    expect(erasureForms('a@á.com\u0085 ', 'a@xn--1ca.com')).toContain('a@á.com');
  });
});

describe('erasures.erase', () => {
  test('erasing one address of many: it stays suppressed, every other answer and list entry is unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(normalizable, { minLength: 2, maxLength: 6, selector: (email) => tryNormalizeEmail(email) }),
        fc.nat(),
        async (emails, pick) => {
          const mailwarden = createMailwarden({ store: createMemoryStore({ changes: {} }), now: () => T0 });
          const unique = [...new Map(emails.map((email) => [mailwarden.suppressions.hashOf(email), email])).values()];
          fc.pre(unique.length >= 2);
          for (const [index, email] of unique.entries())
            await mailwarden.suppressions.add('acme', email, index % 2 === 0 ? {} : { stream: 'news' });
          const erased = unique[pick % unique.length]!;
          const others = unique.filter((email) => email !== erased);
          const before = await mailwarden.suppressions.checkMany('acme', others, { stream: 'news' });
          const listed = async (stream?: string) =>
            (await mailwarden.suppressions.list('acme', stream === undefined ? {} : { stream })).items.filter(
              (item) => item.hash !== mailwarden.suppressions.hashOf(erased),
            );
          const [wide, news] = [await listed(), await listed('news')];

          await mailwarden.erasures.erase('acme', erased);

          expect((await mailwarden.suppressions.check('acme', erased)).suppressed).toBe(true);
          expect(await mailwarden.suppressions.checkMany('acme', others, { stream: 'news' })).toEqual(before);
          expect(await listed()).toEqual(wide);
          expect(await listed('news')).toEqual(news);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('parseActorFilter', () => {
  const segment = fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/);
  const actor = fc.array(segment, { minLength: 1, maxLength: 3 }).map((segments) => segments.join(':'));

  test('comma-joined or as a list, the same actors without repeats, in order; parsing its own answer changes nothing', () => {
    fc.assert(
      fc.property(fc.array(actor, { minLength: 1, maxLength: 5 }), (actors) => {
        const parsed = parseActorFilter(actors.join(','));
        expect(parsed).toEqual([...new Set(actors)]);
        expect(parseActorFilter(actors)).toEqual(parsed);
        expect(parseActorFilter(parsed!.join(','))).toEqual(parsed);
      }),
      { numRuns: 100 },
    );
  });
});
