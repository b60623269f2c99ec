// `mailwarden suppressions import` and `export` as processes, the way people run them: killed with
// SIGKILL (and stopped with Ctrl-C) in the middle and run again, into PostgreSQL and into the memory
// store of a running service over HTTP; `--version`; and mistakes answered without a stack trace.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, test } from 'vitest';
import type { ImportCheckpoint } from '../src/suppressions-file/import-checkpoint.js';
import type { ImportSummary } from '../src/suppressions-file/import.js';
import { remoteSuppressions } from '../src/suppressions-file/remote.js';
import { cleanEnv, cliCommand, startDemoProcess } from './demo-process.js';
import { stored } from './suppressions-file.support.js';

const directory = mkdtempSync(join(tmpdir(), 'mailwarden-suppressions-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const fixtures = new URL('fixtures/', import.meta.url).pathname;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI from source. `stopWhen` is asked every 50 ms with the process and may kill it: a
 * process's progress has no event to await but its checkpoint file.
 */
function cli(args: string[], env: NodeJS.ProcessEnv = {}, stopWhen?: (child: ReturnType<typeof spawn>) => boolean): Promise<Run> {
  const child = spawn(cliCommand[0], [...cliCommand.slice(1), ...args], {
    env: { ...cleanEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const poll = stopWhen === undefined ? undefined : setInterval(() => stopWhen(child) && clearInterval(poll), 50);
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function readCheckpoint(file: string): ImportCheckpoint | undefined {
  try {
    return JSON.parse(readFileSync(`${file}.mailwarden-import.json`, 'utf8')) as ImportCheckpoint;
  } catch {
    return undefined;
  }
}

/**
 * A list like the issue's: unique addresses, repeats (some with a stronger reason), invalid rows, and
 * the counts an import of it must report, by a plain model of the merge.
 */
function generatedList(rows: number, domain: string) {
  const lines = ['email,reason'];
  const ranks = new Map<string, number>();
  const expected = { rows, added: 0, upgraded: 0, alreadyPresent: 0, invalid: 0, skipped: 0 };
  for (let i = 0; i < rows; i++) {
    let email: string;
    let reason: string;
    if (i % 50 === 7) {
      lines.push(`broken-${i}.${domain},`);
      expected.invalid++;
      continue;
    } else if (i % 20 === 3) [email, reason] = [`user${i - 3}@${domain}`, i % 40 === 3 ? 'complaint' : ''];
    else [email, reason] = [`user${i}@${domain}`, i % 7 === 0 ? 'hard_bounce' : ''];
    lines.push(`${email},${reason}`);
    const rank = reason === 'complaint' ? 3 : reason === 'hard_bounce' ? 2 : 1;
    const before = ranks.get(email) ?? 0;
    if (before === 0) expected.added++;
    else if (rank > before) expected.upgraded++;
    else expected.alreadyPresent++;
    ranks.set(email, Math.max(before, rank));
  }
  const file = join(directory, `${randomUUID()}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, expected, unique: ranks.size };
}

/** Runs an import again and again, SIGKILLing it each time its checkpoint passes the next of `killAt` rows. */
async function importKilledAt(killAt: number[], args: string[], file: string, env: NodeJS.ProcessEnv) {
  const kills: number[] = [];
  for (const rows of killAt) {
    const run = await cli(args, env, (child) => {
      const checkpoint = readCheckpoint(file);
      if (checkpoint === undefined || checkpoint.done.rows < rows) return false;
      child.kill('SIGKILL');
      kills.push(checkpoint.done.rows);
      return true;
    });
    if (run.signal !== 'SIGKILL') {
      expect(run.stderr).toBe('');
      break;
    }
  }
  const last = await cli(args, env);
  const summary = JSON.parse(last.stdout) as ImportSummary;
  // Exit status 1 says some rows were invalid.
  expect(last.code, last.stderr).toBe(summary.invalid === 0 ? 0 : 1);
  return { kills, summary, stderr: last.stderr };
}

describe('the command line', () => {
  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await cli(['--version'])).toEqual({ code: 0, signal: null, stdout: `${version}\n`, stderr: '' });
  });

  test.each([
    [['suppressions', 'import', 'x.csv', '--projet', 'acme'], "Unknown option '--projet'"],
    [['suppressions', 'import', 'x.csv'], '--project is required.'],
    [['suppressions', 'import', 'x.csv', '--project', 'acme', '--format', 'excel'], '--format is one of csv, jsonl, ses, ses-import,'],
    [['suppressions', 'export', '--project', 'acme', '--format', 'ses'], '--format is one of csv, jsonl, ses-import.'],
    [['suppressions', 'export', '--project', 'acme', '--manual-as', 'BOUNCE'], '--manual-as goes with --format ses-import.'],
    [['suppressions', 'export', '--project', 'acme', '--url', 'http://127.0.0.1:9'], '--url needs an API key of the project'],
    [['suppressions', 'import', '--project', 'acme', '--format'], "Option '--format <value>' argument missing"],
    [['frobnicate'], 'Unknown command "frobnicate".'],
    [['suppressions', 'import', 'x.csv', '--project', 'acme', '--stream', 'Marketing'], '--stream "Marketing" is not a stream name'],
    [['suppressions', 'import', 'x.csv', '--project', 'acme', '--group-stream', '101'], '--group-stream "101" is not <group>=<stream>.'],
    [['suppressions', 'import', 'x.csv', '--project', 'acme', '--group-stream', '101=-x'], '"-x" is not a stream name'],
    [
      ['suppressions', 'import', 'x.csv', '--project', 'acme', '--stream', 'a', '--group-stream', '1=b'],
      'give it or --group-stream, not both',
    ],
    [['suppressions', 'export', '--project', 'acme', '--group-stream', '1=b'], '--group-stream goes with import.'],
    [
      ['suppressions', 'export', '--project', 'acme', '--stream', 'a', '--format', 'ses-import'],
      'export a stream with --format csv or jsonl',
    ],
  ])('%j is a usage error: the reason and the usage, exit 2, no stack', async (args, reason) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')[0]).toContain(reason);
    expect(stderr.split('\n')[0]).toMatch(/^mailwarden: /);
    expect(stderr).toContain('Usage:');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  test('a file that is not there, or not what --format says, is one line and exit 1', async () => {
    const missing = await cli(['suppressions', 'import', join(directory, 'missing.csv'), '--project', 'acme']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^mailwarden: ENOENT: no such file or directory/m);
    expect(missing.stderr).not.toMatch(/^\s+at /m);
    const bounces = join(directory, 'sendgrid-bounces.csv');
    copyFileSync(join(fixtures, 'sendgrid-bounces.csv'), bounces);
    const wrong = await cli(['suppressions', 'import', bounces, '--project', 'acme', '--format', 'postmark']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('mailwarden: The file is not a JSON object with "Suppressions".');
    expect(wrong.stderr).not.toMatch(/^\s+at /m);
    // It failed before its first row: nothing to resume, nothing rejected.
    expect(existsSync(`${bounces}.mailwarden-import.json`)).toBe(false);
    expect(existsSync(`${bounces}.rejects.csv`)).toBe(false);
  });

  test("without --group-stream, SendGrid groups map as the project's webhook config maps them", async () => {
    const config = join(directory, 'groups-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        projects: {
          acme: { webhooks: { sendgrid: { publicKey: 'x', unsubscribeGroups: { '101': 'weekly-news', '202': 'product-updates' } } } },
        },
      }),
    );
    const groups = join(directory, 'configured-groups.csv');
    copyFileSync(join(fixtures, 'sendgrid-group-unsubscribes.csv'), groups);
    const mapped = await cli(['suppressions', 'import', groups, '--project', 'acme', '--config', config]);
    expect(mapped.code).toBe(0);
    expect(JSON.parse(mapped.stdout)).toMatchObject({ format: 'sendgrid-group-unsubscribes', added: 3 });
    // Another project has no map: the groups are named, nothing is imported.
    const unmapped = await cli(['suppressions', 'import', groups, '--project', 'other', '--config', config]);
    expect(unmapped.code).toBe(1);
    expect(unmapped.stderr).toContain('unsubscribe groups 101, 202, which no stream is given for');
  });

  test('a service that is not there is one line and exit 1', async () => {
    const port = await closedPort();
    const { code, stderr } = await cli([
      'suppressions',
      'export',
      '--project',
      'acme',
      '--url',
      `http://127.0.0.1:${port}`,
      '--api-key',
      'k',
    ]);
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`mailwarden: Cannot reach http://127.0.0.1:${port}: ECONNREFUSED.`);
  });
});

describe('into the memory store of a running service, over HTTP', () => {
  test('import provider exports and a list killed midway, export them back', async () => {
    const demo = await startDemoProcess();
    try {
      const remote = remoteSuppressions({ url: demo.url, apiKey: demo.key });
      const env = { MAILWARDEN_API_KEY: demo.key };
      const sesFile = join(directory, 'ses.json');
      copyFileSync(join(fixtures, 'ses-list-suppressed-destinations.json'), sesFile);
      const ses = await cli(['suppressions', 'import', sesFile, '--project', 'demo', '--url', demo.url], env);
      expect(ses.code).toBe(1); // one invalid row
      // The demo has suppressed bounced@example.com already, from a webhook: at least as strongly.
      expect(JSON.parse(ses.stdout)).toMatchObject({ format: 'ses', added: 2, alreadyPresent: 1, invalid: 1 });
      expect(ses.stderr).toContain('mailwarden: importing');

      // SIGKILLed twice and run again: the running service's memory store ends with every address once,
      // and the summary counts as if nothing had happened.
      const domain = `${randomUUID().slice(0, 8)}.example`;
      const { file, expected, unique } = generatedList(30_000, domain);
      const args = ['suppressions', 'import', file, '--project', 'demo', '--url', demo.url];
      const { kills, summary } = await importKilledAt([6000, 15_000], args, file, env);
      expect(kills).toHaveLength(2);
      expect(summary).toMatchObject({ ...expected, resumedFromLine: expect.any(Number) as number });
      expect(readFileSync(`${file}.rejects.csv`, 'utf8').trimEnd().split('\n')).toHaveLength(expected.invalid + 1);

      // Export through the service: our CSV, and the CSV an SES import job takes.
      const csv = await cli(['suppressions', 'export', '--project', 'demo', '--url', demo.url], env);
      expect(csv.code).toBe(0);
      expect(csv.stdout.split('\n').filter((line) => line.split(',')[0]!.endsWith(`@${domain}`))).toHaveLength(unique);
      const ses2 = await cli(['suppressions', 'export', '--project', 'demo', '--url', demo.url, '--format', 'ses-import'], env);
      expect(ses2.stdout).toContain('complained@example.com,COMPLAINT\n');
      expect(ses2.stdout).toContain('bounced@example.com,BOUNCE\n');
      expect(ses2.stderr).toMatch(/Left out \d+ manual suppressions: SES has no reason for them/);
      const all = await stored(remote as never, 'demo');
      expect(all.find((row) => row.email === 'complained@example.com')).toEqual({
        email: 'complained@example.com',
        reason: 'complaint',
        created_at: '2024-02-12T01:02:44.120Z',
        source: 'import',
      });
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});

describe('the allowlist and expiry, through a running service', () => {
  test("allowlist list, add and remove as commands; the export says when the rule's suppression expires", async () => {
    const demo = await startDemoProcess();
    try {
      const env = { MAILWARDEN_API_KEY: demo.key };
      const at = ['--project', 'demo', '--url', demo.url];
      const added = await cli(['allowlist', 'add', '@Seeds.example', 'not-an-address', ...at], env);
      expect(added).toMatchObject({ code: 1, stdout: 'Added @seeds.example (domain).\n' });
      expect(added.stderr).toMatch(/^mailwarden: not-an-address: /);
      const listed = await cli(['allowlist', 'list', ...at], env);
      expect(listed.code).toBe(0);
      // The domain just added, then the demo's seed inbox: by entry, in code-point order.
      expect(listed.stdout.split('\n').map((line) => line.split('\t').slice(0, 2).join(' '))).toStrictEqual([
        '@seeds.example domain',
        'seed-inbox@example.com address',
        '',
      ]);
      const removed = await cli(['allowlist', 'remove', '@seeds.example', 'gone@example.com', ...at], env);
      expect(removed).toMatchObject({
        code: 1,
        stdout: 'Removed @seeds.example.\n',
        stderr: 'mailwarden: gone@example.com is not on the allowlist of demo.\n',
      });
      // The demo's full mailbox, suppressed by its soft-bounce rule, expires: the export says when.
      const csv = await cli(['suppressions', 'export', ...at], env);
      expect(csv.stdout.split('\n')[0]).toBe('email,reason,created_at,hash,expires_at');
      expect(csv.stdout.split('\n').find((line) => line.startsWith('full-mailbox@example.com,'))).toMatch(/,\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});

describe('streams, through a running service', () => {
  test('unsubscribes import into --stream and mapped groups; export --stream says its stream; an unmapped group writes nothing', async () => {
    const demo = await startDemoProcess();
    try {
      const remote = remoteSuppressions({ url: demo.url, apiKey: demo.key });
      const env = { MAILWARDEN_API_KEY: demo.key };
      const domain = `${randomUUID().slice(0, 8)}.example`;
      const unsubscribes = join(directory, 'stream-unsubscribes.csv');
      writeFileSync(unsubscribes, `created,email\n1709630127,one@${domain}\n1707670964,two@${domain}\n`);
      const intoStream = await cli(
        ['suppressions', 'import', unsubscribes, '--project', 'demo', '--url', demo.url, '--stream', 'weekly-digest'],
        env,
      );
      expect(intoStream.code).toBe(0);
      expect(JSON.parse(intoStream.stdout)).toMatchObject({ format: 'sendgrid-unsubscribes', added: 2, skipped: 0 });

      const groups = join(directory, 'stream-groups.csv');
      writeFileSync(groups, `email,group_id,group_name,created_at\none@${domain},7,News,1709630127\nthree@${domain},8,Tips,1709630127\n`);
      const unmapped = await cli(
        ['suppressions', 'import', groups, '--project', 'demo', '--url', demo.url, '--group-stream', '7=weekly-digest'],
        env,
      );
      expect(unmapped.code).toBe(1);
      expect(unmapped.stderr).toContain('unsubscribe group 8, which no stream is given for');
      expect(existsSync(`${groups}.mailwarden-import.json`)).toBe(false);
      const mapped = await cli(
        [
          'suppressions',
          'import',
          groups,
          '--project',
          'demo',
          '--url',
          demo.url,
          '--group-stream',
          '7=weekly-digest',
          '--group-stream',
          '8=tips',
        ],
        env,
      );
      expect(mapped.code).toBe(0);
      // one@ was in weekly-digest already (the first import), as strongly.
      expect(JSON.parse(mapped.stdout)).toMatchObject({ format: 'sendgrid-group-unsubscribes', added: 1, alreadyPresent: 1 });

      // Checked for the stream, suppressed by the stream's list; for mail of no stream, not at all.
      const { results } = await remote.suppressions.checkMany('demo', [`one@${domain}`, `three@${domain}`], { stream: 'weekly-digest' });
      expect(results).toEqual([
        { email: `one@${domain}`, suppressed: true, reason: 'manual', stream: 'weekly-digest' },
        { email: `three@${domain}`, suppressed: false },
      ]);
      expect((await remote.suppressions.checkMany('demo', [`one@${domain}`])).results).toEqual([
        { email: `one@${domain}`, suppressed: false },
      ]);

      const exported = await cli(['suppressions', 'export', '--project', 'demo', '--url', demo.url, '--stream', 'weekly-digest'], env);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toContain('Exported 2 suppressions of demo, stream weekly-digest.');
      const lines = exported.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('email,reason,created_at,hash,stream');
      expect(
        lines
          .slice(1)
          .map((line) => line.split(','))
          .map(([email, reason, , , stream]) => [email, reason, stream]),
      ).toEqual([
        [`one@${domain}`, 'manual', 'weekly-digest'],
        [`two@${domain}`, 'manual', 'weekly-digest'],
      ]);
      const projectWide = await cli(['suppressions', 'export', '--project', 'demo', '--url', demo.url, '--format', 'jsonl'], env);
      expect(projectWide.stdout).not.toContain(domain);
      const tips = await stored(remote as never, 'demo', 'tips');
      expect(tips).toEqual([{ email: `three@${domain}`, reason: 'manual', created_at: '2024-03-05T09:15:27.000Z', source: 'unsubscribe' }]);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});

describe('export --output', () => {
  test('a wrong key or a stopped service leaves the previous file byte for byte and no temporary file; success replaces it', async () => {
    const folder = join(directory, 'export-output');
    mkdirSync(folder);
    const output = join(folder, 'acme.csv');
    // A previous export, as the issue had it: 52 lines that a failed run must not touch.
    const previous = `${['email,reason,created_at,hash', ...Array.from({ length: 51 }, (_, i) => `old-${i}@example.com,manual,2024-01-01T00:00:00.000Z,`)].join('\n')}\n`;
    writeFileSync(output, previous);
    chmodSync(output, 0o600);
    const unchanged = () => {
      expect(readFileSync(output, 'utf8')).toBe(previous);
      expect(readdirSync(folder)).toEqual(['acme.csv']);
    };

    const stopped = await cli([
      'suppressions',
      'export',
      '--project',
      'demo',
      '--url',
      `http://127.0.0.1:${await closedPort()}`,
      '--api-key',
      'k',
      '--output',
      output,
    ]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/^mailwarden: Cannot reach/m);
    unchanged();

    const demo = await startDemoProcess();
    try {
      const wrongKey = await cli([
        'suppressions',
        'export',
        '--project',
        'demo',
        '--url',
        demo.url,
        '--api-key',
        'not-the-key',
        '--output',
        output,
      ]);
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stderr.trim()).toBe('mailwarden: The API key is not valid.');
      unchanged();

      const done = await cli(['suppressions', 'export', '--project', 'demo', '--url', demo.url, '--output', output], {
        MAILWARDEN_API_KEY: demo.key,
      });
      expect(done.code, done.stderr).toBe(0);
      const lines = readFileSync(output, 'utf8').trimEnd().split('\n');
      // The demo's soft-bounce rule made an entry that expires, so the export has the expiry column.
      expect(lines[0]).toBe('email,reason,created_at,hash,expires_at');
      expect(lines).toContainEqual(expect.stringMatching(/^bounced@example\.com,hard_bounce,/));
      expect(lines).toContainEqual(expect.stringMatching(/^full-mailbox@example\.com,hard_bounce,[^,]+,[0-9a-f]{64},\d{4}-\d\d-\d\dT/));
      expect(done.stderr).toContain(`Exported ${lines.length - 1} suppressions of demo.`);
      expect(readdirSync(folder)).toEqual(['acme.csv']);
      // Replaced, not rewritten in place: the file keeps the permissions it had.
      expect(statSync(output).mode & 0o777).toBe(0o600);
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});

describe('into PostgreSQL', () => {
  test('killed with SIGKILL three times and run again: exact counts, every address once, each reject listed once', async () => {
    const schema = `mw_cli_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const env = { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: schema };
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      const { file, expected, unique } = generatedList(120_000, 'example.com');
      const args = ['suppressions', 'import', file, '--project', 'acme'];
      const { kills, summary, stderr } = await importKilledAt([15_000, 45_000, 80_000], args, file, env);
      expect(kills).toHaveLength(3);
      expect(stderr).toMatch(/resuming at line \d+/);
      expect(summary).toMatchObject(expected);
      const [row] = await sql.unsafe<{ count: string }[]>(`SELECT count(*) FROM "${schema}".suppressions WHERE project_id = 'acme'`);
      expect(Number(row!.count)).toBe(unique);
      const rejects = readFileSync(`${file}.rejects.csv`, 'utf8').trimEnd().split('\n');
      expect(rejects).toHaveLength(expected.invalid + 1);
      expect(new Set(rejects).size).toBe(rejects.length);
      expect(existsSync(`${file}.mailwarden-import.json`)).toBe(false);
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });

  test('Ctrl-C lets the batch in flight finish, says how to resume, and the rerun continues exactly', async () => {
    const schema = `mw_cli_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const env = { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: schema };
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      const { file, expected } = generatedList(60_000, 'example.org');
      const args = ['suppressions', 'import', file, '--project', 'acme'];
      const stopped = await cli(args, env, (child) => {
        if ((readCheckpoint(file)?.done.rows ?? 0) < 10_000) return false;
        child.kill('SIGINT');
        return true;
      });
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toContain('mailwarden: Interrupted: run the same command again to resume where it stopped.');
      expect(stopped.stderr).not.toMatch(/^\s+at /m);
      expect(readCheckpoint(file)?.inFlight).toEqual([]);
      const resumeAt = readCheckpoint(file)!.done.nextLine;
      const rerun = await cli(args, env);
      expect(rerun.code).toBe(1);
      expect(JSON.parse(rerun.stdout)).toMatchObject({ ...expected, resumedFromLine: resumeAt });
    } finally {
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    }
  });
});
