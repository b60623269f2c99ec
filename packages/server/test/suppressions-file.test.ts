import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, MailwardenError, type Mailwarden } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { exportSuppressions } from '../src/suppressions-file/export.js';
import type { ImportCheckpoint } from '../src/suppressions-file/import-checkpoint.js';
import { importSuppressions, type ImportProgress } from '../src/suppressions-file/import.js';
import { createProgressBar } from '../src/suppressions-file/progress.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-suppressions-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let files = 0;
/** A new file in the test directory; the name keeps its extension, which can decide the format. */
function fileWith(name: string, content: string): string {
  const path = join(directory, `${++files}-${name}`);
  writeFileSync(path, content);
  return path;
}

const projectId = () => `p-${randomUUID()}`;

async function suppressedEmails(mailwarden: Pick<Mailwarden, 'suppressions'>, project: string): Promise<string[]> {
  const emails: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await mailwarden.suppressions.list(project, cursor === null ? { limit: 100 } : { limit: 100, cursor });
    emails.push(...page.items.map((item) => item.email));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return emails.sort();
}

async function exportToText(mailwarden: Pick<Mailwarden, 'suppressions'>, project: string, format: 'csv' | 'jsonl') {
  let text = '';
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  const { exported } = await exportSuppressions(mailwarden, { projectId: project, format, output });
  return { text, exported };
}

/**
 * A wrapper whose `add` fails with `store_unavailable` from call number `calls + 1` on. Calls take 0 to 3
 * event-loop turns, so they finish out of order, as on a real store.
 */
function storeFailingAfter(mailwarden: Mailwarden, calls: number) {
  let made = 0;
  let stored = 0;
  const wrapped: Pick<Mailwarden, 'suppressions'> = {
    suppressions: {
      ...mailwarden.suppressions,
      async add(project, email) {
        const call = ++made;
        for (let turns = (call * 7) % 4; turns > 0; turns--) await new Promise(setImmediate);
        if (call > calls) throw new MailwardenError('store_unavailable', 'The store is gone.');
        const result = await mailwarden.suppressions.add(project, email);
        if (result.created) stored++;
        return result;
      },
    },
  };
  return { wrapped, stored: () => stored };
}

function readCheckpointFile(file: string): ImportCheckpoint {
  return JSON.parse(readFileSync(`${file}.mailwarden-import.json`, 'utf8')) as ImportCheckpoint;
}

const addresses = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `user${from + i}@example.com`);

