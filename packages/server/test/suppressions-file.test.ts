// Import and export of suppression lists as a library: every format with its sample file, the rejects
// file, exact counts after a crash at any point, export back to our formats and to SES, and the
// progress line. On the memory store, then on Redis and PostgreSQL. The CLI as a process (SIGKILL,
// --url, --version) is in suppressions-file-cli.test.ts.
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, type Mailwarden } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { exportSuppressions, type ExportFormat } from '../src/suppressions-file/export.js';
import type { ImportCheckpoint } from '../src/suppressions-file/import-checkpoint.js';
import { readCsvRecords } from '../src/suppressions-file/import-csv.js';
import { ImportFileError } from '../src/suppressions-file/import-records.js';
import { importSuppressions, type ImportOptions, type ImportProgress, type ImportSummary } from '../src/suppressions-file/import.js';
import { createProgressBar } from '../src/suppressions-file/progress.js';
import { remoteSuppressions, RemoteServiceError } from '../src/suppressions-file/remote.js';
import type { SuppressionTarget } from '../src/suppressions-file/target.js';
import { storeGoingAway, stored } from './suppressions-file.support.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-suppressions-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const fixtures = new URL('fixtures/', import.meta.url).pathname;

let files = 0;
/** A new file in the test directory; the name keeps its extension, which can decide the format. */
function fileWith(name: string, content: string | Buffer): string {
  const path = join(directory, `${++files}-${name}`);
  writeFileSync(path, content);
  return path;
}

/** A copy of a sample export, so its checkpoint and rejects files land in the test directory. */
function fixture(name: string): string {
  const path = join(directory, `${++files}-${name}`);
  copyFileSync(join(fixtures, name), path);
  return path;
}

const projectId = () => `p-${randomUUID()}`;
const NOW = Date.parse('2026-11-24T12:00:00.000Z');
/** A service whose clock stands still, so rows without a time get the same one on every run. */
const fixedClock = () => createMailwarden({ now: () => NOW });

async function exportToText(
  mailwarden: Pick<Mailwarden, 'suppressions'>,
  project: string,
  format: ExportFormat,
  manualAs?: 'BOUNCE' | 'COMPLAINT',
) {
  let text = '';
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  const result = await exportSuppressions(mailwarden, {
    projectId: project,
    format,
    output,
    ...(manualAs === undefined ? {} : { manualAs }),
  });
  return { text, ...result };
}

function readCheckpointFile(file: string): ImportCheckpoint {
  return JSON.parse(readFileSync(`${file}.mailwarden-import.json`, 'utf8')) as ImportCheckpoint;
}

const addresses = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `user${from + i}@example.com`);
const withoutResume = ({ resumedFromLine: _, ...summary }: ImportSummary) => summary;

