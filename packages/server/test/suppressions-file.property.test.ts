// Laws of import and export: a list exported and imported again keeps its reasons and times; an import
// interrupted at any batch, before or after the store took it, and run again ends with the same store
// and the same summary as one never interrupted, whatever order the store takes its calls in; any
// strings written as CSV import as exactly their valid addresses; a CSV read on from where any record
// ends reads as the rest of the whole; a time already in the form parseTime writes reads as Date.parse
// reads it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, MailwardenError, normalizeEmail, tryNormalizeEmail, type Mailwarden } from '@mailwarden/core';
import fc from 'fast-check';
import { afterAll, expect, test } from 'vitest';
import { csvField, exportSuppressions } from '../src/suppressions-file/export.js';
import { readCsvRecords, type CsvReadOptions } from '../src/suppressions-file/import-csv.js';
import { parseTime } from '../src/suppressions-file/import-formats.js';
import type { SourceRecord } from '../src/suppressions-file/import-records.js';
import { importSuppressions } from '../src/suppressions-file/import.js';
import type { SuppressionTarget } from '../src/suppressions-file/target.js';
import {
  address,
  addsLate,
  csvOf,
  csvRow,
  rowStreams,
  type CsvRow,
  emailish,
  inSchedulerOrder,
  pastTime,
  storeGoingAway,
  stored,
} from './suppressions-file.support.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-suppressions-file-property-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let runs = 0;
function fileWith(content: string, extension = 'csv'): string {
  const path = join(directory, `${++runs}.${extension}`);
  writeFileSync(path, content);
  return path;
}

const NOW = Date.parse('2026-11-24T12:00:00.000Z');

async function exportText(mailwarden: Mailwarden, projectId: string, format: 'csv' | 'jsonl'): Promise<string> {
  let text = '';
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  await exportSuppressions(mailwarden, { projectId, format, output });
  return text;
}

test('export then import into another project keeps every address with its reason and time', async () => {
  const suppression = fc.record({
    email: fc.oneof(address, fc.emailAddress()),
    reason: fc.constantFrom('manual', 'hard_bounce', 'complaint' as const),
    created_at: pastTime,
  });
  await fc.assert(
    fc.asyncProperty(fc.array(suppression, { maxLength: 40 }), fc.constantFrom('csv' as const, 'jsonl' as const), async (items, format) => {
      const mailwarden = createMailwarden({ now: () => NOW });
      await mailwarden.suppressions.addMany('source', items);
      const file = fileWith(await exportText(mailwarden, 'source', format), format);
      const summary = await importSuppressions(mailwarden, { projectId: 'target', file, checkpoint: false, rejects: false });
      const source = await stored(mailwarden, 'source');
      expect(await stored(mailwarden, 'target')).toEqual(source.map((row) => ({ ...row, source: 'import' })));
      expect(summary).toMatchObject({ added: source.length, upgraded: 0, alreadyPresent: 0, invalid: 0 });
    }),
  );
});

/**
 * Imports `rows` into a project holding `existing` twice: once on a store that goes away at bulk add
 * `failAt` (after storing it, with `applied`) and whose calls arrive in the order `scheduler` picks,
 * then again; and once without trouble. Expects both to end alike.
 */
async function expectResumeExact(
  rows: readonly CsvRow[],
  existing: { email: string; reason: 'manual' | 'hard_bounce' | 'complaint'; created_at: string }[],
  batchSize: number,
  failAt: number,
  applied: boolean,
  scheduler: fc.Scheduler,
): Promise<void> {
  const content = csvOf(rows);
  const run = async (interrupt: boolean) => {
    const mailwarden = createMailwarden({ now: () => NOW });
    // Whatever the project held before the import.
    await mailwarden.suppressions.addMany('p', existing);
    const file = fileWith(content);
    const options = { projectId: 'p', file, batchSize };
    // A store that goes away after the last batch lets the first run finish. The interrupted run's
    // calls reach the store in any order, as over HTTP, where the check of the next batch may arrive
    // before the add sent just before it.
    const target = interrupt ? inSchedulerOrder(storeGoingAway(mailwarden, failAt, applied).target, scheduler) : undefined;
    // It fails only because the store went away (any other error is a bug, not an interruption).
    const first =
      target === undefined
        ? undefined
        : await scheduler.waitFor(importSuppressions(target, options)).catch((error: unknown) => {
            expect(error).toMatchObject({ code: 'store_unavailable' });
            return undefined;
          });
    const { resumedFromLine, rejectsFile, ...summary } = first ?? (await importSuppressions(mailwarden, options));
    expect(resumedFromLine !== undefined).toBe(interrupt && first === undefined);
    const lists = await Promise.all(rowStreams.map((stream) => stored(mailwarden, 'p', stream)));
    return { summary, rejects: rejectsFile === null ? '' : readFileSync(rejectsFile, 'utf8'), list: await stored(mailwarden, 'p'), lists };
  };
  expect(await run(true)).toEqual(await run(false));
}

