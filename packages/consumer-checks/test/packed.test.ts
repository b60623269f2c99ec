// What users install is what we test: every public workspace package is built, packed and installed from
// its tarball into a project outside the repo, then imported from ESM and CommonJS, typechecked as a
// TypeScript consumer, linted with publint and attw, and shown to share one core at runtime.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { modulesInSeveralFiles } from './packed/module-copies.js';
import { buildAndPack, publicWorkspacePackages, readManifest, resolveBin, type Manifest, type PackedPackage } from './packed/pack.js';
import { brokenReadmeLinks, repositoryUrl } from './packed/readme-links.js';
import { describeFailure, run, type Finished } from './packed/run.js';
import { installScratchProject } from './packed/scratch-project.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const checksDir = fileURLToPath(new URL('../', import.meta.url));
const consumerDir = fileURLToPath(new URL('../consumer/', import.meta.url));
const core = '@mailwarden/core';

/** Named exports each entry point must have, in both formats; entry points not listed are still imported. */
const expectedExports: Record<string, string[]> = {
  '@mailwarden/core': [
    'createMailwarden',
    'createMemoryStore',
    'MailwardenError',
    'isMailwardenError',
    'errorStatus',
    'createHttpHandler',
    'createWebhookIngest',
    'attachSendGridTrackingId',
  ],
  '@mailwarden/core/schemas': ['suppressionSchema', 'checkSuppressionResponseSchema', 'errorBodySchema'],
  '@mailwarden/core/store': ['createCheckCache', 'createEmailHasher', 'createCursorCodec', 'mergeMessage'],
  '@mailwarden/redis': ['createRedisStore'],
  '@mailwarden/postgres': ['createPostgresStore', 'migrate'],
  '@mailwarden/express': ['createMailwardenRouter'],
  '@mailwarden/fastify': ['mailwardenPlugin', 'mailwardenFrameworkErrors'],
  '@mailwarden/prometheus': ['createPrometheusMetrics'],
  '@mailwarden/dashboard': ['createDashboard', 'dashboardFor', 'dashboardPages'],
  '@mailwarden/server': ['startService', 'loadConfig', 'openStore', 'importSuppressions', 'exportSuppressions'],
  '@mailwarden/store-test-suite': ['runStoreConformanceSuite', 'runCheckCacheSuite', 'createStoreModel'],
};

/**
 * Packages that ship ESM only, on purpose, and why; attw checks them with its `esm-only` profile. Every
 * other public package must ship CommonJS too.
 */
const esmOnly: Record<string, string> = {
  '@mailwarden/server':
    'an application (the mailwarden CLI) whose library entry is for scripts around the service; CommonJS callers on Node 20.19+ (its engines) load it with require(), checked below',
  '@mailwarden/store-test-suite': "a vitest suite, and vitest 4 is ESM-only: the store author's test file that runs it is ESM",
};

/** publint messages accepted, by package and code, with the reason. None so far. */
const publintAccepted: Record<string, Record<string, string>> = {};

let work: string;
let scratch: string;
let packed: PackedPackage[];
/** Started once the scratch project is installed, awaited by their tests, so they overlap. */
let typechecks: Promise<Finished[]>;
let attw: Promise<{ pkg: PackedPackage; profile: string; finished: Finished }[]>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'mailwarden-packed-'));
  scratch = join(work, 'consumer');
  packed = await buildAndPack(await publicWorkspacePackages(repoRoot), work);
  // attw reads the tarballs alone: it runs while npm installs them.
  attw = startAttw();
  attw.catch(() => {}); // reported by its own test, never as an unhandled rejection
  await installScratchProject(packed, repoRoot, scratch);
  for (const file of ['uses-every-package.mts', 'uses-every-package.cts', 'one-core.mjs'])
    await copyFile(join(consumerDir, file), join(scratch, file));
  typechecks = startTypechecks();
  typechecks.catch(() => {});
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([typechecks, attw]);
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** The entry points of a package: the keys of `exports`, but `./package.json`. */
function entryPoints(manifest: Manifest): string[] {
  if (manifest.exports === undefined) return ['.'];
  return Object.keys(manifest.exports).filter((key) => key !== './package.json' && !key.includes('*'));
}

function specifier(name: string, entry: string): string {
  return entry === '.' ? name : `${name}${entry.slice(1)}`;
}

