import { readFileSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { runOk } from './run.js';

/** The fields of a package.json the pack checks read. */
export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string } | string;
  homepage?: string;
  bugs?: { url?: string } | string;
  bin?: Record<string, string> | string;
  files?: string[];
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface WorkspacePackage {
  manifest: Manifest;
  /** Absolute path of the package in the repo. */
  dir: string;
  /** Path relative to the repo root, e.g. `packages/core`. */
  location: string;
}

export interface PackedPackage extends WorkspacePackage {
  tarball: string;
  /** Paths inside the tarball, relative to its `package/` folder. */
  files: string[];
}

/** Every workspace package that is not private, as npm itself lists the workspaces. */
export async function publicWorkspacePackages(repoRoot: string): Promise<WorkspacePackage[]> {
  const { stdout } = await runOk('npm', ['query', '.workspace'], { cwd: repoRoot });
  const workspaces = JSON.parse(stdout) as (Manifest & { location: string; path: string })[];
  return workspaces
    .filter((workspace) => workspace.private !== true)
    .map((workspace) => ({ manifest: workspace, dir: workspace.path, location: workspace.location }));
}

/**
 * Builds each package with its own tsup config into a copy of the package outside the repo, and packs
 * the copy. Nothing is written into the repo, so runs in parallel (and other tests reading `app/` or
 * `dist/`) never see a half-built package. The dashboard's `app/` is Vite's output, built by
 * `npm run build:dashboard` before the tests, and copied like any other file. The copies are packed with
 * `--ignore-scripts`: they are built already, and `prepack` would build them again away from the repo.
 */
export async function buildAndPack(packages: readonly WorkspacePackage[], work: string): Promise<PackedPackage[]> {
  const tsup = resolveBin('tsup', 'tsup', packages[0]!.dir);
  const staged = await Promise.all(
    packages.map(async (pkg) => {
      const stage = join(work, 'stage', basename(pkg.dir));
      await cp(pkg.dir, stage, {
        recursive: true,
        filter: (source) => !/^(?:node_modules|dist|\.tsbuild.*|.*\.tsbuildinfo)$/.test(basename(source)),
      });
      await runOk(process.execPath, [tsup, '--out-dir', join(stage, 'dist')], { cwd: pkg.dir }).catch((error: Error) => {
        throw new Error(`Building ${pkg.manifest.name} with tsup failed.\n${error.message}`);
      });
      return stage;
    }),
  );
  const tarballs = join(work, 'tarballs');
  await mkdir(tarballs, { recursive: true });
  const { stdout } = await runOk('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs, ...staged], { cwd: work });
  const results = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
  return packages.map((pkg) => {
    const result = results.find((entry) => entry.name === pkg.manifest.name);
    if (result === undefined) throw new Error(`npm pack produced no tarball for ${pkg.manifest.name}.`);
    return { ...pkg, tarball: join(tarballs, result.filename), files: result.files.map((file) => file.path).sort() };
  });
}

/** The script of a package's bin, resolved from `from` as Node would find the package. */
export function resolveBin(packageName: string, binName: string, from: string): string {
  const require = createRequire(join(from, 'package.json'));
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[binName];
  if (bin === undefined) throw new Error(`${packageName} has no bin named ${binName}.`);
  return join(dirname(manifestPath), bin);
}

export async function readManifest(dir: string): Promise<Manifest> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;
}
