import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, tryNormalizeEmail, type Mailwarden } from '@mailwarden/core';
import fc from 'fast-check';
import { afterAll, expect, test } from 'vitest';
import { csvField, exportSuppressions } from '../src/suppressions-file/export.js';
import { importSuppressions } from '../src/suppressions-file/import.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-suppressions-file-property-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let runs = 0;
function fileWith(content: string): string {
  const path = join(directory, `${++runs}.csv`);
  writeFileSync(path, content);
  return path;
}

/** Addresses, valid ones and strings a CSV writer must quote: commas, quotes, white space, no @. */
const emailish = fc
  .oneof(
    fc.emailAddress(),
    fc.tuple(fc.emailAddress(), fc.constantFrom(' ', '"', ',', '""', '\t', ' , ')).map(([email, noise]) => `${noise}${email}${noise}`),
    fc.string({ unit: fc.constantFrom('a', 'b', '@', '.', ',', '"', ' ', 'é', '+', '\t'), maxLength: 20 }),
    fc.string({ maxLength: 30 }),
  )
  // A quoted field cannot span lines (the importer reads physical lines).
  .filter((value) => !/[\r\n]/.test(value));

async function suppressedHashes(mailwarden: Mailwarden, projectId: string): Promise<string[]> {
  const hashes: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await mailwarden.suppressions.list(projectId, cursor === null ? { limit: 100 } : { limit: 100, cursor });
    hashes.push(...page.items.map((item) => item.hash));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return hashes.sort();
}

test('CSV export then import into another project keeps the set of suppressed hashes', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(emailish, { maxLength: 40 }), async (values) => {
      const mailwarden = createMailwarden();
      for (const value of values) await mailwarden.suppressions.add('source', value).catch(() => {});
      let text = '';
      const output = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          text += chunk.toString('utf8');
          callback();
        },
      });
      await exportSuppressions(mailwarden, { projectId: 'source', format: 'csv', output });
      const summary = await importSuppressions(mailwarden, { projectId: 'target', file: fileWith(text), checkpoint: false });
      const source = await suppressedHashes(mailwarden, 'source');
      expect(await suppressedHashes(mailwarden, 'target')).toEqual(source);
      expect(summary).toMatchObject({ added: source.length, alreadyPresent: 0, invalid: 0 });
    }),
  );
});

test('any list of strings written as CSV imports as exactly its valid addresses', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(emailish, { maxLength: 40 }), async (values) => {
      const mailwarden = createMailwarden();
      // A second column keeps a row with an empty address from being a blank line.
      const text = `email,row\n${values.map((value, i) => `${csvField(value)},${i}\n`).join('')}`;
      const summary = await importSuppressions(mailwarden, { projectId: 'target', file: fileWith(text), checkpoint: false });
      const valid = values.filter((value) => tryNormalizeEmail(value).ok);
      const expected = [...new Set(valid.map((value) => mailwarden.suppressions.hashOf(value)))].sort();
      expect(await suppressedHashes(mailwarden, 'target')).toEqual(expected);
      expect(summary).toMatchObject({
        lines: values.length + 1,
        added: expected.length,
        alreadyPresent: valid.length - expected.length,
        invalid: values.length - valid.length,
      });
    }),
  );
});