describe('provider exports', () => {
  test.each([
    {
      file: 'ses-list-suppressed-destinations.json',
      format: 'ses',
      counts: { rows: 4, added: 3, invalid: 1, skipped: 0 },
      rows: [
        ['bounced@example.com', 'hard_bounce', '2024-03-05T09:15:27.481Z'],
        ['complained@example.com', 'complaint', '2024-02-12T01:02:44.120Z'],
        ['inbox-full-once@example.org', 'hard_bounce', '2023-11-30T23:59:59.000Z'],
      ],
    },
    {
      file: 'sendgrid-bounces.csv',
      format: 'sendgrid-bounces',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['bounced@example.com', 'hard_bounce', '2024-03-05T09:15:27.000Z'],
        ['gone@example.org', 'hard_bounce', '2024-02-11T17:02:44.000Z'],
      ],
    },
    {
      file: 'sendgrid-spam-reports.csv',
      format: 'sendgrid-spam-reports',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['annoyed@example.org', 'complaint', '2023-11-30T23:59:59.000Z'],
        ['complained@example.com', 'complaint', '2024-02-11T17:02:44.000Z'],
      ],
    },
    {
      file: 'sendgrid-invalid-emails.csv',
      format: 'sendgrid-invalid-emails',
      counts: { rows: 2, added: 1, invalid: 1, skipped: 0 },
      rows: [['no-such-domain@example.invalid', 'hard_bounce', '2024-03-05T09:15:27.000Z']],
    },
    {
      file: 'sendgrid-unsubscribes.csv',
      format: 'sendgrid-unsubscribes',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['newsletter-only@example.org', 'manual', '2024-02-11T17:02:44.000Z', 'unsubscribe'],
        ['opted-out@example.com', 'manual', '2024-03-05T09:15:27.000Z', 'unsubscribe'],
      ],
    },
    {
      file: 'postmark-suppressions-dump.json',
      format: 'postmark',
      counts: { rows: 4, added: 4, invalid: 0, skipped: 0 },
      rows: [
        ['blocked-by-support@example.org', 'manual', '2023-11-30T23:59:59.000Z'],
        ['bounced@example.com', 'hard_bounce', '2024-03-05T09:15:27.000Z'],
        ['clicked-unsubscribe@example.org', 'manual', '2023-10-01T12:00:00.000Z', 'unsubscribe'],
        ['complained@example.com', 'complaint', '2024-02-12T01:02:44.000Z'],
      ],
    },
    {
      file: 'resend-suppressions.json',
      format: 'resend',
      counts: { rows: 3, added: 3, invalid: 0, skipped: 0 },
      rows: [
        ['blocked-by-support@example.org', 'manual', '2023-11-30T23:59:59.000Z'],
        ['bounced@example.com', 'hard_bounce', '2024-03-05T09:15:27.123Z'],
        ['complained@example.com', 'complaint', '2024-02-12T01:02:44.000Z'],
      ],
    },
    {
      file: 'mailgun-bounces.csv',
      format: 'mailgun-bounces',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['bounced@example.com', 'hard_bounce', '2024-03-05T09:15:27.000Z'],
        ['gone@example.org', 'hard_bounce', '2024-02-11T17:02:44.000Z'],
      ],
    },
    {
      file: 'mailgun-complaints.csv',
      format: 'mailgun-complaints',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['annoyed@example.org', 'complaint', '2023-11-30T23:59:59.000Z'],
        ['complained@example.com', 'complaint', '2024-02-11T17:02:44.000Z'],
      ],
    },
    {
      file: 'mailgun-unsubscribes.csv',
      format: 'mailgun-unsubscribes',
      counts: { rows: 1, added: 1, invalid: 0, skipped: 0 },
      rows: [['opted-out@example.com', 'manual', '2024-03-05T09:15:27.000Z', 'unsubscribe']],
    },
    {
      file: 'ses-import.csv',
      format: 'ses-import',
      counts: { rows: 2, added: 2, invalid: 0, skipped: 0 },
      rows: [
        ['bounced@example.com', 'hard_bounce', new Date(NOW).toISOString()],
        ['complained@example.com', 'complaint', new Date(NOW).toISOString()],
      ],
    },
  ])('$file is recognised as $format and keeps reasons and times', async ({ file, format, counts, rows }) => {
    const mailwarden = fixedClock();
    const project = projectId();
    const summary = await importSuppressions(mailwarden, { projectId: project, file: fixture(file) });
    expect(summary).toMatchObject({ format, upgraded: 0, alreadyPresent: 0, ...counts });
    expect(summary.detectedBy).not.toBe('given');
    // Without --stream, every row goes to the project-wide list; an unsubscribe is `manual` from `unsubscribe`.
    expect(await stored(mailwarden, project)).toEqual(
      rows.map(([email, reason, created_at, source = 'import']) => ({ email, reason, created_at, source })),
    );
  });

  test('a SES list whose times are Unix seconds (AWS CLI v1) keeps them', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith(
      'ses-v1.json',
      JSON.stringify({
        SuppressedDestinationSummaries: [{ EmailAddress: 'a@example.com', Reason: 'BOUNCE', LastUpdateTime: 1709630127.481 }],
      }),
    );
    expect(await importSuppressions(mailwarden, { projectId: project, file })).toMatchObject({ format: 'ses', added: 1 });
    expect(await stored(mailwarden, project)).toEqual([
      { email: 'a@example.com', reason: 'hard_bounce', created_at: '2024-03-05T09:15:27.481Z', source: 'import' },
    ]);
  });

  test('unknown provider values are invalid rows, with what was wrong', async () => {
    const mailwarden = fixedClock();
    const file = fileWith(
      'odd.json',
      JSON.stringify({
        Suppressions: [
          { EmailAddress: 'a@example.com', SuppressionReason: 'SoftBounce', CreatedAt: '2024-01-01T00:00:00Z' },
          { EmailAddress: 'b@example.com', SuppressionReason: 'HardBounce', CreatedAt: 'yesterday' },
          { EmailAddress: 'c@example.com', SuppressionReason: 'HardBounce', CreatedAt: '2999-01-01T00:00:00Z' },
          'd@example.com',
          { SuppressionReason: 'HardBounce' },
        ],
      }),
    );
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file });
    expect(summary).toMatchObject({ format: 'postmark', rows: 5, added: 0, invalid: 5 });
    expect(summary.invalidEntries.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 1, reason: '"SuppressionReason" "SoftBounce" is not HardBounce, SpamComplaint or ManualSuppression' },
      { line: 1, reason: 'unreadable time "yesterday"' },
      // The service refuses times in the future; its reason is kept, in the row's place.
      { line: 1, reason: 'created_at: must not be in the future' },
      { line: 1, reason: 'not a JSON object' },
      { line: 1, reason: '"EmailAddress" is missing or not a string' },
    ]);
  });

  test('--format wins over what the file looks like, and a file that is not that format says so', async () => {
    const mailwarden = fixedClock();
    // Read as our CSV, a SendGrid bounce list's `reason` column (an SMTP reply) is not a reason.
    const asCsv = await importSuppressions(mailwarden, { projectId: projectId(), file: fixture('sendgrid-bounces.csv'), format: 'csv' });
    expect(asCsv).toMatchObject({ format: 'csv', detectedBy: 'given', added: 0, invalid: 2 });
    await expect(
      importSuppressions(mailwarden, { projectId: projectId(), file: fixture('sendgrid-bounces.csv'), format: 'ses' }),
    ).rejects.toBeInstanceOf(ImportFileError);
    await expect(
      importSuppressions(mailwarden, { projectId: projectId(), file: fixture('mailgun-complaints.csv'), format: 'sendgrid-bounces' }),
    ).rejects.toThrow(/A sendgrid-bounces file starts with a header that has an email column/);
  });

  test('sniffing is left to our CSV where a provider is not certain', async () => {
    const mailwarden = fixedClock();
    // `created` is SendGrid's name, but our reasons say this is a list of ours.
    const ours = fileWith('ours.csv', 'email,reason,created\na@example.com,complaint,2024-01-01T00:00:00Z\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file: ours })).toMatchObject({ format: 'csv', added: 1 });
    // Mailgun's complaint columns, but an ISO time: not Mailgun's export, so not complaints.
    const project = projectId();
    const iso = fileWith('address.csv', 'address,created_at\na@example.com,2024-01-01T00:00:00Z\n');
    expect(await importSuppressions(mailwarden, { projectId: project, file: iso })).toMatchObject({ format: 'csv', added: 1 });
    expect((await stored(mailwarden, project))[0]).toMatchObject({ reason: 'manual', created_at: '2024-01-01T00:00:00.000Z' });
  });
});