/** Whether an `exports` entry has a CommonJS build: a `require` condition or a `.cjs` file. */
function shipsCommonJs(target: unknown): boolean {
  if (typeof target === 'string') return target.endsWith('.cjs');
  if (target === null || typeof target !== 'object') return false;
  return Object.entries(target).some(
    ([condition, value]) => condition !== '@mailwarden/source' && (condition === 'require' || shipsCommonJs(value)),
  );
}

/** Every file an `exports` entry can resolve to for a consumer: the repo's `@mailwarden/source` condition left out. */
function exportTargets(target: unknown): string[] {
  if (typeof target === 'string') return [target];
  if (target === null || typeof target !== 'object') return [];
  return Object.entries(target).flatMap(([condition, value]) => (condition === '@mailwarden/source' ? [] : exportTargets(value)));
}

function installedDir(pkg: PackedPackage): string {
  return join(scratch, 'node_modules', pkg.manifest.name);
}

/** Names exported by each specifier, from a Node process of the given format; an error when it failed. */
async function exportedNames(format: 'esm' | 'cjs', specifiers: string[]): Promise<Record<string, string[] | { error: string }>> {
  const load = format === 'esm' ? 'await import(spec)' : 'require(spec)';
  const code = `
    const names = {};
    for (const spec of ${JSON.stringify(specifiers)}) {
      try { names[spec] = Object.keys(${load}).filter((name) => name !== 'default' && name !== '__esModule').sort(); }
      catch (error) { names[spec] = { error: String(error?.stack ?? error) }; }
    }
    process.stdout.write(JSON.stringify(names));`;
  const finished = await run(process.execPath, [...(format === 'esm' ? ['--input-type=module'] : []), '-e', code], { cwd: scratch });
  if (finished.code !== 0) throw new Error(describeFailure(finished));
  return JSON.parse(finished.stdout) as Record<string, string[] | { error: string }>;
}

function startTypechecks(): Promise<Finished[]> {
  const tsc = resolveBin('typescript', 'tsc', checksDir);
  const compilerOptions = { strict: true, noEmit: true, target: 'es2022', types: ['node'] };
  const every = packed.flatMap((pkg) =>
    entryPoints(pkg.manifest).map((entry) => ({
      spec: specifier(pkg.manifest.name, entry),
      cjs: shipsCommonJs(pkg.manifest.exports?.[entry]),
    })),
  );
  const projects = {
    // Every entry point of every package, so one made public later is typechecked with no edit here.
    'every-entry.mts': `${every.map(({ spec }, i) => `import * as entry${i} from '${spec}';`).join('\n')}\nexport const entries = [${every.map((_, i) => `entry${i}`).join(', ')}];\n`,
    'every-entry.cts': `${every.map(({ spec }, i) => `import entry${i} = require('${spec}');`).join('\n')}\nexport const entries = [${every.map((_, i) => `entry${i}`).join(', ')}];\n`,
    'tsconfig.nodenext.json': JSON.stringify({
      // Our .d.ts and .d.cts files are checked too (skipLibCheck off): an import in them that does not
      // resolve would otherwise turn a type into `any` without a word.
      compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: false },
      files: ['uses-every-package.mts', 'uses-every-package.cts', 'every-entry.mts', 'every-entry.cts'],
    }),
    'tsconfig.bundler.json': JSON.stringify({
      compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true },
      files: ['uses-every-package.mts', 'every-entry.mts'],
    }),
  };
  return (async () => {
    for (const [file, text] of Object.entries(projects)) await writeFile(join(scratch, file), text);
    return Promise.all(
      ['tsconfig.nodenext.json', 'tsconfig.bundler.json'].map((project) => run(process.execPath, [tsc, '-p', project], { cwd: scratch })),
    );
  })();
}

function startAttw(): Promise<{ pkg: PackedPackage; profile: string; finished: Finished }[]> {
  const bin = resolveBin('@arethetypeswrong/cli', 'attw', checksDir);
  return Promise.all(
    packed.map(async (pkg) => {
      const profile = esmOnly[pkg.manifest.name] === undefined ? 'strict' : 'esm-only';
      // A local tarball, and no DefinitelyTyped lookup: nothing here needs the network.
      const finished = await run(process.execPath, [bin, pkg.tarball, '--format', 'json', '--profile', profile, '--no-definitely-typed'], {
        cwd: work,
      });
      return { pkg, profile, finished };
    }),
  );
}

