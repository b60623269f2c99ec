// `npm run bench:compare -- <base revision>`: what a change costs `applyEvents` on each store, measured
// against an older revision in the same run, and appended to docs/performance-history.md.
//
//   npm run bench:compare -- d1a868b              memory, Redis and PostgreSQL, 6 rounds, appends the doc
//   npm run bench:compare -- d1a868b --rounds 2   fewer rounds, printed, the doc is left alone
//
// The base revision is checked out in a temporary git worktree whose `@mailwarden/*` packages resolve
// to its own sources (every other dependency is this checkout's). Each round runs the base and the
// current tree once each, alternately (A B A B…), in a fresh process, with the same events
// (`eventBatch` of this tree): background load hits both alike, and the figure is the median.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Services } from './store-bench.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const base = args.find((arg) => !arg.startsWith('--'));
const roundsArg = args.indexOf('--rounds');
const rounds = roundsArg < 0 ? 6 : Number(args[roundsArg + 1]);
if (base === undefined || !Number.isInteger(rounds) || rounds < 1) {
  throw new Error('Usage: npm run bench:compare -- <base revision> [--rounds N]');
}
const writeDoc = roundsArg < 0;
const git = (...gitArgs: string[]) => execFileSync('git', gitArgs, { cwd: root, encoding: 'utf8' }).trim();
const baseCommit = git('rev-parse', '--short', `${base}^{commit}`);
const head = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
/** What apply-events-probe.ts does, for the doc. */
const PROBE_DESCRIPTION =
  'the batches of the `applyEvents` sections of docs/performance.md (1 000 SendGrid-like events about new messages, 10 tracking IDs): 5 untimed, then 30 timed, to a fresh project; the memory store first holds 110 batches (about 100 000 messages)';

const log = (message: string) => process.stderr.write(`[compare] ${message}\n`);

/** A worktree of `commit` whose node_modules are this checkout's, except its own workspace packages. */
function checkout(commit: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'mailwarden-base-'));
  git('worktree', 'add', '--detach', dir, commit);
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@mailwarden'), { recursive: true });
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry !== '@mailwarden') symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
  }
  for (const folder of readdirSync(join(dir, 'packages'))) {
    const manifest = join(dir, 'packages', folder, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string };
    symlinkSync(join(dir, 'packages', folder), join(modules, name));
  }
  return { dir, remove: () => git('worktree', 'remove', '--force', dir) };
}

const services = (await import(new URL('../scripts/test-services.ts', import.meta.url).href)) as Services;
// Only the two database servers: no cluster, no browser.
process.env.REDIS_CLUSTER_NODES ??= 'unused';
process.env.BROWSER_WS_ENDPOINT ??= 'unused';
const urls: Record<string, string> = {};
const worktree = checkout(baseCommit);
try {
  log(`base ${baseCommit} in ${worktree.dir}; starting Redis and PostgreSQL`);
  await services.setup({ provide: (key, value) => (urls[key] = value) });
  const probe = fileURLToPath(new URL('apply-events-probe.ts', import.meta.url));
  const measure = (tree: string, store: string): number => {
    const url = store === 'redis' ? urls.redisUrl! : store === 'postgres' ? urls.databaseUrl! : '';
    const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--conditions=@mailwarden/source', probe, tree, store, url], {
      cwd: tree,
      encoding: 'utf8',
    });
    return Number(output.trim().split('\n').at(-1));
  };
  const loadBefore = loadavg()[0]!;
  const rows: string[][] = [];
  for (const store of ['memory', 'redis', 'postgres']) {
    const samples = { base: [] as number[], current: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      samples.base.push(measure(worktree.dir, store));
      samples.current.push(measure(root, store));
      log(`${store} round ${round + 1}: base ${samples.base.at(-1)} µs, current ${samples.current.at(-1)} µs per event`);
    }
    const before = median(samples.base);
    const after = median(samples.current);
    rows.push([store, samples.base.join(', '), samples.current.join(', '), `${before} µs`, `${after} µs`, percent(after / before - 1)]);
  }
  const section = `## ${new Date().toISOString().slice(0, 10)}: \`applyEvents\`, ${baseCommit} → ${head}${dirty ? ' (with uncommitted changes)' : ''}

\`npm run bench:compare -- ${base}\` (bench/compare-revisions.ts), ${rounds} round${rounds === 1 ? '' : 's'} on ${cpus().length} CPUs, load average
${loadBefore.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end. Per round, a fresh process per tree
applies ${PROBE_DESCRIPTION}. Times are per event; the figure is the median of the rounds.

| store | ${baseCommit}, per round (µs) | ${head}, per round (µs) | ${baseCommit} | ${head} | change |
|:---|:---|:---|---:|---:|---:|
${rows.map((row) => `| ${row.join(' | ')} |`).join('\n')}
`;
  if (writeDoc) {
    const path = fileURLToPath(new URL('../docs/performance-history.md', import.meta.url));
    const previous = readFileSync(path, 'utf8');
    const marker = '<!-- sections, newest first -->\n';
    writeFileSync(path, previous.replace(marker, `${marker}\n${section}`));
    log(`wrote ${path}`);
  }
  process.stdout.write(section);
} finally {
  await services.teardown();
  worktree.remove();
  rmSync(worktree.dir, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? Number(((sorted[middle - 1]! + sorted[middle]!) / 2).toFixed(2)) : sorted[Math.floor(middle)]!;
}

function percent(change: number): string {
  return `${change >= 0 ? '+' : '−'}${Math.abs(change * 100).toFixed(1)} %`;
}