describe('our CSV', () => {
  test("a header names the address, reason and time columns; providers' words for reasons are understood", async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith(
      'list.csv',
      [
        'Name,EMAIL,Reason,Created At',
        '"Doe, Jane",jane@example.com,hard_bounce,2024-01-02T03:04:05.678Z',
        'Bob,Bob@Example.COM,SpamComplaint,2024-01-02 03:04:05',
        'Carol,carol@example.com,,',
        'Dan,dan@example.com,BOUNCE,1704164645',
        'Eve,eve@example.com,unsubscribed,',
        'Fay,fay@example.com,soft_bounce,',
        'Gus,gus@example.com,manual,last tuesday',
      ].join('\n'),
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ format: 'csv', rows: 7, added: 5, invalid: 2, skipped: 0 });
    expect(summary.invalidEntries).toEqual([
      { line: 7, value: 'Fay,fay@example.com,soft_bounce,', reason: 'unknown reason "soft_bounce"' },
      { line: 8, value: 'Gus,gus@example.com,manual,last tuesday', reason: 'unreadable time "last tuesday"' },
    ]);
    expect(await stored(mailwarden, project)).toEqual([
      { email: 'bob@example.com', reason: 'complaint', created_at: '2024-01-02T03:04:05.000Z', source: 'import' },
      { email: 'carol@example.com', reason: 'manual', created_at: new Date(NOW).toISOString(), source: 'import' },
      { email: 'dan@example.com', reason: 'hard_bounce', created_at: '2024-01-02T03:04:05.000Z', source: 'import' },
      { email: 'eve@example.com', reason: 'manual', created_at: new Date(NOW).toISOString(), source: 'unsubscribe' },
      { email: 'jane@example.com', reason: 'hard_bounce', created_at: '2024-01-02T03:04:05.678Z', source: 'import' },
    ]);
  });

  test('without a named column: a first field without @ is a header, else there is none; other columns are ignored', async () => {
    const mailwarden = fixedClock();
    const withHeader = fileWith('header.csv', 'address,note\na@example.com,x\nb@example.com,y\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file: withHeader })).toMatchObject({ rows: 2, added: 2 });
    const project = projectId();
    const bare = fileWith('bare.csv', 'a@example.com,first\nb@example.com\nc@example.com,third,extra');
    expect(await importSuppressions(mailwarden, { projectId: project, file: bare })).toMatchObject({ rows: 3, added: 3, invalid: 0 });
    expect((await stored(mailwarden, project)).map((row) => row.reason)).toEqual(['manual', 'manual', 'manual']);
  });

  test('csv-parse reads what spreadsheets write: BOM, `;`, quoted fields across lines, CRLF, blank lines', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const summary = await importSuppressions(mailwarden, { projectId: project, file: fixture('semicolon-excel.csv') });
    expect(summary).toMatchObject({ format: 'csv', rows: 4, added: 3, invalid: 1 });
    // Line numbers are physical lines: the quoted field spans lines 3 and 4, line 5 is blank.
    expect(summary.invalidEntries).toEqual([{ line: 6, value: '', reason: 'missing @' }]);
    expect((await stored(mailwarden, project)).map(({ email, reason }) => [email, reason])).toEqual([
      ['hans.mueller@example.de', 'hard_bounce'],
      ['ohne-grund@example.de', 'manual'],
      ['zwei@example.de', 'complaint'],
    ]);
  });

  test('stray quotes make one odd field; a quote never closed is one invalid row at the end', async () => {
    const mailwarden = fixedClock();
    const file = fileWith(
      'quotes.csv',
      ['email,note', 'a"b@example.com,x', '"c@example.com"trailing,y', '"quoted, fine@example.com",z', 'ok@example.com,"never closed'].join(
        '\n',
      ),
    );
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file });
    expect(summary).toMatchObject({ rows: 4, added: 0, invalid: 4 });
    expect(summary.invalidEntries.map(({ line, value, reason }) => [line, value, reason])).toEqual([
      [2, 'a"b@example.com', 'local part has characters outside a dot-atom'],
      [3, '"c@example.com"trailing', 'local part has characters outside a dot-atom'],
      [4, 'quoted, fine@example.com', 'local part has characters outside a dot-atom'],
      [5, 'ok@example.com,"never closed', 'a quoted field is not closed before the end of the file'],
    ]);
  });

  test('a record that runs over the size limit stops the import, naming its line', async () => {
    // Past the limit by more than a chunk read (64 KiB), which is when the reader notices.
    const file = fileWith('open-quote.csv', `email\na@example.com\n"b@example.com\n${'x\n'.repeat(40_000)}`);
    const read = async () => {
      for await (const _ of readCsvRecords(file, { delimiter: ',', maxRecordBytes: 1024 }));
    };
    await expect(read()).rejects.toThrow(
      new ImportFileError(
        'Line 3: a record runs over 1024 bytes, most likely a quote that is never closed. Fix the file and import it again.',
      ),
    );
  });

  test("JSON Lines: our export's objects, and any object with an address", async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith(
      'events.jsonl',
      `${[
        '{"email":"a@example.com","reason":"hard_bounce","created_at":"2024-01-01T00:00:00.000Z"}',
        '',
        '{"emailAddress": "B@Example.com", "reason": "COMPLAINT"}',
        '{"email": 42}',
        '["c@example.com"]',
        '{not json',
        '{"email":"not-an-address"}',
        '{"email":"a@example.com","reason":"manual","created_at":"2023-06-01T00:00:00.000Z"}',
      ].join('\n')}\n`,
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ format: 'jsonl', rows: 7, added: 2, alreadyPresent: 1, invalid: 4 });
    expect(summary.invalidEntries.map(({ line, reason }) => [line, reason])).toEqual([
      [4, '"email" is missing or not a string'],
      [5, 'not a JSON object'],
      [6, 'not valid JSON'],
      [7, 'missing @'],
    ]);
    // A weaker reason with an earlier time: the reason stays, the time moves back.
    expect(await stored(mailwarden, project)).toEqual([
      { email: 'a@example.com', reason: 'hard_bounce', created_at: '2023-06-01T00:00:00.000Z', source: 'import' },
      { email: 'b@example.com', reason: 'complaint', created_at: new Date(NOW).toISOString(), source: 'import' },
    ]);
  });
});

describe('the rejects file', () => {
  test('lists every row not imported, with its line and why; a new run starts it again', async () => {
    const mailwarden = fixedClock();
    const long = 'x'.repeat(1500);
    const file = fileWith(
      'bad.csv',
      [
        'email,reason',
        'ok@example.com,',
        'no-at-sign,',
        `${long}@example.com,`,
        'gone@example.com,unsubscribe',
        'q@example.com,maybe',
      ].join('\n'),
    );
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file });
    expect(summary).toMatchObject({ added: 2, invalid: 3, skipped: 0, rejectsFile: `${file}.rejects.csv` });
    const lines = readFileSync(`${file}.rejects.csv`, 'utf8').split('\n');
    expect(lines[0]).toBe('line,value,reason');
    expect(lines.slice(1, 3)).toEqual(['3,no-at-sign,missing @', `4,${'x'.repeat(1000)},local part over 64 octets`]);
    expect(lines.slice(3)).toEqual(['6,"q@example.com,maybe","unknown reason ""maybe"""', '']);
    // The summary lists the first invalid rows, shorter.
    expect(summary.invalidEntries[1]).toEqual({ line: 4, value: 'x'.repeat(200), reason: 'local part over 64 octets' });

    // Fixed, the same file imports without rejects, and the old rejects file goes.
    writeFileSync(file, 'email\nok@example.com\n');
    expect(await importSuppressions(mailwarden, { projectId: projectId(), file })).toMatchObject({ rejectsFile: null });
    expect(existsSync(`${file}.rejects.csv`)).toBe(false);
  });

  test('counts every invalid row, lists the first 100 in the summary, and can go elsewhere or nowhere', async () => {
    const mailwarden = fixedClock();
    const file = fileWith('many-bad.csv', `email\n${Array.from({ length: 1500 }, (_, i) => `bad${i}`).join('\n')}\nok@example.com\n`);
    const rejects = join(directory, 'elsewhere.csv');
    const summary = await importSuppressions(mailwarden, { projectId: projectId(), file, rejects, batchSize: 7 });
    expect(summary).toMatchObject({ rows: 1501, added: 1, invalid: 1500, rejectsFile: rejects });
    expect(summary.invalidEntries).toHaveLength(100);
    expect(readFileSync(rejects, 'utf8').trimEnd().split('\n')).toHaveLength(1501);
    const nowhere = await importSuppressions(mailwarden, { projectId: projectId(), file, rejects: false });
    expect(nowhere).toMatchObject({ invalid: 1500, rejectsFile: null });
    expect(existsSync(`${file}.rejects.csv`)).toBe(false);
  });
});

