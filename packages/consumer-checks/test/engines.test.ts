// Our packages promise Node 20.19 (`engines`): so must everything they run on. Walks the installed tree
// of each public package's dependencies and peers (what a user installs with it), as Node resolves them
// from the package, and lists every package whose `engines.node` leaves 20.19 out. Dev dependencies are
// not walked: they run only here (the dashboard's @axe-core/playwright declares Node >= 22.12, for the
// browser tests).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// npm's own semver (installed with fastify), typed by the one function used.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const NODE = '20.19.0';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const read = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Where Node finds `name` from `dir`: the nearest node_modules up the tree. */
function resolvePackage(name: string, dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(at) === at) return undefined;
  }
}

const publicPackages = readdirSync(join(repoRoot, 'packages'))
  .map((name) => join(repoRoot, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')) && read(dir).private !== true);

test('every public package promises Node 20.19', () => {
  expect(publicPackages.length).toBeGreaterThan(5);
  for (const dir of publicPackages) expect(read(dir).engines?.node, read(dir).name).toBe('>=20.19');
});

test(`no dependency or peer of a public package, at any depth, declares engines that leave out Node ${NODE}`, () => {
  const seen = new Set<string>();
  const excluding: string[] = [];
  const queue = publicPackages.map((dir) => ({ dir, path: read(dir).name, root: true }));
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const manifest = read(next.dir);
    const range = manifest.engines?.node;
    if (!next.root && range !== undefined && !semver.satisfies(NODE, range))
      excluding.push(`${manifest.name}@${manifest.version} (node ${range}), via ${next.path}`);
    // Optional dependencies and peers not installed here are skipped: npm leaves them out on this platform.
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ];
    for (const name of new Set(names)) {
      const dir = resolvePackage(name, next.dir);
      if (dir === undefined || seen.has(dir)) continue;
      seen.add(dir);
      queue.push({ dir, path: `${next.path} > ${name}`, root: false });
    }
  }
  expect(seen.size).toBeGreaterThan(100);
  expect(excluding).toEqual([]);
});