test('an import stopped at any batch and run again ends as if it had never stopped', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(csvRow, { minLength: 1, maxLength: 40 }),
      fc.array(
        fc.record({ email: address, reason: fc.constantFrom('manual', 'hard_bounce', 'complaint' as const), created_at: pastTime }),
        { maxLength: 4 },
      ),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 12 }),
      fc.boolean(),
      fc.scheduler(),
      expectResumeExact,
    ),
    { numRuns: 300 },
  );
});

// Found by the law above: the second batch is sent while the add of the first, of another address,
// is still unanswered; that add has nothing to join into the second batch's check yet.
test('example: a batch is sent while an earlier add of other addresses is unanswered', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  const file = fileWith('email\na@example.com\nb@example.com\n');
  // The first add is answered only after the second check is, and a turn of the event loop later.
  let checks = 0;
  let adds = 0;
  let answerFirstAdd!: () => void;
  const firstAddAnswered = new Promise<void>((resolve) => (answerFirstAdd = resolve));
  const target: { suppressions: SuppressionTarget } = {
    suppressions: {
      list: (...args) => mailwarden.suppressions.list(...args),
      async checkMany(...args) {
        const answer = await mailwarden.suppressions.checkMany(...args);
        if (++checks === 2) setImmediate(answerFirstAdd);
        return answer;
      },
      async addMany(...args) {
        const answer = await mailwarden.suppressions.addMany(...args);
        if (++adds === 1) await firstAddAnswered;
        return answer;
      },
    },
  };
  expect(await importSuppressions(target, { projectId: 'p', file, batchSize: 1 })).toMatchObject({ rows: 2, added: 2 });
  expect([checks, adds]).toEqual([2, 2]);
});

// Found by the law above: a batch read and checked while the batch before it waits to be sent misses
// what that batch does to an address they share. Here the adds of x and y are answered only once the
// two batches of a@example.com are checked: the first a is added after the second a's check, and the
// second is stored, its answer lost, and sent again; it was suppressed before, by the first.
test('example: a check sent before the batch ahead of it is sent still counts what that batch did', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  const file = fileWith('email\nx@example.com\ny@example.com\na@example.com\na@example.com\n');
  let checks = 0;
  let adds = 0;
  let answerFirstAdds!: () => void;
  const bothChecked = new Promise<void>((resolve) => (answerFirstAdds = resolve));
  const target: { suppressions: SuppressionTarget } = {
    suppressions: {
      list: (...args) => mailwarden.suppressions.list(...args),
      async checkMany(...args) {
        const answer = await mailwarden.suppressions.checkMany(...args);
        if (++checks === 4) setImmediate(answerFirstAdds);
        return answer;
      },
      async addMany(...args) {
        const add = ++adds;
        const answer = await mailwarden.suppressions.addMany(...args);
        if (add <= 2) await bothChecked;
        if (add === 4) throw new MailwardenError('store_unavailable', 'The store is gone.');
        return answer;
      },
    },
  };
  const options = { projectId: 'p', file, batchSize: 1 };
  await expect(importSuppressions(target, options)).rejects.toMatchObject({ code: 'store_unavailable' });
  expect(await importSuppressions(mailwarden, options)).toMatchObject({ rows: 4, added: 3, alreadyPresent: 1, resumedFromLine: 5 });
});

