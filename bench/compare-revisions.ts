// `npm run bench:compare -- <base revision>`: what a change costs `applyEvents` and suppression checks
// (single and batch of 100) on each store, measured against an older revision in the same run, and
// appended to docs/performance-history.md.
//
//   npm run bench:compare -- d1a868b              memory, Redis and PostgreSQL, 6 rounds, appends the doc
//   npm run bench:compare -- d1a868b --rounds 2   fewer rounds, printed, the doc is left alone
//
// The base revision is checked out in a temporary git worktree whose `@mailwarden/*` packages resolve
// to its own sources (every other dependency is this checkout's). Each round runs the base and the
// current tree once each, alternately (A B A B…), in a fresh process, with the same events
// (`eventBatch` of this tree) and addresses: background load hits both alike, and the figure is the
// median. The probes (apply-events-probe.ts, check-probe.ts) are this tree's and import each tree's
// packages through their public entries only, so a base whose files sit elsewhere is measured alike.
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
/** Each probe: its script, the figures its last line prints (in order), their unit, and what it does, for the doc. */
const probes = [
  {
    script: 'apply-events-probe.ts',
    figures: ['`applyEvents`'],
    unit: 'µs per event',
    description:
      'applies the batches of the `applyEvents` sections of docs/performance.md (1 000 SendGrid-like events about new messages, 10 tracking IDs): 5 untimed, then 30 timed, to a fresh project; the memory store first holds 110 batches (about 100 000 messages)',
  },
  {
    script: 'check-probe.ts',
    figures: ['check', 'batch check of 100', 'check in a stream'],
    unit: 'µs per call',
    description:
      'checks addresses against 10 000 suppressions through the service without a check cache: `suppressions.check` one at a time (half of them hits), then `suppressions.checkMany` of 100 (10 hits each); 15 000 and 1 000 timed calls on Redis and PostgreSQL, 100 000 and 5 000 on the memory store, after a tenth as many untimed; a tree with stream lists also holds 10 000 suppressions in a stream meanwhile, and then checks with that stream one at a time (a quarter project-wide hits, a quarter stream hits; NaN, shown as —, for a tree without streams)',
  },
];

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
  /** The figures of one probe run: the numbers of its output's last line. */
  const measure = (tree: string, store: string, script: string): number[] => {
    const url = store === 'redis' ? urls.redisUrl! : store === 'postgres' ? urls.databaseUrl! : '';
    const probe = fileURLToPath(new URL(script, import.meta.url));
    const output = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--conditions=@mailwarden/source', probe, tree, store, url],
      {
        cwd: tree,
        encoding: 'utf8',
      },
    );
    return output.trim().split('\n').at(-1)!.split(' ').map(Number);
  };
  const loadBefore = loadavg()[0]!;
  const rows: string[][] = [];
  /** Per store, the current tree's medians by figure: for the ratio of a check in a stream to one without. */
  const currentMedians = new Map<string, Map<string, number>>();
  for (const store of ['memory', 'redis', 'postgres']) {
    for (const probe of probes) {
      const samples = probe.figures.map(() => ({ base: [] as number[], current: [] as number[] }));
      for (let round = 0; round < rounds; round++) {
        const base = measure(worktree.dir, store, probe.script);
        const current = measure(root, store, probe.script);
        probe.figures.forEach((figure, i) => {
          samples[i]!.base.push(base[i]!);
          samples[i]!.current.push(current[i]!);
          log(`${store}, ${figure}, round ${round + 1}: base ${base[i]}, current ${current[i]} ${probe.unit}`);
        });
      }
      probe.figures.forEach((figure, i) => {
        const { base, current } = samples[i]!;
        const before = median(base);
        const after = median(current);
        if (!currentMedians.has(store)) currentMedians.set(store, new Map());
        currentMedians.get(store)!.set(figure, after);
        // NaN: a figure the tree cannot measure (a check in a stream, before streams existed).
        const shown = (value: number) => (Number.isNaN(value) ? '—' : `${value} µs`);
        rows.push([
          store,
          `${figure} (${probe.unit})`,
          base.map((value) => (Number.isNaN(value) ? '—' : value)).join(', '),
          current.map((value) => (Number.isNaN(value) ? '—' : value)).join(', '),
          shown(before),
          shown(after),
          Number.isNaN(before) || Number.isNaN(after) ? '—' : percent(after / before - 1),
        ]);
      });
    }
  }
  const section = `## ${new Date().toISOString().slice(0, 10)}: \`applyEvents\` and checks, ${baseCommit} → ${head}${dirty ? ' (with uncommitted changes)' : ''}

\`npm run bench:compare -- ${base}\` (bench/compare-revisions.ts), ${rounds} round${rounds === 1 ? '' : 's'} on ${cpus().length} CPUs, load average
${loadBefore.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end. Per round and store, a fresh process per tree
${probes.map((probe) => probe.description).join('; then one that ')}. The figure is the median of the rounds.

| store | measure | ${baseCommit}, per round (µs) | ${head}, per round (µs) | ${baseCommit} | ${head} | change |
|:---|:---|:---|:---|---:|---:|---:|
${rows.map((row) => `| ${row.join(' | ')} |`).join('\n')}

A check in a stream against a check without one, ${head}, same run (issue 23's goal: at most 1.3×): ${[...currentMedians]
    .map(([store, figures]) => `${store} ${ratio(figures.get('check in a stream')!, figures.get('check')!)}`)
    .join(', ')}.
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

function ratio(ours: number, reference: number): string {
  return Number.isNaN(ours) ? '—' : `${(ours / reference).toFixed(2)}×`;
}

function percent(change: number): string {
  return `${change >= 0 ? '+' : '−'}${Math.abs(change * 100).toFixed(1)} %`;
}