describe('resuming', () => {
  /** Rows with repeats, several reasons, invalid rows and unsubscribes, some with times. */
  const mixedRows = (count: number) =>
    Array.from({ length: count }, (_, i) => {
      if (i % 97 === 0) return `broken-${i},`;
      if (i % 89 === 0) return `user${i}@example.com,unsubscribe`;
      const n = i % 701; // repeats
      const reason = ['', 'hard_bounce', 'complaint', 'manual'][i % 4];
      const time = i % 3 === 0 ? `,2024-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z` : ',';
      return `user${n}@example.com,${reason}${time}`;
    });

  async function uninterrupted(
    content: string,
    options: Partial<ImportOptions> = {},
    setup?: (mailwarden: Mailwarden, project: string) => Promise<void>,
  ) {
    const mailwarden = fixedClock();
    const project = projectId();
    await setup?.(mailwarden, project);
    const summary = await importSuppressions(mailwarden, { projectId: project, file: fileWith('whole.csv', content), ...options });
    return {
      summary,
      rows: await stored(mailwarden, project),
      rejects: summary.rejectsFile === null ? '' : readFileSync(summary.rejectsFile, 'utf8'),
    };
  }

  test.each([
    { failAt: 1, applied: true },
    { failAt: 3, applied: true },
    { failAt: 3, applied: false },
    { failAt: 6, applied: true },
  ])('a store lost at bulk add $failAt (applied: $applied): the rerun ends as an uninterrupted import', async ({ failAt, applied }) => {
    const content = `email,reason,created_at\n${mixedRows(3000).join('\n')}\n`;
    const setup = async (mailwarden: Mailwarden, project: string) => {
      // Some addresses are already suppressed by hand, so the import upgrades them.
      await mailwarden.suppressions.addMany(
        project,
        addresses(40, 0).map((email) => ({ email, created_at: '2020-01-01T00:00:00Z' })),
      );
    };
    const expected = await uninterrupted(content, { batchSize: 300 }, setup);
    expect(expected.summary.upgraded).toBeGreaterThan(0);

    const mailwarden = fixedClock();
    const project = projectId();
    await setup(mailwarden, project);
    const file = fileWith('resume.csv', content);
    const failing = storeGoingAway(mailwarden, failAt, applied);
    await expect(importSuppressions(failing.target, { projectId: project, file, batchSize: 300 })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    const checkpoint = readCheckpointFile(file);
    // The lost batch is in flight (with the one sent after it, if any); the rows before it are done.
    expect(checkpoint.inFlight.length).toBeGreaterThanOrEqual(1);
    expect(checkpoint.inFlight.length).toBeLessThanOrEqual(2);
    expect(checkpoint.inFlight[0]!.before).toHaveLength(300);

    const resumed = await importSuppressions(mailwarden, { projectId: project, file, batchSize: 300 });
    expect(resumed.resumedFromLine).toBe(checkpoint.done.nextLine);
    expect(withoutResume(resumed)).toEqual({ ...withoutResume(expected.summary), rejectsFile: `${file}.rejects.csv` });
    expect(await stored(mailwarden, project)).toEqual(expected.rows);
    expect(readFileSync(`${file}.rejects.csv`, 'utf8')).toBe(expected.rejects);
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
  });

  test('after an abort, the batch in flight finishes and the rerun resumes after it', async () => {
    const content = `email,reason,created_at\n${mixedRows(5000).join('\n')}\n`;
    const expected = await uninterrupted(content);
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith('abort.csv', content);
    const controller = new AbortController();
    const onProgress = (progress: ImportProgress) => {
      if (progress.rows >= 2000) controller.abort();
    };
    await expect(importSuppressions(mailwarden, { projectId: project, file, signal: controller.signal, onProgress })).rejects.toMatchObject(
      { name: 'AbortError' },
    );
    const checkpoint = readCheckpointFile(file);
    expect(checkpoint).toMatchObject({ version: 3, projectId: project, format: 'csv', inFlight: [] });
    expect(checkpoint.done.rows).toBeGreaterThanOrEqual(2000);

    const resumed = await importSuppressions(mailwarden, { projectId: project, file });
    expect(resumed.resumedFromLine).toBe(checkpoint.done.nextLine);
    expect(withoutResume(resumed)).toEqual({ ...withoutResume(expected.summary), rejectsFile: `${file}.rejects.csv` });
    expect(await stored(mailwarden, project)).toEqual(expected.rows);
    expect(readFileSync(`${file}.rejects.csv`, 'utf8')).toBe(expected.rejects);
  });

  test('a resumed JSON export continues inside its array', async () => {
    const summaries = Array.from({ length: 2500 }, (_, i) => ({
      EmailAddress: `user${i % 2000}@example.com`,
      Reason: i % 5 === 0 ? 'COMPLAINT' : 'BOUNCE',
      LastUpdateTime: `2024-02-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00.000000+00:00`,
    }));
    const content = JSON.stringify({ SuppressedDestinationSummaries: summaries }, null, 4);
    const mailwarden = fixedClock();
    const expected = await importSuppressions(mailwarden, { projectId: projectId(), file: fileWith('whole.json', content) });
    const project = projectId();
    const file = fileWith('ses.json', content);
    await expect(
      importSuppressions(storeGoingAway(mailwarden, 2, true).target, { projectId: project, file, batchSize: 700 }),
    ).rejects.toThrow();
    const resumed = await importSuppressions(mailwarden, { projectId: project, file, batchSize: 700 });
    expect(resumed.resumedFromLine).toBeGreaterThanOrEqual(1);
    expect(withoutResume(resumed)).toEqual(expected);
    // The last 500 repeat addresses of the first 2 000 with the same reason.
    expect(resumed).toMatchObject({ added: 2000, upgraded: 0, alreadyPresent: 500 });
  });

  test('a changed file, another project, another store or restart: true start over', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const interrupt = async (file: string, options: Partial<ImportOptions> = {}) => {
      await expect(
        importSuppressions(storeGoingAway(mailwarden, 2, true).target, { projectId: project, file, batchSize: 500, ...options }),
      ).rejects.toThrow();
      expect(readCheckpointFile(file).done.byteOffset).toBeGreaterThan(0);
    };
    const file = fileWith('changing.csv', `${addresses(3000).join('\n')}\n`);
    await interrupt(file);
    appendFileSync(file, `${addresses(10, 3000).join('\n')}\n`);
    const grown = await importSuppressions(mailwarden, { projectId: project, file });
    expect(grown.resumedFromLine).toBeUndefined();
    // The two batches of 500 the interrupted run stored are there already.
    expect(grown).toMatchObject({ rows: 3010, added: 2010, alreadyPresent: 1000 });

    const touched = fileWith('touched.csv', `${addresses(3000, 5000).join('\n')}\n`);
    await interrupt(touched);
    utimesSync(touched, new Date(), new Date(Date.now() + 5000));
    expect((await importSuppressions(mailwarden, { projectId: project, file: touched })).resumedFromLine).toBeUndefined();

    const other = fileWith('other.csv', `${addresses(3000, 9000).join('\n')}\n`);
    await interrupt(other);
    expect((await importSuppressions(mailwarden, { projectId: projectId(), file: other })).resumedFromLine).toBeUndefined();
    await interrupt(other);
    expect(
      (await importSuppressions(mailwarden, { projectId: project, file: other, targetName: 'http://elsewhere' })).resumedFromLine,
    ).toBeUndefined();
    await interrupt(other);
    expect(
      (
        await importSuppressions(mailwarden, { projectId: project, file: other, format: 'jsonl' }).catch(() => ({
          resumedFromLine: undefined,
        }))
      ).resumedFromLine,
    ).toBeUndefined();
    await interrupt(other);
    const restarted = await importSuppressions(mailwarden, { projectId: project, file: other, restart: true });
    expect(restarted).toMatchObject({ rows: 3000, added: 0, alreadyPresent: 3000 });
    expect(restarted.resumedFromLine).toBeUndefined();
  });

  test('checkpoint: false writes none and checks nothing ahead of the adds', async () => {
    const mailwarden = fixedClock();
    const file = fileWith('nocheckpoint.csv', `${addresses(2500).join('\n')}\n`);
    const failing = storeGoingAway(mailwarden, 3, true);
    await expect(importSuppressions(failing.target, { projectId: projectId(), file, checkpoint: false })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
    expect(failing.calls.checkMany).toBe(0);

    const custom = join(directory, 'custom-checkpoint.json');
    const project = projectId();
    await expect(
      importSuppressions(storeGoingAway(mailwarden, 2, false).target, { projectId: project, file, checkpoint: custom }),
    ).rejects.toThrow();
    expect(existsSync(custom)).toBe(true);
    const summary = await importSuppressions(mailwarden, { projectId: project, file, checkpoint: custom });
    expect(summary).toMatchObject({ resumedFromLine: 1001, added: 2500 });
    expect(existsSync(custom)).toBe(false);
  });
});

describe('streams', () => {
  const groupFile = () => fixture('sendgrid-group-unsubscribes.csv');

  test('--stream puts an unsubscribe list into that stream: checked for it, not for mail of no stream', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const summary = await importSuppressions(mailwarden, {
      projectId: project,
      file: fixture('sendgrid-unsubscribes.csv'),
      stream: 'marketing',
    });
    expect(summary).toMatchObject({ format: 'sendgrid-unsubscribes', rows: 2, added: 2, invalid: 0, skipped: 0 });
    expect(await stored(mailwarden, project)).toEqual([]);
    expect(await stored(mailwarden, project, 'marketing')).toEqual([
      { email: 'newsletter-only@example.org', reason: 'manual', created_at: '2024-02-11T17:02:44.000Z', source: 'unsubscribe' },
      { email: 'opted-out@example.com', reason: 'manual', created_at: '2024-03-05T09:15:27.000Z', source: 'unsubscribe' },
    ]);
    expect(await mailwarden.suppressions.check(project, 'opted-out@example.com', { stream: 'marketing' })).toMatchObject({
      suppressed: true,
      stream: 'marketing',
      source: 'unsubscribe',
    });
    expect(await mailwarden.suppressions.check(project, 'opted-out@example.com')).toEqual({
      email: 'opted-out@example.com',
      suppressed: false,
    });
  });

  test('SendGrid group unsubscribes: each group to its stream (--group-stream), recognised by group_id', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const summary = await importSuppressions(mailwarden, {
      projectId: project,
      file: groupFile(),
      groupStreams: { '101': 'weekly-news', '202': 'product-updates' },
    });
    expect(summary).toMatchObject({ format: 'sendgrid-group-unsubscribes', rows: 3, added: 3, alreadyPresent: 0 });
    expect(await stored(mailwarden, project)).toEqual([]);
    expect(await stored(mailwarden, project, 'weekly-news')).toEqual([
      { email: 'jane@example.com', reason: 'manual', created_at: '2024-03-05T09:15:27.000Z', source: 'unsubscribe' },
    ]);
    expect((await stored(mailwarden, project, 'product-updates')).map((row) => row.email)).toEqual(['bob@example.com', 'jane@example.com']);
    // --stream instead puts every group into one stream; the same address twice is then one entry.
    const one = projectId();
    expect(await importSuppressions(mailwarden, { projectId: one, file: groupFile(), stream: 'marketing' })).toMatchObject({
      added: 2,
      alreadyPresent: 1,
    });
    expect((await stored(mailwarden, one, 'marketing')).map((row) => row.email)).toEqual(['bob@example.com', 'jane@example.com']);
  });

  test('a group no stream is given for stops the import before anything is written', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = groupFile();
    const importing = importSuppressions(mailwarden, { projectId: project, file, groupStreams: { '101': 'weekly-news' } });
    await expect(importing).rejects.toThrow(ImportFileError);
    await expect(importSuppressions(mailwarden, { projectId: project, file })).rejects.toThrow(
      /unsubscribe groups 101, 202, which no stream is given for: map each with --group-stream <group ID>=<stream>.*Nothing was imported/,
    );
    expect(await stored(mailwarden, project, 'weekly-news')).toEqual([]);
    expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
    expect(existsSync(`${file}.rejects.csv`)).toBe(false);
  });

  test('Mailgun unsubscribes: tag * is every mail (project-wide), another tag maps to a stream', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith(
      'mailgun-tags.csv',
      [
        'address,tags,created_at',
        'all@example.com,*,"Tue, 05 Mar 2024 09:15:27 UTC"',
        'news@example.com,newsletter,"Tue, 05 Mar 2024 09:15:27 UTC"',
      ].join('\n'),
    );
    await expect(importSuppressions(mailwarden, { projectId: project, file })).rejects.toThrow(
      /the tag newsletter.*--group-stream <tag>=<stream>/,
    );
    expect(await importSuppressions(mailwarden, { projectId: project, file, groupStreams: { newsletter: 'marketing' } })).toMatchObject({
      format: 'mailgun-unsubscribes',
      added: 2,
    });
    expect((await stored(mailwarden, project)).map((row) => [row.email, row.source])).toEqual([['all@example.com', 'unsubscribe']]);
    expect((await stored(mailwarden, project, 'marketing')).map((row) => row.email)).toEqual(['news@example.com']);
  });

  test.each(['sendgrid-bounces.csv', 'ses-list-suppressed-destinations.json', 'mailgun-complaints.csv'])(
    'a list of bounces or complaints (%s) is project-wide: --stream is refused, nothing written',
    async (name) => {
      const mailwarden = fixedClock();
      const project = projectId();
      await expect(importSuppressions(mailwarden, { projectId: project, file: fixture(name), stream: 'marketing' })).rejects.toThrow(
        /project-wide \(as a bounce event is\)\. Import it without --stream/,
      );
      expect(await stored(mailwarden, project)).toEqual([]);
      expect(await stored(mailwarden, project, 'marketing')).toEqual([]);
    },
  );

  test('an invalid stream is refused before the file is read', async () => {
    await expect(
      importSuppressions(fixedClock(), { projectId: projectId(), file: fixture('sendgrid-unsubscribes.csv'), stream: 'Marketing' }),
    ).rejects.toMatchObject({ code: 'invalid_stream' });
  });

  test("a stream's export says its stream, and imports back into that stream; --stream wins over the column", async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    await mailwarden.suppressions.addMany(project, [{ email: 'a@example.com', created_at: '2024-01-01T00:00:00.000Z' }], {
      source: 'unsubscribe',
      stream: 'marketing',
    });
    await mailwarden.suppressions.addMany(project, [
      { email: 'b@example.com', reason: 'hard_bounce', created_at: '2024-01-02T00:00:00.000Z' },
    ]);
    const exportStream = async (format: ExportFormat) => {
      let text = '';
      const output = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          text += chunk.toString('utf8');
          callback();
        },
      });
      const result = await exportSuppressions(mailwarden, { projectId: project, format, output, stream: 'marketing' });
      return { text, ...result };
    };
    const hash = mailwarden.suppressions.hashOf('a@example.com');
    const csv = await exportStream('csv');
    expect(csv).toEqual({
      text: `email,reason,created_at,hash,stream\na@example.com,manual,2024-01-01T00:00:00.000Z,${hash},marketing\n`,
      exported: 1,
      skipped: 0,
    });
    const jsonl = await exportStream('jsonl');
    expect(jsonl.text).toBe(
      `${JSON.stringify({ email: 'a@example.com', reason: 'manual', created_at: '2024-01-01T00:00:00.000Z', hash, stream: 'marketing' })}\n`,
    );
    // The project-wide export is as it always was.
    expect((await exportToText(mailwarden, project, 'csv')).text).toBe(
      `email,reason,created_at,hash\nb@example.com,hard_bounce,2024-01-02T00:00:00.000Z,${mailwarden.suppressions.hashOf('b@example.com')}\n`,
    );
    await expect(exportStream('ses-import')).rejects.toMatchObject({ code: 'invalid_request' });

    for (const [name, text] of [
      ['stream.csv', csv.text],
      ['stream.jsonl', jsonl.text],
    ] as const) {
      const copy = projectId();
      expect(await importSuppressions(mailwarden, { projectId: copy, file: fileWith(name, text) })).toMatchObject({ added: 1, invalid: 0 });
      expect(await stored(mailwarden, copy)).toEqual([]);
      expect(await stored(mailwarden, copy, 'marketing')).toEqual([
        { email: 'a@example.com', reason: 'manual', created_at: '2024-01-01T00:00:00.000Z', source: 'import' },
      ]);
      const elsewhere = projectId();
      await importSuppressions(mailwarden, { projectId: elsewhere, file: fileWith(name, text), stream: 'digest' });
      expect((await stored(mailwarden, elsewhere, 'digest')).map((row) => row.email)).toEqual(['a@example.com']);
      expect(await stored(mailwarden, elsewhere, 'marketing')).toEqual([]);
    }
  });

  test('a stream column with no stream name is an invalid row; an empty one is the project-wide list', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    const file = fileWith(
      'streams.csv',
      'email,reason,stream\na@example.com,,Not A Stream\nb@example.com,,\nc@example.com,unsubscribe,digest\n',
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file });
    expect(summary).toMatchObject({ rows: 3, added: 2, invalid: 1 });
    expect(summary.invalidEntries).toEqual([
      { line: 2, value: 'a@example.com,,Not A Stream', reason: 'stream "Not A Stream" is not a stream name' },
    ]);
    expect((await stored(mailwarden, project)).map((row) => row.email)).toEqual(['b@example.com']);
    expect(await stored(mailwarden, project, 'digest')).toEqual([
      { email: 'c@example.com', reason: 'manual', created_at: new Date(NOW).toISOString(), source: 'unsubscribe' },
    ]);
  });

  test.each([
    { failAt: 2, applied: true },
    { failAt: 5, applied: false },
    { failAt: 7, applied: true },
  ])(
    'rows of several lists, a store lost at bulk add $failAt (applied: $applied): the rerun ends as an uninterrupted import',
    async ({ failAt, applied }) => {
      // Three lists (project-wide, digest, marketing), two sources, repeats across and within lists, and
      // addresses the project-wide list holds already (which a check for a stream answers with).
      const content = `email,reason,stream\n${Array.from({ length: 1500 }, (_, i) => {
        const stream = ['', 'digest', 'marketing'][i % 3];
        const reason = i % 5 === 0 ? 'unsubscribe' : i % 7 === 0 ? 'hard_bounce' : '';
        return `user${i % 401}@example.com,${reason},${stream}`;
      }).join('\n')}\n`;
      const setup = async (mailwarden: Mailwarden, project: string) => {
        await mailwarden.suppressions.addMany(
          project,
          addresses(30, 100).map((email) => ({ email, reason: 'complaint' as const })),
        );
        await mailwarden.suppressions.addMany(
          project,
          addresses(30, 0).map((email) => ({ email })),
          { stream: 'digest' },
        );
      };
      const run = async (target: Mailwarden | ReturnType<typeof storeGoingAway>['target'], project: string, file: string) =>
        importSuppressions(target, { projectId: project, file, batchSize: 200 });
      const lists = async (mailwarden: Mailwarden, project: string) => ({
        all: await stored(mailwarden, project),
        digest: await stored(mailwarden, project, 'digest'),
        marketing: await stored(mailwarden, project, 'marketing'),
      });

      const whole = fixedClock();
      const wholeProject = projectId();
      await setup(whole, wholeProject);
      const expected = await run(whole, wholeProject, fileWith('lists-whole.csv', content));

      const mailwarden = fixedClock();
      const project = projectId();
      await setup(mailwarden, project);
      const file = fileWith('lists-resume.csv', content);
      await expect(run(storeGoingAway(mailwarden, failAt, applied).target, project, file)).rejects.toMatchObject({
        code: 'store_unavailable',
      });
      expect(readCheckpointFile(file).inFlight.length).toBeGreaterThanOrEqual(1);
      // Another --stream is another import: its checkpoint is not resumed.
      const other = await importSuppressions(fixedClock(), {
        projectId: project,
        file,
        stream: 'x',
        checkpoint: `${file}.other.json`,
        rejects: false,
      });
      expect(other.resumedFromLine).toBeUndefined();
      const resumed = await run(mailwarden, project, file);
      expect(resumed.resumedFromLine).toBeGreaterThanOrEqual(1);
      expect(withoutResume(resumed)).toEqual(withoutResume(expected));
      expect(await lists(mailwarden, project)).toEqual(await lists(whole, wholeProject));
    },
  );
});

