// `npx mailwarden` in a clone after `npm ci`, before any build: npm links a bin only if its file exists
// at install time, so the bin is a committed script (bin/mailwarden.js), which runs the source there.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const serverDir = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(await readFile(join(serverDir, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
};
const directories: string[] = [];
afterAll(() => Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true }))));

test('the bin is a committed file, so npm links it with nothing built', async () => {
  const bin = manifest.bin.mailwarden!.replace(/^\.\//, '');
  const { stdout } = await run('git', ['ls-files', '--error-unmatch', bin], { cwd: serverDir });
  expect(stdout.trim()).toBe(bin);
  expect(manifest.files).toContain(bin.split('/')[0]);
});

test('npx mailwarden finds the workspace’s own bin, linked as npm ci links it, and runs the source', async () => {
  const clone = await mkdtemp(join(tmpdir(), 'mailwarden-bin-'));
  directories.push(clone);
  await cp(join(repoRoot, 'package.json'), join(clone, 'package.json'));
  await mkdir(join(clone, 'node_modules/@mailwarden'), { recursive: true });
  // The workspace link npm ci makes; `npm rebuild` then links the bins as the install does.
  await symlink(serverDir, join(clone, 'node_modules/@mailwarden/server'), 'dir');
  await run('npm', ['rebuild', '--ignore-scripts'], { cwd: clone });
  // --no-install: never the public registry.
  const { stdout } = await run('npx', ['--no-install', 'mailwarden', '--version'], { cwd: clone });
  expect(stdout.trim()).toBe(manifest.version);
});

test('bin/mailwarden.js passes the arguments and the exit status through', async () => {
  const failed = await run(process.execPath, [join(serverDir, 'bin/mailwarden.js'), 'suppressions', 'export'], { cwd: repoRoot }).catch(
    (error: { code: number; stderr: string }) => error,
  );
  expect('code' in failed && failed.code).toBe(2);
  expect((failed as { stderr: string }).stderr).toContain('mailwarden: --project is required.');
});
