import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PackedPackage } from './pack.js';
import { describeFailure, run } from './run.js';

interface LockEntry {
  version?: string;
  link?: boolean;
}

/**
 * The third-party packages a consumer installs beside ours: every peer dependency of a packed package,
 * its `@types` package when the repo has one (Express ships no types), and `@types/node`. Each at the
 * version the repo's lockfile holds, so the scratch install resolves exactly what `npm ci` put in the cache.
 */
export function consumerPeers(packed: readonly PackedPackage[], lock: Record<string, LockEntry>): Record<string, string> {
  const names = new Set(['@types/node']);
  for (const pkg of packed) {
    for (const name of Object.keys(pkg.manifest.peerDependencies ?? {})) {
      if (packed.some((other) => other.manifest.name === name)) continue;
      names.add(name);
      const types = `@types/${name.replace(/^@([^/]+)\//, '$1__')}`;
      if (lock[`node_modules/${types}`] !== undefined) names.add(types);
    }
  }
  const pins: Record<string, string> = {};
  for (const name of [...names].sort()) {
    const version = lock[`node_modules/${name}`]?.version;
    if (version === undefined)
      throw new Error(
        `${name} is not in the repo's package-lock.json at top level; the scratch project installs the repo's version of each peer.`,
      );
    pins[name] = version;
  }
  return pins;
}

/**
 * A project outside the repo that installs every tarball together with the peers, as a user would.
 *
 * It runs offline from npm's cache: `npm ci` fills the cache with tarballs but not with the registry's
 * package documents that `npm install` needs to resolve a range, so the scratch lockfile is seeded with
 * the repo's resolved third-party entries. npm keeps those that satisfy the tarballs' ranges and prunes
 * the rest. With a lockfile npm still fetches package documents to place peers it installs on its own,
 * hence `--legacy-peer-deps`: the peers are direct dependencies here, and `npm ls` (checked by the
 * test) still reports a missing or invalid peer.
 */
export async function installScratchProject(packed: readonly PackedPackage[], repoRoot: string, dir: string): Promise<void> {
  const lock = (JSON.parse(await readFile(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> })
    .packages;
  const dependencies: Record<string, string> = { ...consumerPeers(packed, lock) };
  for (const pkg of packed) dependencies[pkg.manifest.name] = `file:${pkg.tarball}`;
  const manifest = { name: 'mailwarden-consumer', version: '0.0.0', private: true, dependencies };
  const packages: Record<string, unknown> = { '': manifest };
  for (const [path, entry] of Object.entries(lock)) {
    // Only hoisted third-party packages: not the workspaces, their links, or what is nested in a workspace.
    if (!path.startsWith('node_modules/') || entry.link === true) continue;
    if (packed.some((pkg) => path === `node_modules/${pkg.manifest.name}` || path.startsWith(`node_modules/${pkg.manifest.name}/`)))
      continue;
    packages[path] = entry;
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps'], { cwd: dir });
  if (installed.code !== 0 || !existsSync(join(dir, 'node_modules'))) {
    throw new Error(
      `Installing the tarballs into ${dir} failed. It needs npm's cache as \`npm ci\` leaves it (or the registry).\n${describeFailure(installed)}`,
    );
  }
}
