// The schema a fresh migrate() creates, as pg_dump prints it, is committed in sql/schema.sql: every
// change to a migration or a function shows up in review as a schema diff.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { migrate } from '../src/index.js';
import { connect, databaseUrl, randomSchema } from './database.js';

const sql = connect({ max: 1 });
afterAll(() => sql.end());

const snapshotPath = new URL('../sql/schema.sql', import.meta.url);
const updateCommand = 'UPDATE_SCHEMA_SNAPSHOT=1 npx vitest run packages/postgres/test/schema-snapshot.test.ts';
/** Its first line names the PostgreSQL version it was dumped from: other versions print some objects differently. */
const header = (major: number) =>
  `-- pg_dump --schema-only of a schema fresh from migrate(), on PostgreSQL ${major}, normalized by\n` +
  `-- test/schema-snapshot.test.ts (<schema> is the schema's name). Rewrite it with\n-- ${updateCommand}\n\n`;

const [server] = await sql`SELECT current_setting('server_version_num')::int / 10000 AS major`;
const version = Number(server!.major);
const committed = existsSync(snapshotPath) ? readFileSync(snapshotPath, 'utf8') : undefined;
const snapshotVersion = Number(/on PostgreSQL (\d+)/.exec(committed ?? '')?.[1] ?? version);

/** The server's own major version of pg_dump (Debian installs each under /usr/lib/postgresql), else the one on PATH. */
function pgDump(): string {
  const own = `/usr/lib/postgresql/${version}/bin/pg_dump`;
  return existsSync(own) ? own : 'pg_dump';
}

/** The dump without what changes from run to run or server to server: versions, session settings, the schema's random name. */
function normalize(dump: string, schema: string): string {
  const lines = dump
    .split('\n')
    .filter(
      (line) => !/^(SET |SELECT pg_catalog\.set_config\(|\\(un)?restrict |-- Dumped (from|by) |-- PostgreSQL database dump)/.test(line),
    )
    .map((line) => line.replaceAll(schema, '<schema>').trimEnd());
  // The dump's opening and closing banners leave two bare comment lines each.
  const text = lines
    .join('\n')
    .replace(/^--\n--\n/gm, '')
    .replace(/\n{3,}/g, '\n\n');
  return `${text.trim()}\n`;
}

test(`a fresh migrate() dumps as sql/schema.sql (dumped from PostgreSQL ${snapshotVersion}; this server is ${version})`, async () => {
  // Another major version prints some objects differently: a failure that says so, never a skip.
  if (process.env.UPDATE_SCHEMA_SNAPSHOT !== '1') {
    expect(
      version,
      `sql/schema.sql was dumped from PostgreSQL ${snapshotVersion} and this server is ${version}: run the tests against ` +
        `PostgreSQL ${snapshotVersion} (npm test starts one when DATABASE_URL is unset), or rewrite the snapshot with ${updateCommand}`,
    ).toBe(snapshotVersion);
  }
  const schema = randomSchema();
  try {
    await migrate(sql, { schema });
    const dump = execFileSync(
      pgDump(),
      ['--schema-only', '--no-owner', '--no-privileges', `--schema=${schema}`, `--dbname=${databaseUrl}`],
      { encoding: 'utf8' },
    );
    const snapshot = header(version) + normalize(dump, schema);
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') {
      writeFileSync(snapshotPath, snapshot);
      return;
    }
    expect(snapshot, `the schema differs from sql/schema.sql: if the change is meant, run ${updateCommand} and commit it`).toBe(committed);
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
});
