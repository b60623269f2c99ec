// Suppressions that expire, in import and export: our CSV gets an `expires_at` column only when some
// exported suppression has one (exports without expiry stay byte for byte), JSON Lines a key in the
// rows that have one; both import back with their expiry, and a row already expired is skipped and counted.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMailwarden, type Mailwarden } from '@mailwarden/core';
import { afterAll, describe, expect, test } from 'vitest';
import { exportSuppressions, type ExportFormat } from '../src/suppressions-file/export.js';
import { importSuppressions } from '../src/suppressions-file/import.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-expiry-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let files = 0;
function fileWith(name: string, content: string): string {
  const path = join(directory, `${++files}-${name}`);
  writeFileSync(path, content);
  return path;
}

const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const projectId = () => `p-${randomUUID()}`;

async function exportToText(mailwarden: Pick<Mailwarden, 'suppressions'>, project: string, format: ExportFormat, stream?: string) {
  let text = '';
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  await exportSuppressions(mailwarden, { projectId: project, format, output, ...(stream === undefined ? {} : { stream }) });
  return text;
}

/** A project's list with each suppression's expiry, sorted by address. */
async function withExpiry(mailwarden: Mailwarden, project: string, stream?: string) {
  const { items } = await mailwarden.suppressions.list(project, { limit: 100, ...(stream === undefined ? {} : { stream }) });
  return items
    .map(({ email, reason, created_at, expires_at }) => ({ email, reason, created_at, expires_at }))
    .sort((a, b) => a.email.localeCompare(b.email));
}

describe('expires_at in export and import', () => {
  test('our CSV and JSON Lines keep it, and import it back; rows without one stay without', async () => {
    const mailwarden = createMailwarden({ now: () => NOW });
    const source = projectId();
    await mailwarden.suppressions.addMany(source, [
      { email: 'full@example.com', reason: 'hard_bounce', created_at: '2026-11-20T00:00:00.000Z', expires_at: '2026-12-20T00:00:00.000Z' },
      { email: 'forever@example.com', reason: 'complaint', created_at: '2026-11-19T00:00:00.000Z' },
    ]);
    const csv = await exportToText(mailwarden, source, 'csv');
    expect(csv.split('\n')[0]).toBe('email,reason,created_at,hash,expires_at');
    expect(csv).toContain('full@example.com,hard_bounce,2026-11-20T00:00:00.000Z,');
    expect(csv.split('\n')[1]).toMatch(/,2026-12-20T00:00:00\.000Z$/);
    expect(csv.split('\n')[2]).toMatch(/^forever@example\.com,complaint,2026-11-19T00:00:00\.000Z,[0-9a-f]{64},$/);
    const jsonl = await exportToText(mailwarden, source, 'jsonl');
    const [first, second] = jsonl
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(first!)).toStrictEqual(['email', 'reason', 'created_at', 'hash', 'expires_at']);
    expect(Object.keys(second!)).toStrictEqual(['email', 'reason', 'created_at', 'hash']);

    const expected = await withExpiry(mailwarden, source);
    expect(expected[1]).toMatchObject({ email: 'full@example.com', expires_at: '2026-12-20T00:00:00.000Z' });
    for (const [name, text] of [
      ['export.csv', csv],
      ['export.jsonl', jsonl],
    ] as const) {
      const target = projectId();
      expect(await importSuppressions(mailwarden, { projectId: target, file: fileWith(name, text), now: () => NOW })).toMatchObject({
        added: 2,
        invalid: 0,
        skipped: 0,
      });
      expect(await withExpiry(mailwarden, target)).toStrictEqual(expected);
    }
  });

  test("a stream's CSV has the stream, then expires_at; without any expiry, the columns it always had", async () => {
    const mailwarden = createMailwarden({ now: () => NOW });
    const project = projectId();
    await mailwarden.suppressions.addMany(project, [{ email: 'a@example.com', created_at: '2026-11-20T00:00:00.000Z' }], {
      stream: 'news',
    });
    expect((await exportToText(mailwarden, project, 'csv', 'news')).split('\n')[0]).toBe('email,reason,created_at,hash,stream');
    await mailwarden.suppressions.addMany(project, [{ email: 'b@example.com', ttl: 3600 }], { stream: 'news' });
    const csv = await exportToText(mailwarden, project, 'csv', 'news');
    expect(csv.split('\n')[0]).toBe('email,reason,created_at,hash,stream,expires_at');
    const target = projectId();
    await importSuppressions(mailwarden, { projectId: target, file: fileWith('stream.csv', csv), now: () => NOW });
    expect(await withExpiry(mailwarden, target, 'news')).toStrictEqual(await withExpiry(mailwarden, project, 'news'));
    // The project-wide list has none: its export is as it always was.
    expect(await exportToText(mailwarden, project, 'csv')).toBe('email,reason,created_at,hash\n');
  });

  test('a row expired by the import clock is skipped, counted and listed in the rejects file; an unreadable expiry is invalid', async () => {
    const mailwarden = createMailwarden({ now: () => NOW });
    const project = projectId();
    const file = fileWith(
      'expiring.csv',
      [
        'email,reason,created_at,expires_at',
        'past@example.com,hard_bounce,2026-01-01T00:00:00.000Z,2026-02-01T00:00:00.000Z',
        // Exactly now: expired, as a check at this instant would say.
        'now@example.com,hard_bounce,2026-01-01T00:00:00.000Z,2026-11-24T12:00:00.000Z',
        'later@example.com,hard_bounce,2026-01-01T00:00:00.000Z,2026-11-24T12:00:00.001Z',
        'never@example.com,hard_bounce,2026-01-01T00:00:00.000Z,',
        'odd@example.com,hard_bounce,2026-01-01T00:00:00.000Z,next week',
        '',
      ].join('\n'),
    );
    const summary = await importSuppressions(mailwarden, { projectId: project, file, now: () => NOW });
    expect(summary).toMatchObject({ rows: 5, added: 2, skipped: 2, invalid: 1 });
    expect(summary.invalidEntries).toStrictEqual([
      { line: 6, value: expect.stringContaining('odd@example.com') as string, reason: 'unreadable expiry "next week"' },
    ]);
    const rejects = readFileSync(summary.rejectsFile!, 'utf8');
    expect(rejects).toContain('expired at 2026-02-01T00:00:00.000Z');
    expect(rejects).toContain('expired at 2026-11-24T12:00:00.000Z');
    expect((await withExpiry(mailwarden, project)).map(({ email, expires_at }) => [email, expires_at])).toStrictEqual([
      ['later@example.com', '2026-11-24T12:00:00.001Z'],
      ['never@example.com', undefined],
    ]);
  });
});
