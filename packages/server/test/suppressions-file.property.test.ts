// Laws of import and export: a list exported and imported again keeps its reasons and times; an import
// interrupted at any batch, before or after the store took it, and run again ends with the same store
// and the same summary as one never interrupted; any strings written as CSV import as exactly their
// valid addresses.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, tryNormalizeEmail, type Mailwarden } from '@mailwarden/core';
import fc from 'fast-check';
import { afterAll, expect, test } from 'vitest';
import { csvField, exportSuppressions } from '../src/suppressions-file/export.js';
import { importSuppressions } from '../src/suppressions-file/import.js';
import { address, csvOf, csvRow, emailish, pastTime, storeGoingAway, stored } from './suppressions-file.support.js';

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
  const suppression = fc.record({ email: fc.oneof(address, fc.emailAddress()), reason: fc.constantFrom('manual', 'hard_bounce', 'complaint' as const), created_at: pastTime });
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

test('an import stopped at any batch and run again ends as if it had never stopped', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(csvRow, { minLength: 1, maxLength: 40 }),
      fc.array(fc.record({ email: address, reason: fc.constantFrom('manual', 'hard_bounce', 'complaint' as const), created_at: pastTime }), { maxLength: 4 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 12 }),
      fc.boolean(),
      async (rows, existing, batchSize, failAt, applied) => {
        const content = csvOf(rows);
        const run = async (interrupt: boolean) => {
          const mailwarden = createMailwarden({ now: () => NOW });
          // Whatever the project held before the import.
          await mailwarden.suppressions.addMany('p', existing);
          const file = fileWith(content);
          const options = { projectId: 'p', file, batchSize };
          // A store that goes away after the last batch lets the first run finish.
          const first = interrupt ? await importSuppressions(storeGoingAway(mailwarden, failAt, applied).target, options).catch(() => undefined) : undefined;
          const { resumedFromLine, rejectsFile, ...summary } = first ?? (await importSuppressions(mailwarden, options));
          expect(resumedFromLine !== undefined).toBe(interrupt && first === undefined);
          return { summary, rejects: rejectsFile === null ? '' : readFileSync(rejectsFile, 'utf8'), list: await stored(mailwarden, 'p') };
        };
        expect(await run(true)).toEqual(await run(false));
      },
    ),
    { numRuns: 150 },
  );
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

test('any list of strings written as CSV imports as exactly its valid addresses', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(emailish, { maxLength: 40 }), async (values) => {
      const mailwarden = createMailwarden();
      // A second column keeps a row with an empty address from being a blank line.
      const text = `email,row\n${values.map((value, i) => `${csvField(value)},${i}\n`).join('')}`;
      const summary = await importSuppressions(mailwarden, { projectId: 'target', file: fileWith(text), checkpoint: false, rejects: false });
      const valid = values.filter((value) => tryNormalizeEmail(value).ok);
      const expected = [...new Set(valid.map((value) => tryNormalizeEmail(value).ok && mailwarden.suppressions.hashOf(value)))].length;
      expect((await stored(mailwarden, 'target')).length).toBe(expected);
      expect(summary).toMatchObject({ rows: values.length, added: expected, alreadyPresent: valid.length - expected, invalid: values.length - valid.length });
    }),
  );
});