describe('many rows', () => {
  test('100 000 rows go in batches of 1 000 with exact counts and progress after each', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    // Every 50th row repeats the one before; every 500th is invalid.
    const rows = Array.from({ length: 100_000 }, (_, i) =>
      i % 500 === 499 ? `bad${i}` : i % 50 === 49 ? `user${i - 1}@example.com` : `user${i}@example.com`,
    );
    const file = fileWith('big.csv', `email\n${rows.join('\n')}\n`);
    let bulkAdds = 0;
    const counting: { suppressions: SuppressionTarget } = {
      suppressions: { ...mailwarden.suppressions, addMany: (...args) => (bulkAdds++, mailwarden.suppressions.addMany(...args)) },
    };
    const updates: ImportProgress[] = [];
    const summary = await importSuppressions(counting, { projectId: project, file, onProgress: (progress) => updates.push(progress) });
    expect(summary).toMatchObject({ rows: 100_000, added: 98_000, alreadyPresent: 1800, invalid: 200 });
    expect(bulkAdds).toBe(100);
    const size = readFileSync(file).length;
    expect(updates.at(-1)).toEqual({
      bytesRead: size,
      totalBytes: size,
      rows: 100_000,
      added: 98_000,
      upgraded: 0,
      alreadyPresent: 1800,
      invalid: 200,
      skipped: 0,
    });
    expect(updates.every((update, i) => i === 0 || update.rows >= updates[i - 1]!.rows)).toBe(true);
  });
});

