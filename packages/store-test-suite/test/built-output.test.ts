// The suite as it is published: built by its own tsup config into a scratch directory, loaded from the
// build (not src/) and run on the Map store, as a third party's vitest would run it from node_modules.
// What the build imports must be Node's or a peer dependency: nothing of this repository's own.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { createMapStore } from './map-store.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
// Inside the repository, so the build's imports resolve from its node_modules as they would from a user's.
const outDir = fileURLToPath(new URL(`../../../.scratch/store-test-suite-build-${randomUUID()}/`, import.meta.url));
const tsup = createRequire(import.meta.url).resolve('tsup/dist/cli-default.js');
execFileSync(process.execPath, [tsup, '--out-dir', outDir], { cwd: packageDir, stdio: 'pipe' });
afterAll(() => rm(outDir, { recursive: true, force: true }));

const built: typeof import('@mailwarden/store-test-suite') = await import(pathToFileURL(join(outDir, 'index.js')).href);
const { peerDependencies, dependencies } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));

/** The packages a module imports, from its import and export statements (not from comments). */
function importedPackages(code: string): string[] {
  const specifiers = [...code.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm)].map((match) => match[1]!);
  return [
    ...new Set(
      specifiers.map((specifier) =>
        specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
    ),
  ].sort();
}

describe('the built suite', () => {
  test('imports only Node built-ins and its peer dependencies, and has no dependencies of its own', async () => {
    const isPeerOrNode = (name: string) => name in peerDependencies || name.startsWith('node:') || builtinModules.includes(name);
    const code = importedPackages(await readFile(join(outDir, 'index.js'), 'utf8'));
    const types = importedPackages(await readFile(join(outDir, 'index.d.ts'), 'utf8'));
    expect(code).toContain('@mailwarden/core');
    expect(code.filter((name) => !isPeerOrNode(name))).toStrictEqual([]);
    expect(types.filter((name) => !isPeerOrNode(name))).toStrictEqual([]);
    expect(dependencies).toBeUndefined();
  });
});

built.runStoreConformanceSuite({
  name: 'a Map store, through the built suite',
  test,
  describe,
  expect,
  createStore: (options) => createMapStore(options),
});