describe('importSuppressions: formats', () => {
  test('CSV with a header finds the email column by name and ignores the other columns', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('list.csv', 'Name,EMAIL,Reason\n"Doe, Jane",jane@example.com,hard_bounce\nBob,Bob@Example.COM,complaint\n');
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toEqual({ lines: 3, added: 2, alreadyPresent: 0, invalid: 0, invalidEntries: [] });
    expect(await suppressedEmails(mailwarden, project)).toEqual(['bob@example.com', 'jane@example.com']);
    // Every import is manual, whatever the file's reason column says, and its provenance says import.
    const { items } = await mailwarden.suppressions.list(project);
    expect(items.map((item) => item.reason)).toEqual(['manual', 'manual']);
    expect(items.map(({ source, cause }) => ({ source, cause }))).toEqual([
      { source: 'import', cause: null },
      { source: 'import', cause: null },
    ]);
  });

  test('CSV whose first field has no @ is a header with the address in column 0', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('list.csv', 'address,note\na@example.com,x\nb@example.com,y\n');
    expect(await importSuppressions(mailwarden, { projectId: project, file })).toMatchObject({ lines: 3, added: 2, invalid: 0 });
  });

  test('CSV without a header takes column 0 from the first line on', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('list.csv', 'a@example.com,first\nb@example.com\nc@example.com,third,extra');
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ lines: 3, added: 3, invalid: 0 });
    expect(await suppressedEmails(mailwarden, project)).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
  });

  test('quoted fields: commas, "" escapes and spaces around the quotes', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith(
      'quoted.csv',
      ['note,email', '"says ""hi"", twice","quoted@example.com"', '"a,b",  "spaced@example.com"  ', 'plain,"o\'brien@example.com"'].join('\n'),
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ lines: 4, added: 3, invalid: 0 });
    expect(await suppressedEmails(mailwarden, project)).toEqual(["o'brien@example.com", 'quoted@example.com', 'spaced@example.com']);
  });

  test('a UTF-8 BOM, CRLF line ends, blank lines and a missing final newline', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('bom.csv', '\uFEFFemail\r\n\r\na@example.com\r\n  \r\nb@example.com\r\n\n\nc@example.com');
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toEqual({ lines: 8, added: 3, alreadyPresent: 0, invalid: 0, invalidEntries: [] });
  });

  test('JSON Lines: objects with an email; anything else is invalid with its line number', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith(
      'events.jsonl',
      [
        '{"email":"a@example.com","reason":"hard_bounce"}',
        '',
        '{"email": "B@Example.com"}',
        '{"email": 42}',
        '["c@example.com"]',
        '{not json',
        '{"address":"d@example.com"}',
        '{"email":"not-an-address"}',
        '"e@example.com"',
        '{"email":"a@example.com"}',
      ].join('\n') + '\n',
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toEqual({
      lines: 10,
      added: 2,
      alreadyPresent: 1,
      invalid: 6,
      invalidEntries: [
        { line: 4, value: '{"email": 42}', reason: '"email" is missing or not a string' },
        { line: 5, value: '["c@example.com"]', reason: 'not a JSON object' },
        { line: 6, value: '{not json', reason: 'not valid JSON' },
        { line: 7, value: '{"address":"d@example.com"}', reason: '"email" is missing or not a string' },
        { line: 8, value: 'not-an-address', reason: 'missing @' },
        { line: 9, value: '"e@example.com"', reason: 'not a JSON object' },
      ],
    });
  });

  test('without a telling extension the format is sniffed from the first non-blank line, or given', async () => {
    const mailwarden = createMailwarden();
    const jsonl = fileWith('export.txt', '\n\n  {"email":"a@example.com"}\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file: jsonl })).toMatchObject({ added: 1, invalid: 0 });
    const csv = fileWith('export.txt', 'email\na@example.com\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file: csv })).toMatchObject({ added: 1, invalid: 0 });
    // An explicit format wins over the extension.
    const named = fileWith('export.csv', '{"email":"a@example.com"}\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file: named, format: 'jsonl' })).toMatchObject({ added: 1 });
  });
});

describe('importSuppressions: invalid rows', () => {
  test('CSV rows without a valid address are listed with their physical line numbers', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith(
      'bad.csv',
      [
        'name,email', // 1
        'ok,ok@example.com', // 2
        '', // 3
        'only-a-name', // 4: no column 2
        '"unterminated,x@example.com', // 5
        '"closed"trailing,y@example.com', // 6
        'empty,', // 7
        'bad,no-at-sign', // 8
        'dot,a..b@example.com', // 9
        'ok2,ok2@example.com', // 10
      ].join('\r\n'),
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toEqual({
      lines: 10,
      added: 2,
      alreadyPresent: 0,
      invalid: 6,
      invalidEntries: [
        { line: 4, value: 'only-a-name', reason: 'no column 2' },
        { line: 5, value: '"unterminated,x@example.com', reason: 'unterminated quoted field (a field cannot span lines)' },
        { line: 6, value: '"closed"trailing,y@example.com', reason: 'text after a closing quote' },
        { line: 7, value: '', reason: 'missing @' },
        { line: 8, value: 'no-at-sign', reason: 'missing @' },
        { line: 9, value: 'a..b@example.com', reason: 'local part has characters outside a dot-atom' },
      ],
    });
  });

  test('keeps the first 1 000 invalid rows, values cut to 200 characters, and counts them all', async () => {
    const mailwarden = createMailwarden();
    const long = 'x'.repeat(300);
    const file = fileWith('many-bad.csv', `email\n${Array.from({ length: 1500 }, (_, i) => `${long}${i}@example.com`).join('\n')}\nok@example.com\n`);
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file });
    expect(summary).toMatchObject({ lines: 1502, added: 1, invalid: 1500 });
    expect(summary.invalidEntries).toHaveLength(1000);
    expect(summary.invalidEntries[0]).toEqual({ line: 2, value: 'x'.repeat(200), reason: 'local part over 64 octets' });
    expect(summary.invalidEntries[999]!.line).toBe(1001);
  });

  test('a line over 1 MiB is one invalid row, not a buffered megabyte', async () => {
    const mailwarden = createMailwarden();
    const file = fileWith('long.csv', `a@example.com\n${'y'.repeat(1.5 * 2 ** 20)}\nb@example.com\n`);
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file });
    expect(summary).toMatchObject({ lines: 3, added: 2, invalid: 1 });
    expect(summary.invalidEntries).toEqual([{ line: 2, value: '', reason: 'line longer than 1 MiB' }]);
  });

  test('errors other than invalid_email stop the import and are rethrown', async () => {
    const { wrapped } = storeFailingAfter(createMailwarden(), 0);
    const file = fileWith('fail.csv', 'a@example.com\n');
    await expect(importSuppressions(wrapped, { projectId: projectId(), file })).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(importSuppressions(createMailwarden(), { projectId: 'not a project id', file, checkpoint: false })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(importSuppressions(createMailwarden(), { projectId: projectId(), file: join(directory, 'missing.csv') })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});

describe('importSuppressions: repeats and resume', () => {
  test('a second run finds every address already present; repeats within a file count as present', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('twice.csv', 'a@example.com\nb@example.com\nA@EXAMPLE.COM\n');
    expect(await importSuppressions(mailwarden, { projectId: project, file })).toMatchObject({ added: 2, alreadyPresent: 1 });
    const again = await importSuppressions(mailwarden, { projectId: project, file });
    expect(again).toMatchObject({ lines: 3, added: 0, alreadyPresent: 3, invalid: 0 });
    expect(again.resumedFromLine).toBeUndefined();
  });

  test('after a store failure, a rerun resumes from the checkpoint and ends with every address exactly once', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const concurrency = 8;
    // Every 97th row is invalid, so invalid rows before and after the interruption are counted once.
    const rows = Array.from({ length: 5000 }, (_, i) => (i % 97 === 0 ? `broken-${i}` : `user${i}@example.com`));
    const valid = rows.filter((row) => row.includes('@'));
    const file = fileWith('resume.csv', `email\n${rows.join('\n')}\n`);

    const failing = storeFailingAfter(mailwarden, 2500);
    await expect(importSuppressions(failing.wrapped, { projectId: project, file, concurrency })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    const checkpoint = readCheckpointFile(file);
    expect(checkpoint.line).toBeGreaterThan(1000);
    expect(checkpoint.line).toBeLessThan(2600);
    // The checkpoint never runs ahead of the store, and at most `concurrency` adds run past it.
    expect(checkpoint.counts.added).toBeLessThanOrEqual(failing.stored());
    expect(failing.stored()).toBeLessThanOrEqual(checkpoint.counts.added + concurrency);

    const summary = await importSuppressions(mailwarden, { projectId: project, file, concurrency });
    expect(summary.resumedFromLine).toBe(checkpoint.line);
    expect(summary.lines).toBe(5001);
    expect(summary.added + summary.alreadyPresent).toBe(valid.length);
    // Only addresses added after the last checkpoint are added again; they count as already present.
    expect(summary.alreadyPresent).toBe(failing.stored() - checkpoint.counts.added);
    expect(summary.alreadyPresent).toBeLessThanOrEqual(concurrency);
    expect(summary.invalid).toBe(rows.length - valid.length);
    expect(summary.invalidEntries.map((entry) => entry.line)).toEqual(
      rows.flatMap((row, i) => (row.includes('@') ? [] : [i + 2])),
    );
    expect(await suppressedEmails(mailwarden, project)).toEqual([...valid].sort());
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
  });

  test('after an abort, a rerun resumes and still knows the CSV header found on line 1', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const emails = addresses(3000);
    // The address is in column 2: were the header forgotten, the resumed run would read names.
    const file = fileWith('abort.csv', `name,email\n${emails.map((email, i) => `name${i},${email}`).join('\n')}\n`);
    const controller = new AbortController();
    const onProgress = (progress: ImportProgress) => {
      if (progress.lines >= 1200) controller.abort();
    };
    await expect(importSuppressions(mailwarden, { projectId: project, file, signal: controller.signal, onProgress })).rejects.toMatchObject({
      name: 'AbortError',
    });
    const checkpoint = readCheckpointFile(file);
    expect(checkpoint).toMatchObject({ version: 1, projectId: project, format: 'csv', csvEmailColumn: 1 });
    expect(checkpoint.line).toBeGreaterThanOrEqual(1200);

    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ resumedFromLine: checkpoint.line, lines: 3001, added: 3000 - summary.alreadyPresent, invalid: 0 });
    expect(summary.alreadyPresent).toBeLessThanOrEqual(32);
    expect(await suppressedEmails(mailwarden, project)).toEqual([...emails].sort());
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
  });

  test('a changed file, another project or restart: true ignore the checkpoint', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const file = fileWith('changing.csv', `${addresses(3000).join('\n')}\n`);
    const interrupt = async (target: string, project: string) => {
      const { wrapped } = storeFailingAfter(mailwarden, 1500);
      await expect(importSuppressions(wrapped, { projectId: project, file: target })).rejects.toMatchObject({ code: 'store_unavailable' });
      expect(readCheckpointFile(target).line).toBeGreaterThan(0);
    };

    await interrupt(file, project);
    appendFileSync(file, `${addresses(10, 3000).join('\n')}\n`);
    const grown = await importSuppressions(mailwarden, { projectId: project, file });
    expect(grown.resumedFromLine).toBeUndefined();
    expect(grown).toMatchObject({ lines: 3010, added: 3010 - grown.alreadyPresent });
    expect(grown.alreadyPresent).toBeGreaterThanOrEqual(1500);

    // Same size, other modification time.
    const touched = fileWith('touched.csv', `${addresses(3000).join('\n')}\n`);
    const touchedProject = projectId();
    await interrupt(touched, touchedProject);
    utimesSync(touched, new Date(), new Date(Date.now() + 5000));
    expect((await importSuppressions(mailwarden, { projectId: touchedProject, file: touched })).resumedFromLine).toBeUndefined();

    const other = fileWith('other.csv', `${addresses(3000).join('\n')}\n`);
    await interrupt(other, project);
    expect((await importSuppressions(mailwarden, { projectId: projectId(), file: other })).resumedFromLine).toBeUndefined();

    await interrupt(other, project);
    const restarted = await importSuppressions(mailwarden, { projectId: project, file: other, restart: true });
    expect(restarted).toMatchObject({ lines: 3000, added: 0, alreadyPresent: 3000 });
    expect(restarted.resumedFromLine).toBeUndefined();
  });

  test('checkpoint: false writes no checkpoint; a custom path is used and removed', async () => {
    const mailwarden = createMailwarden();
    const file = fileWith('nocheckpoint.csv', `${addresses(2500).join('\n')}\n`);
    const { wrapped } = storeFailingAfter(mailwarden, 2000);
    await expect(importSuppressions(wrapped, { projectId: projectId(), file, checkpoint: false })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);

    const custom = join(directory, 'custom-checkpoint.json');
    const project = projectId();
    await expect(importSuppressions(storeFailingAfter(mailwarden, 2000).wrapped, { projectId: project, file, checkpoint: custom })).rejects.toThrow();
    expect(existsSync(custom)).toBe(true);
    const summary = await importSuppressions(mailwarden, { projectId: project, file, checkpoint: custom });
    expect(summary.resumedFromLine).toBeGreaterThan(0);
    expect(existsSync(custom)).toBe(false);
  });

  test('50 000 rows', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    const rows = Array.from({ length: 50_000 }, (_, i) => (i % 1000 === 999 ? `user${i - 1}@example.com` : `user${i}@example.com`));
    const file = fileWith('big.csv', `email\n${rows.join('\n')}\n`);
    const updates: ImportProgress[] = [];
    const summary = await importSuppressions(mailwarden, { projectId: project, file, onProgress: (progress) => updates.push(progress) });
    expect(summary).toEqual({ lines: 50_001, added: 49_950, alreadyPresent: 50, invalid: 0, invalidEntries: [] });
    expect(updates.at(-1)).toEqual({ bytesRead: readFileSync(file).length, totalBytes: readFileSync(file).length, lines: 50_001, added: 49_950, alreadyPresent: 50, invalid: 0 });
    // About every 100 lines: several lines can finish at once, so not exactly.
    expect(updates.length).toBeGreaterThan(250);
    expect(updates.every((update, i) => i === 0 || update.lines >= updates[i - 1]!.lines)).toBe(true);
  });
});