describe('exportSuppressions', () => {
  test('our CSV and JSON Lines import into another project with the same reasons and times', async () => {
    const mailwarden = fixedClock();
    const source = projectId();
    await mailwarden.suppressions.addMany(
      source,
      addresses(250).map((email, i) => ({
        email,
        reason: (['manual', 'hard_bounce', 'complaint'] as const)[i % 3],
        created_at: new Date(Date.UTC(2024, 0, 1 + (i % 200))).toISOString(),
      })),
    );
    const csv = await exportToText(mailwarden, source, 'csv');
    expect(csv).toMatchObject({ exported: 250, skipped: 0 });
    expect(csv.text.split('\n')[0]).toBe('email,reason,created_at,hash');
    const jsonl = await exportToText(mailwarden, source, 'jsonl');
    expect(Object.keys(JSON.parse(jsonl.text.split('\n')[0]!) as object)).toEqual(['email', 'reason', 'created_at', 'hash']);
    const expected = (await stored(mailwarden, source)).map((row) => ({ ...row, source: 'import' }));
    for (const [name, text] of [
      ['export.csv', csv.text],
      ['export.jsonl', jsonl.text],
    ] as const) {
      const target = projectId();
      expect(await importSuppressions(mailwarden, { projectId: target, file: fileWith(name, text) })).toMatchObject({
        added: 250,
        invalid: 0,
      });
      expect(await stored(mailwarden, target)).toEqual(expected);
    }
  });

  test('ses-import writes what an SES import job takes; manual suppressions are left out unless given a reason', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    await mailwarden.suppressions.addMany(project, [
      { email: 'bounced@example.com', reason: 'hard_bounce', created_at: '2024-01-03T00:00:00Z' },
      { email: 'complained@example.com', reason: 'complaint', created_at: '2024-01-02T00:00:00Z' },
      { email: 'by-hand@example.com', created_at: '2024-01-01T00:00:00Z' },
    ]);
    expect(await exportToText(mailwarden, project, 'ses-import')).toEqual({
      text: 'bounced@example.com,BOUNCE\ncomplained@example.com,COMPLAINT\n',
      exported: 2,
      skipped: 1,
    });
    const all = await exportToText(mailwarden, project, 'ses-import', 'BOUNCE');
    expect(all).toEqual({
      text: 'bounced@example.com,BOUNCE\ncomplained@example.com,COMPLAINT\nby-hand@example.com,BOUNCE\n',
      exported: 3,
      skipped: 0,
    });
    // And it reads back.
    const target = projectId();
    expect(await importSuppressions(mailwarden, { projectId: target, file: fileWith('to-ses.csv', all.text) })).toMatchObject({
      format: 'ses-import',
      added: 3,
    });
  });

  test('an empty project exports only the CSV header', async () => {
    expect(await exportToText(fixedClock(), projectId(), 'csv')).toEqual({
      text: 'email,reason,created_at,hash\n',
      exported: 0,
      skipped: 0,
    });
  });

  test('waits for drain whenever write returns false', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    await mailwarden.suppressions.addMany(
      project,
      addresses(450).map((email) => ({ email })),
    );
    let full = false;
    let writesWhileFull = 0;
    let rows = 0;
    const output = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        rows += chunk.toString('utf8').split('\n').length - 1;
        setImmediate(callback);
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
    const { exported } = await exportSuppressions(mailwarden, {
      projectId: project,
      format: 'jsonl',
      output,
      onProgress: (n) => progress.push(n),
    });
    await new Promise<void>((resolve) => output.end(resolve));
    expect({ exported, rows, writesWhileFull }).toEqual({ exported: 450, rows: 450, writesWhileFull: 0 });
    expect(progress).toEqual([100, 200, 300, 400, 450]);
  });

  test('rejects when the output fails, and on abort', async () => {
    const mailwarden = fixedClock();
    const project = projectId();
    await mailwarden.suppressions.addMany(
      project,
      addresses(300).map((email) => ({ email })),
    );
    const broken = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        setImmediate(() => callback(new Error('EPIPE')));
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

describe('remoteSuppressions', () => {
  /** A service that answers every request with `status` and `body`, and records what it was asked. */
  async function answering(status: number, body: string) {
    const requests: { method: string; url: string; key: string | undefined; body: string }[] = [];
    const server = createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (text += chunk));
      request.on('end', () => {
        requests.push({ method: request.method!, url: request.url!, key: request.headers['x-api-key'] as string | undefined, body: text });
        response.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/base/`;
    return { url, requests, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  test.each([
    { client: "Node's own HTTP client", fetch: undefined },
    { client: 'a given fetch', fetch: globalThis.fetch },
  ])('through $client: the answer, the error the service sent, or a body that is not JSON', async ({ fetch }) => {
    const ok = await answering(200, '{"results":[{"email":"a@example.com","suppressed":false}]}');
    const failing = await answering(503, '{"error":{"code":"store_unavailable","message":"The store is gone."}}');
    const html = await answering(502, '<html>Bad gateway</html>');
    try {
      const remote = (url: string) => remoteSuppressions({ url, apiKey: 'key', ...(fetch === undefined ? {} : { fetch }) }).suppressions;
      expect(await remote(ok.url).checkMany('a b', ['a@example.com'])).toEqual({
        results: [{ email: 'a@example.com', suppressed: false }],
      });
      expect(ok.requests).toEqual([
        { method: 'POST', url: '/base/projects/a%20b/suppressions/bulk-check', key: 'key', body: '{"emails":["a@example.com"]}' },
      ]);
      await expect(remote(failing.url).addMany('p', [{ email: 'a@example.com' }])).rejects.toMatchObject({
        code: 'store_unavailable',
        message: 'The store is gone.',
      });
      await expect(remote(html.url).list('p')).rejects.toThrow(
        new RemoteServiceError(
          `GET ${html.url.slice(0, -1)}/projects/p/suppressions answered 502 with a body that is not JSON: is ${html.url.slice(0, -1)} a mailwarden service?`,
        ),
      );
    } finally {
      await Promise.all([ok.close(), failing.close(), html.close()]);
    }
  });
});

describe('createProgressBar', () => {
  const progress = (rows: number, totalBytes = 1000): ImportProgress => ({
    bytesRead: rows * 10,
    totalBytes,
    rows,
    added: rows - 1,
    upgraded: 0,
    alreadyPresent: 1,
    invalid: 0,
    skipped: 0,
  });

  test('draws nothing when the stream is not a terminal', () => {
    const written: string[] = [];
    const bar = createProgressBar({ isTTY: false, write: (text) => written.push(text) > 0 });
    bar.update(progress(10));
    bar.done();
    expect(written).toEqual([]);
  });

  test('on a terminal, redraws one line at most every 100 ms with rate and time left, and ends it on done', () => {
    const written: string[] = [];
    let time = 0;
    const bar = createProgressBar({ isTTY: true, columns: 200, write: (text) => written.push(text) > 0 }, () => time);
    bar.update(progress(0));
    time = 50;
    bar.update(progress(20));
    time = 1000;
    bar.update(progress(25));
    bar.done();
    expect(written).toHaveLength(4);
    // 250 of 1 000 bytes in a second: 3 seconds left.
    expect(written[1]).toBe('\r 25.0% 25 rows, 25 rows/s, ETA 0:03 | added 24, upgraded 0, present 1, invalid 0, skipped 0\u001b[K');
    expect(written[3]).toBe('\n');
  });

  test.each([0, undefined])('a terminal of %s columns gets a line of the default width', (columns) => {
    const written: string[] = [];
    let time = 0;
    const bar = createProgressBar({ isTTY: true, columns, write: (text) => written.push(text) > 0 }, () => time);
    bar.update(progress(0, 10_000_000));
    time = 2000;
    bar.update(progress(123_456, 10_000_000));
    // 1 234 560 bytes in 2 s, 8 765 440 to go: 14.2 s, shown as 0:15.
    expect(written[1]).toBe(
      `\r${' 12.3% 123,456 rows, 61,728 rows/s, ETA 0:15 | added 123,455, upgraded 0, present 1, inval'.slice(0, 79)}\u001b[K`,
    );
  });

  test('the time left reads in hours when it is long, and as unknown before any progress', () => {
    const written: string[] = [];
    let time = 0;
    const bar = createProgressBar({ isTTY: true, columns: 60, write: (text) => written.push(text) > 0 }, () => time);
    bar.update(progress(1, 10_000_000));
    expect(written[0]).toContain('ETA --:--');
    time = 1000;
    bar.update(progress(2, 10_000_000));
    // 10 bytes a second, 9 999 980 to go.
    expect(written[1]).toContain('ETA 277:46:38');
  });
});

// The same import on the real stores: their bulk merge and their checks, not just the memory store's.
describe('real stores', () => {
  async function importIntoStore(mailwarden: Mailwarden, countRaw: (project: string) => Promise<number>) {
    const project = projectId();
    const ses = await importSuppressions(mailwarden, { projectId: project, file: fixture('ses-list-suppressed-destinations.json') });
    expect(ses).toMatchObject({ added: 3, invalid: 1 });
    const postmark = await importSuppressions(mailwarden, { projectId: project, file: fixture('postmark-suppressions-dump.json') });
    // bounced@ and complained@ are there already, as strongly; the manual one is new.
    expect(postmark).toMatchObject({ added: 2, alreadyPresent: 2, skipped: 0 });
    expect(await countRaw(project)).toBe(5);
    expect(await stored(mailwarden, project)).toContainEqual({
      email: 'complained@example.com',
      reason: 'complaint',
      created_at: '2024-02-12T01:02:44.000Z',
      source: 'import',
    });

    // Streams: an unsubscribe list into one stream's list, beside the project-wide one.
    const unsubscribes = await importSuppressions(mailwarden, {
      projectId: project,
      file: fixture('sendgrid-unsubscribes.csv'),
      stream: 'marketing',
    });
    expect(unsubscribes).toMatchObject({ added: 2 });
    expect((await stored(mailwarden, project, 'marketing')).map((row) => [row.email, row.source])).toEqual([
      ['newsletter-only@example.org', 'unsubscribe'],
      ['opted-out@example.com', 'unsubscribe'],
    ]);
    expect((await stored(mailwarden, project)).map((row) => row.email)).not.toContain('opted-out@example.com');
    // Rows of three lists, some held project-wide already (looked up in the stream's list on resume),
    // with a crash: the rerun counts as an uninterrupted import.
    const lists = `email,reason,stream\n${Array.from({ length: 900 }, (_, i) => `user${i % 300}@example.com,${i % 4 === 0 ? 'unsubscribe' : ''},${['', 'digest', 'marketing'][i % 3]}`).join('\n')}\n`;
    const listsWhole = projectId();
    const listsResumed = projectId();
    for (const target of [listsWhole, listsResumed]) {
      await mailwarden.suppressions.addMany(
        target,
        addresses(40, 0).map((email) => ({ email, reason: 'complaint' as const })),
      );
    }
    const listsExpected = await importSuppressions(mailwarden, {
      projectId: listsWhole,
      file: fileWith('lists-real.csv', lists),
      batchSize: 100,
    });
    const listsFile = fileWith('lists-real-resume.csv', lists);
    await expect(
      importSuppressions(storeGoingAway(mailwarden, 4, true).target, { projectId: listsResumed, file: listsFile, batchSize: 100 }),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(withoutResume(await importSuppressions(mailwarden, { projectId: listsResumed, file: listsFile, batchSize: 100 }))).toEqual(
      withoutResume(listsExpected),
    );
    for (const stream of [undefined, 'digest', 'marketing']) {
      expect(await stored(mailwarden, listsResumed, stream)).toEqual(await stored(mailwarden, listsWhole, stream));
    }

    // A crash after the store took a batch, then a rerun: exact counts on this store too.
    const content = `email,reason\n${Array.from({ length: 2400 }, (_, i) => `user${i % 1700}@example.com,${i % 2 === 0 ? 'hard_bounce' : 'complaint'}`).join('\n')}\n`;
    const expected = await importSuppressions(mailwarden, { projectId: projectId(), file: fileWith('whole.csv', content), batchSize: 500 });
    const target = projectId();
    const file = fileWith('real.csv', content);
    await expect(
      importSuppressions(storeGoingAway(mailwarden, 3, true).target, { projectId: target, file, batchSize: 500 }),
    ).rejects.toThrow();
    const resumed = await importSuppressions(mailwarden, { projectId: target, file, batchSize: 500 });
    expect(withoutResume(resumed)).toEqual(withoutResume(expected));
    expect(await countRaw(target)).toBe(1700);

    const { text } = await exportToText(mailwarden, target, 'csv');
    const copy = projectId();
    expect(await importSuppressions(mailwarden, { projectId: copy, file: fileWith('real-export.csv', text) })).toMatchObject({
      added: 1700,
      invalid: 0,
    });
    expect(await stored(mailwarden, copy)).toEqual(await stored(mailwarden, target));
  }

  test('Postgres', async () => {
    const sql = postgres(inject('databaseUrl'), { max: 8, onnotice: () => {} });
    const schema = `mw_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    try {
      await migrate(sql, { schema });
      const mailwarden = createMailwarden({ store: createPostgresStore({ sql, schema }), now: () => NOW });
      await importIntoStore(mailwarden, async (project) => {
        const [row] = await sql.unsafe<{ count: string }[]>(`SELECT count(*) FROM "${schema}".suppressions WHERE project_id = $1`, [
          project,
        ]);
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
      const mailwarden = createMailwarden({ store: createRedisStore({ client, keyPrefix }), now: () => NOW });
      await importIntoStore(mailwarden, (project) => client.hlen(`${keyPrefix}{${project}}:s`));
      await mailwarden.close();
    } finally {
      const keys = await client.keys(`${keyPrefix}*`);
      if (keys.length > 0) await client.unlink(...keys);
      await client.quit();
    }
  });
});