// Found by the law above (when sends did not wait for an earlier batch with the same address): two adds
// in flight at once never share an address, so their counts cannot depend on the order the store
// takes them in. The adds here answer a turn of the event loop late; the file's next batch is read
// sooner.
test('example: two adds in flight never share an address', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  const file = fileWith('email\na@example.com\nA@example.com\nb@example.com\n');
  const sending = new Set<string>();
  const shared: string[] = [];
  const target: { suppressions: SuppressionTarget } = {
    suppressions: {
      list: (...args) => mailwarden.suppressions.list(...args),
      checkMany: (...args) => mailwarden.suppressions.checkMany(...args),
      async addMany(project, items, options) {
        const keys = items.map((item) => normalizeEmail(item.email));
        shared.push(...keys.filter((key) => sending.has(key)));
        for (const key of keys) sending.add(key);
        await new Promise((resolve) => setImmediate(resolve));
        const answer = await mailwarden.suppressions.addMany(project, items, options);
        for (const key of keys) sending.delete(key);
        return answer;
      },
    },
  };
  expect(await importSuppressions(target, { projectId: 'p', file, batchSize: 1, checkpoint: false, rejects: false })).toMatchObject({
    added: 2,
    alreadyPresent: 1,
  });
  expect(shared).toEqual([]);
});

// Found by the law above: a store that goes away only after the last batch lets the first run finish,
// and that run's summary is the one to compare (running the file again would find everything present).
test('example: an interruption that never comes leaves one complete run', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  const file = fileWith('email,reason,created_at\na@example.com,manual,\n');
  const summary = await importSuppressions(storeGoingAway(mailwarden, 2, false).target, { projectId: 'p', file, batchSize: 1 });
  expect(summary).toMatchObject({ added: 1, alreadyPresent: 0 });
  expect(summary.resumedFromLine).toBeUndefined();
});

// The case the exact counts turn on: the store answers `present` for a resent batch whose first send
// upgraded an address (manual, then complaint in the file); what the address was before says `upgraded`.
test('example: a crash after the store upgraded an address counts the upgrade once', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  await mailwarden.suppressions.addMany('p', [{ email: 'a@example.com' }]);
  const file = fileWith('email,reason\na@example.com,complaint\nb@example.com,\n');
  await expect(importSuppressions(storeGoingAway(mailwarden, 1, true).target, { projectId: 'p', file })).rejects.toThrow();
  expect(await importSuppressions(mailwarden, { projectId: 'p', file })).toMatchObject({ added: 1, upgraded: 1, alreadyPresent: 0 });
});

// Found by the law above, with the store taking calls out of order: a check can reach the store before
// an add sent earlier and miss what it did to an address the batch in between does not have: here
// b@example.com, added by the first batch and again in the third, which the rerun would count as added
// twice. What every add unanswered when the check was sent did is joined into the check.
test('example: a check that misses an earlier add still counts what that add did', async () => {
  const mailwarden = createMailwarden({ now: () => NOW });
  const file = fileWith('email\nb@example.com\na@example.com\na@example.com\na@example.com\nB@example.com\na@example.com\na@example.com\n');
  const options = { projectId: 'p', file, batchSize: 2 };
  await expect(importSuppressions(addsLate(storeGoingAway(mailwarden, 3, true).target), options)).rejects.toThrow();
  expect(await importSuppressions(mailwarden, options)).toMatchObject({ rows: 7, added: 2, alreadyPresent: 5 });
});

test('any list of strings written as CSV imports as exactly its valid addresses', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(emailish, { maxLength: 40 }), async (values) => {
      const mailwarden = createMailwarden();
      // A second column keeps a row with an empty address from being a blank line.
      const text = `email,row\n${values.map((value, i) => `${csvField(value)},${i}\n`).join('')}`;
      const summary = await importSuppressions(mailwarden, {
        projectId: 'target',
        file: fileWith(text),
        checkpoint: false,
        rejects: false,
      });
      const valid = values.filter((value) => tryNormalizeEmail(value).ok);
      const expected = [...new Set(valid.map((value) => tryNormalizeEmail(value).ok && mailwarden.suppressions.hashOf(value)))].length;
      expect((await stored(mailwarden, 'target')).length).toBe(expected);
      expect(summary).toMatchObject({
        rows: values.length,
        added: expected,
        alreadyPresent: valid.length - expected,
        invalid: values.length - valid.length,
      });
    }),
  );
});

/** Every record of a CSV file, read from `start` in chunks of `chunkBytes`. */
async function csvRecords(file: string, options: Partial<CsvReadOptions>): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const batch of readCsvRecords(file, { delimiter: ',', ...options })) records.push(...batch);
  return records;
}