describe('exportSuppressions', () => {
  test('CSV and JSON Lines exports import into another project as the same set', async () => {
    const mailwarden = createMailwarden();
    const source = projectId();
    const emails = addresses(250);
    for (const email of emails) await mailwarden.suppressions.add(source, email);

    const csv = await exportToText(mailwarden, source, 'csv');
    expect(csv.exported).toBe(250);
    expect(csv.text.split('\n')[0]).toBe('email,reason,created_at,hash');
    const jsonl = await exportToText(mailwarden, source, 'jsonl');
    expect(jsonl.exported).toBe(250);
    const first: unknown = JSON.parse(jsonl.text.split('\n')[0]!);
    expect(Object.keys(first as object)).toEqual(['email', 'reason', 'created_at', 'hash']);

    for (const [name, text] of [['export.csv', csv.text], ['export.jsonl', jsonl.text]] as const) {
      const target = projectId();
      const summary = await importSuppressions(mailwarden, { projectId: target, file: fileWith(name, text) });
      expect(summary).toMatchObject({ added: 250, alreadyPresent: 0, invalid: 0 });
      expect(await suppressedEmails(mailwarden, target)).toEqual([...emails].sort());
    }
  });

  test('an empty project exports only the CSV header', async () => {
    expect(await exportToText(createMailwarden(), projectId(), 'csv')).toEqual({ text: 'email,reason,created_at,hash\n', exported: 0 });
  });

  test('waits for drain whenever write returns false', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    for (const email of addresses(450)) await mailwarden.suppressions.add(project, email);
    let full = false;
    let writesWhileFull = 0;
    let rows = 0;
    const output = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        rows += chunk.toString('utf8').split('\n').length - 1;
        setTimeout(callback, 1);
      },
    });
    const write = output.write.bind(output) as (chunk: string) => boolean;
    output.write = ((chunk: string) => {
      if (full) writesWhileFull++;
      full = !write(chunk);
      return !full;
    }) as typeof output.write;
    output.on('drain', () => (full = false));
    const progress: number[] = [];
    const { exported } = await exportSuppressions(mailwarden, { projectId: project, format: 'jsonl', output, onProgress: (n) => progress.push(n) });
    await new Promise<void>((resolve) => output.end(resolve));
    expect({ exported, rows, writesWhileFull }).toEqual({ exported: 450, rows: 450, writesWhileFull: 0 });
    expect(progress).toEqual([100, 200, 300, 400, 450]);
  });

  test('rejects when the output fails, and on abort', async () => {
    const mailwarden = createMailwarden();
    const project = projectId();
    for (const email of addresses(300)) await mailwarden.suppressions.add(project, email);
    const broken = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        setTimeout(() => callback(new Error('EPIPE')), 1);
      },
    });
    broken.on('error', () => {});
    await expect(exportSuppressions(mailwarden, { projectId: project, format: 'csv', output: broken })).rejects.toThrow('EPIPE');

    const controller = new AbortController();
    const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const exporting = exportSuppressions(mailwarden, {
      projectId: project,
      format: 'csv',
      output: sink,
      signal: controller.signal,
      onProgress: (n) => n >= 100 && controller.abort(),
    });
    await expect(exporting).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('createProgressBar', () => {
  const progress = (lines: number): ImportProgress => ({ bytesRead: lines * 10, totalBytes: 1000, lines, added: lines - 1, alreadyPresent: 1, invalid: 0 });

  test('draws nothing when the stream is not a terminal', () => {
    const written: string[] = [];
    const bar = createProgressBar({ isTTY: false, write: (text) => written.push(text) > 0 });
    bar.update(progress(10));
    bar.done();
    expect(written).toEqual([]);
  });

  test('on a terminal, redraws one line at most every 100 ms and ends it on done', () => {
    const written: string[] = [];
    let time = 0;
    const bar = createProgressBar({ isTTY: true, columns: 200, write: (text) => written.push(text) > 0 }, () => time);
    bar.update(progress(0));
    time = 50;
    bar.update(progress(20));
    time = 1000;
    bar.update(progress(50));
    bar.done();
    expect(written).toHaveLength(4);
    expect(written[1]).toBe('\r 50.0% 50 lines, 50 lines/s | added 49, already 1, invalid 0\u001b[K');
    expect(written[3]).toBe('\n');
  });
});

