// `npm pack` as someone runs it in a fresh clone, where no package is built: `prepack` builds the
// package, so the tarball has the dist/ that every entry point of its exports map names. One package
// (core, which depends on no other workspace) keeps it fast; packed.test.ts checks every tarball's content.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';
import { readManifest } from './packed/pack.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
let clone: string | undefined;
afterAll(async () => {
  if (clone !== undefined) await rm(clone, { recursive: true, force: true });
});

/** Every file an exports map points at, e.g. `dist/index.cjs`, without the `@mailwarden/source` ones. */
function exportedFiles(exports: unknown, condition = ''): string[] {
  if (typeof exports === 'string') return condition === '@mailwarden/source' ? [] : [exports.replace(/^\.\//, '')];
  if (exports === null || typeof exports !== 'object') return [];
  return Object.entries(exports).flatMap(([key, value]) => exportedFiles(value, key));
}

test('npm pack -w @mailwarden/core in a clone without dist/ builds it first: the tarball has every exported file', async () => {
  clone = await mkdtemp(join(tmpdir(), 'mailwarden-clone-'));
  // What a clone of the working tree holds (tracked files, and new ones not ignored), for the root and core.
  const { stdout } = await run(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'package.json', 'tsup.base.ts', 'tsconfig.base.json', 'packages/core'],
    { cwd: repoRoot },
  );
  const files = stdout.split('\n').filter((file) => file !== '');
  await Promise.all(
    files.map((file) =>
      cp(join(repoRoot, file), join(clone!, file), { force: true }).catch((error: NodeJS.ErrnoException) => {
        // A file deleted in the working tree but not yet in the index: a clone would not have it either.
        if (error.code !== 'ENOENT') throw error;
      }),
    ),
  );
  // Dependencies as `npm ci` installs them (the workspace links resolve into the repo, which core never imports).
  await symlink(join(repoRoot, 'node_modules'), join(clone, 'node_modules'), 'dir');
  const packages = await readdir(join(clone, 'packages'));
  expect(packages).toEqual(['core']);
  await expect(readdir(join(clone, 'packages/core'))).resolves.not.toContain('dist');

  const tarballs = join(clone, 'tarballs');
  await mkdir(tarballs);
  await run('npm', ['pack', '-w', '@mailwarden/core', '--pack-destination', tarballs], { cwd: clone });
  const [tarball] = await readdir(tarballs);
  const { stdout: listing } = await run('tar', ['-tzf', join(tarballs, tarball!)]);
  const packed = listing
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));

  const manifest = await readManifest(join(repoRoot, 'packages/core'));
  const exported = [...new Set(exportedFiles(manifest.exports))].filter((file) => file !== 'package.json');
  expect(exported.length).toBeGreaterThan(8);
  expect(packed.filter((file) => file.startsWith('dist/')).length).toBeGreaterThan(exported.length);
  for (const file of exported) expect(packed, file).toContain(file);
}, 180_000);