test('a CSV read on from where any record ends reads as the rest of the whole, in chunks of any size', async () => {
  // Fields with quotes, delimiters, line breaks and characters of two and four bytes; blank lines; a BOM.
  const field = fc.string({ unit: fc.constantFrom('a', 'é', '😀', ',', '"', ' ', '\n', '\r'), maxLength: 8 });
  const lineBreak = fc.constantFrom('\n', '\r\n', '\n\n', '\r\n\r\n');
  const csv = fc.tuple(fc.boolean(), fc.array(fc.tuple(field, lineBreak), { maxLength: 12 }), fc.option(field, { nil: '' }));
  await fc.assert(
    fc.asyncProperty(csv, fc.integer({ min: 1, max: 40 }), async ([bom, lines, last], chunkBytes) => {
      const file = fileWith(`${bom ? '\uFEFF' : ''}${lines.map(([text, end]) => text + end).join('')}${last}`);
      const whole = await csvRecords(file, {});
      expect(await csvRecords(file, { chunkBytes })).toEqual(whole);
      for (const [i, record] of whole.entries()) {
        expect(await csvRecords(file, { start: record.end, firstLine: record.nextLine, chunkBytes })).toEqual(whole.slice(i + 1));
      }
    }),
  );
});

// Found by the law above: csv-parse took the first line break it met for the only one, so a run resumed
// after a line ending in `\n`, in a file whose later lines end in `\r\n`, split those differently.
test('example: a file that mixes `\n` and `\r\n` reads the same from any record', async () => {
  const file = fileWith('email\na@example.com\r\nb@example.com\r\n');
  const whole = await csvRecords(file, {});
  expect(whole.map(({ line, fields }) => [line, fields])).toEqual([
    [1, ['email']],
    [2, ['a@example.com']],
    [3, ['b@example.com']],
  ]);
  expect(await csvRecords(file, { start: whole[0]!.end, firstLine: whole[0]!.nextLine })).toEqual(whole.slice(1));
});

test('a time in the form parseTime writes reads as Date.parse reads it, rolled-over days and hours included', () => {
  const digits = (length: number, max: number) => fc.integer({ min: 0, max }).map((value) => String(value).padStart(length, '0'));
  const canonical = fc
    .tuple(digits(4, 9999), digits(2, 13), digits(2, 32), digits(2, 25), digits(2, 61), digits(2, 61), digits(3, 999))
    .map(([year, month, day, hour, minute, second, ms]) => `${year}-${month}-${day}T${hour}:${minute}:${second}.${ms}Z`);
  fc.assert(
    fc.property(canonical, (text) => {
      const ms = Date.parse(text);
      expect(parseTime(text)).toBe(Number.isFinite(ms) ? new Date(ms).toISOString() : null);
    }),
  );
});

// Found by the law above once unsubscribes were imported (with their own source, so in a bulk add of
// their own): an address as a bounce, then as an unsubscribe, in one batch. Its adds must reach the
// store in file order, or the counts depend on which the store answers first.
test('example: an address from two sources in one batch is counted in file order', async () => {
  const rows = (first: CsvRow['reason'], second: CsvRow['reason']): CsvRow[] => [
    { email: 'c@example.org', reason: first, created_at: '' },
    { email: 'c@example.org', reason: second, created_at: '' },
  ];
  const mailwarden = createMailwarden({ now: () => NOW });
  const bounceFirst = await importSuppressions(mailwarden, { projectId: 'a', file: fileWith(csvOf(rows('BOUNCE', 'unsubscribe'))) });
  expect(bounceFirst).toMatchObject({ added: 1, upgraded: 0, alreadyPresent: 1 });
  const unsubscribeFirst = await importSuppressions(mailwarden, { projectId: 'b', file: fileWith(csvOf(rows('unsubscribe', 'BOUNCE'))) });
  expect(unsubscribeFirst).toMatchObject({ added: 1, upgraded: 1, alreadyPresent: 0 });
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(1, 2, 3), fc.boolean(), fc.scheduler(), (failAt, applied, scheduler) =>
      expectResumeExact(rows('BOUNCE', 'unsubscribe'), [], 2, failAt, applied, scheduler),
    ),
    { numRuns: 30 },
  );
});