describe('the packed packages', () => {
  test('every public workspace package is packed', () => {
    const names = packed.map((pkg) => pkg.manifest.name);
    expect(names).toContain(core);
    expect(names.every((name) => name.startsWith('@mailwarden/'))).toBe(true);
  });

  test('each tarball carries LICENSE, README and package metadata, and nothing that is not published', async () => {
    const license = await readFile(join(repoRoot, 'LICENSE'), 'utf8');
    const problems: string[] = [];
    for (const pkg of packed) {
      const name = pkg.manifest.name;
      const say = (problem: string) => problems.push(`${name}: ${problem}`);
      for (const required of ['LICENSE', 'README.md', 'package.json'])
        if (!pkg.files.includes(required)) say(`no ${required} in the tarball`);
      if (pkg.files.includes('LICENSE') && (await readFile(join(installedDir(pkg), 'LICENSE'), 'utf8')) !== license)
        say('LICENSE differs from the repo root LICENSE');
      const manifest = await readManifest(installedDir(pkg));
      if (manifest.license !== 'MIT') say(`license is ${manifest.license}`);
      expectField(say, 'repository', manifest.repository, { type: 'git', url: `git+${repositoryUrl}.git`, directory: pkg.location });
      expectField(say, 'homepage', manifest.homepage, `${repositoryUrl}/tree/main/${pkg.location}#readme`);
      expectField(say, 'bugs', manifest.bugs, { url: `${repositoryUrl}/issues` });
      const targets = Object.values(manifest.exports ?? {}).flatMap(exportTargets);
      for (const file of pkg.files) {
        if (file.startsWith('src/') && !targets.some((target) => target.startsWith('./src/')))
          say(`ships ${file}, but no export points into src/`);
        if (
          /(?:^|\/)(?:test|tests|__tests__|__snapshots__|fixtures)\/|\.(?:test|spec)\.[cm]?[jt]sx?$|\.tsbuildinfo$|(?:^|\/)tsconfig[^/]*\.json$/.test(
            file,
          )
        )
          say(`ships ${file}`);
      }
      for (const entry of manifest.files ?? []) {
        const path = entry.replace(/^\.\//, '').replace(/\/$/, '');
        if (!pkg.files.some((file) => file === path || file.startsWith(`${path}/`)))
          say(
            `"files" names ${entry}, but the tarball has nothing there (not built? \`npm run build:dashboard\` builds the dashboard's app/)`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  test("each README's links work on npmjs.com: absolute, or an anchor of the README", async () => {
    const problems: string[] = [];
    for (const pkg of packed) {
      const readme = await readFile(join(installedDir(pkg), 'README.md'), 'utf8');
      for (const problem of brokenReadmeLinks(readme, repoRoot)) problems.push(`${pkg.manifest.name}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  test('core is a peer dependency of every package that plugs into it; an application with a bin depends on it', () => {
    const problems: string[] = [];
    for (const { manifest } of packed) {
      const { dependencies = {}, peerDependencies = {}, devDependencies = {} } = manifest;
      if (manifest.name === core || (dependencies[core] ?? peerDependencies[core]) === undefined) continue;
      if (manifest.bin !== undefined) {
        if (dependencies[core] === undefined) problems.push(`${manifest.name}: an application installs its own core (dependencies)`);
        continue;
      }
      if (dependencies[core] !== undefined)
        problems.push(`${manifest.name}: core in dependencies can install a second copy; make it a peer`);
      if (peerDependencies[core] === undefined) problems.push(`${manifest.name}: core must be a peer dependency`);
      const version = packed.find((pkg) => pkg.manifest.name === core)!.manifest.version;
      if (devDependencies[core] !== version)
        problems.push(`${manifest.name}: core ${version} must be a devDependency too, so the workspace links it`);
    }
    expect(problems).toEqual([]);
  });

  test('each format of each package holds one copy of every module (CommonJS entries share chunks too)', async () => {
    const copies = (
      await Promise.all(
        packed.map(async (pkg) =>
          (await modulesInSeveralFiles(installedDir(pkg), pkg.files)).map((copy) => `${pkg.manifest.name}: ${copy}`),
        ),
      )
    ).flat();
    expect(copies).toEqual([]);
  });
});

// Child processes and compilers: generous under a loaded machine (`npm test` runs every suite at once).
describe('installed from the tarballs, outside the repo', { timeout: 180_000 }, () => {
  test('npm finds every dependency and peer, and one @mailwarden/core', async () => {
    const all = await run('npm', ['ls', '--all'], { cwd: scratch });
    expect(all.code, describeFailure(all)).toBe(0);
    const cores = await run('npm', ['ls', core, '--all', '--parseable'], { cwd: scratch });
    expect(cores.code, describeFailure(cores)).toBe(0);
    expect([...new Set(cores.stdout.split('\n').filter(Boolean))]).toEqual([join(scratch, 'node_modules', core)]);
  });

  test('every entry point imports from ESM and from CommonJS, with the same named exports', async () => {
    const specs = packed.flatMap((pkg) =>
      entryPoints(pkg.manifest).map((entry) => ({ pkg, entry, spec: specifier(pkg.manifest.name, entry) })),
    );
    const [esm, cjs] = await Promise.all([
      exportedNames(
        'esm',
        specs.map(({ spec }) => spec),
      ),
      exportedNames(
        'cjs',
        specs.map(({ spec }) => spec),
      ),
    ]);
    const problems: string[] = [];
    for (const { pkg, entry, spec } of specs) {
      const fromEsm = esm[spec]!;
      const fromCjs = cjs[spec]!;
      if (!Array.isArray(fromEsm)) problems.push(`import('${spec}') failed: ${fromEsm.error}`);
      // Without a CommonJS build, require() loads the ESM build (Node 20.19+, require(esm)).
      if (!Array.isArray(fromCjs)) problems.push(`require('${spec}') failed: ${fromCjs.error}`);
      if (!Array.isArray(fromEsm) || !Array.isArray(fromCjs)) continue;
      if (fromEsm.join() !== fromCjs.join())
        problems.push(`${spec}: ESM exports ${fromEsm.join(', ')} but CommonJS exports ${fromCjs.join(', ')}`);
      for (const name of expectedExports[spec] ?? []) if (!fromEsm.includes(name)) problems.push(`${spec}: no export ${name}`);
      const cjsBuild = shipsCommonJs(pkg.manifest.exports?.[entry]);
      if (!cjsBuild && esmOnly[pkg.manifest.name] === undefined)
        problems.push(`${spec}: no CommonJS build; ship one, or list the package in esmOnly with why`);
      if (cjsBuild && esmOnly[pkg.manifest.name] !== undefined) problems.push(`${spec}: ships CommonJS but is listed as ESM-only`);
    }
    expect(problems).toEqual([]);
  });

  test('one core at runtime: an error of either build is recognized by the other, through both bindings and both stores', async () => {
    const finished = await run(process.execPath, ['one-core.mjs'], { cwd: scratch });
    expect(finished.code, describeFailure(finished)).toBe(0);
    expect(finished.stdout).toContain('one core: ok');
  });

  test('each bin runs', async () => {
    const bins = packed.flatMap((pkg) =>
      Object.keys(typeof pkg.manifest.bin === 'string' ? { [pkg.manifest.name.replace(/^@[^/]+\//, '')]: '' } : (pkg.manifest.bin ?? {})),
    );
    for (const bin of bins) {
      const finished = await run(join(scratch, 'node_modules', '.bin', bin), ['--help'], { cwd: scratch });
      expect(finished.code, describeFailure(finished)).toBe(0);
      expect(finished.stdout).toMatch(/Usage/);
    }
  });

  test('a TypeScript consumer typechecks under module nodenext (ESM and CommonJS files) and under moduleResolution bundler', async () => {
    for (const finished of await typechecks) expect(finished.code, describeFailure(finished)).toBe(0);
  });
});

describe('linters on the tarballs', { timeout: 180_000 }, () => {
  test('publint (strict) reports nothing, or only what is accepted with a reason', async () => {
    const problems: string[] = [];
    for (const pkg of packed) {
      const bytes = await readFile(pkg.tarball);
      const { messages } = await publint({
        pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
        strict: true,
        level: 'suggestion',
      });
      const manifest = await readManifest(installedDir(pkg));
      for (const message of messages) {
        if (publintAccepted[pkg.manifest.name]?.[message.code] !== undefined) continue;
        problems.push(`${pkg.manifest.name}: ${message.type} ${message.code}: ${formatMessage(message, manifest, { color: false })}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('attw finds no problem (the esm-only profile for packages that are ESM-only on purpose)', async () => {
    const problems: string[] = [];
    for (const { pkg, profile, finished } of await attw) {
      if (finished.code === 0) continue;
      let found = finished.stdout;
      try {
        const { analysis } = JSON.parse(finished.stdout) as { analysis: { problems?: unknown[] } };
        found = JSON.stringify(analysis.problems ?? analysis, null, 2);
      } catch {
        found = describeFailure(finished);
      }
      problems.push(`${pkg.manifest.name} (profile ${profile}): ${found}`);
    }
    expect(problems).toEqual([]);
  });
});

function expectField(say: (problem: string) => void, field: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    say(`${field} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}