// The same import and export on the real stores: their add and list, not just the memory store's.
describe('real stores', () => {
  const emails = [...addresses(300), 'Mixed.Case@Example.COM', 'tagged+news@example.org'];
  const file = () =>
    fileWith('real.csv', `email,reason\n${emails.map((email) => `${email},hard_bounce`).join('\n')}\nnot-an-email,manual\n${emails[0]},manual\n`);

  async function importExportRoundTrip(mailwarden: Mailwarden, countRaw: (project: string) => Promise<number>) {
    const source = projectId();
    const path = file();
    expect(await importSuppressions(mailwarden, { projectId: source, file: path })).toMatchObject({
      lines: 305,
      added: emails.length,
      alreadyPresent: 1,
      invalid: 1,
    });
    expect(await countRaw(source)).toBe(emails.length);
    expect(await importSuppressions(mailwarden, { projectId: source, file: path })).toMatchObject({ added: 0, alreadyPresent: emails.length + 1 });

    const { text, exported } = await exportToText(mailwarden, source, 'csv');
    expect(exported).toBe(emails.length);
    const target = projectId();
    expect(await importSuppressions(mailwarden, { projectId: target, file: fileWith('real-export.csv', text) })).toMatchObject({
      added: emails.length,
      invalid: 0,
    });
    expect(await suppressedEmails(mailwarden, target)).toEqual(await suppressedEmails(mailwarden, source));
    expect(await countRaw(target)).toBe(emails.length);
  }

  test('Postgres', async () => {
    const sql = postgres(inject('databaseUrl'), { max: 8, onnotice: () => {} });
    const schema = `mw_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    try {
      await migrate(sql, { schema });
      const mailwarden = createMailwarden({ store: createPostgresStore({ sql, schema }) });
      await importExportRoundTrip(mailwarden, async (project) => {
        const [row] = await sql.unsafe<{ count: string }[]>(`SELECT count(*) FROM "${schema}".suppressions WHERE project_id = $1`, [project]);
        return Number(row!.count);
      });
      await mailwarden.close();
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });

  test('Redis', async () => {
    const client = new Redis(inject('redisUrl'));
    const keyPrefix = `suppressions-file:${randomUUID()}:`;
    try {
      const mailwarden = createMailwarden({ store: createRedisStore({ client, keyPrefix }) });
      await importExportRoundTrip(mailwarden, (project) => client.hlen(`${keyPrefix}{${project}}:s`));
      await mailwarden.close();
    } finally {
      const keys = await client.keys(`${keyPrefix}*`);
      if (keys.length > 0) await client.unlink(...keys);
      await client.quit();
    }
  });
});
