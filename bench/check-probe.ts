// One measurement for bench/compare-revisions.ts: µs per suppression check, single (`suppressions.check`)
// and batch (`suppressions.checkMany` of 100), with the mailwarden of the tree at argv[2] (its own
// sources), on a store of argv[3] (memory, redis, postgres) at argv[4], which first holds 10 000
// suppressions. Checks go to the store itself (no check cache): half the single checks and a tenth of
// each batch are hits. Prints the two figures, single then batch, as the last line.
import type { Mailwarden } from '@mailwarden/core';
import { importFrom, storeOf } from './probe-tree.js';

const [tree, kind, url] = process.argv.slice(2) as [string, string, string];
const SUPPRESSIONS = 10_000;
const BATCH = 100;
// The memory store answers in microseconds: more calls, so that a run lasts about as long as on a server.
const singles = kind === 'memory' ? 100_000 : 3_000;
const batches = kind === 'memory' ? 5_000 : 300;

const { createMailwarden } = (await importFrom(tree, '@mailwarden/core')) as { createMailwarden(options: object): Mailwarden };
const { store, close } = await storeOf(tree, kind, url);
const mailwarden = createMailwarden(store === undefined ? {} : { store });
const project = 'bench';
const suppressed = (n: number) => `suppressed-${n}@example.com`;
for (let from = 0; from < SUPPRESSIONS; from += 1_000) {
  const items = Array.from({ length: 1_000 }, (_, i) => ({ email: suppressed(from + i), reason: 'hard_bounce' as const }));
  await mailwarden.suppressions.addMany(project, items, { source: 'import' });
}
const pick = (n: number) => (Math.imul(n + 1, 0x9e3779b1) >>> 0) % SUPPRESSIONS;
const single = (n: number) => (n % 2 === 0 ? suppressed(pick(n)) : `missing-${n}@example.com`);
const batchOf = (b: number) =>
  Array.from({ length: BATCH }, (_, j) => (j % 10 === 0 ? suppressed(pick(b * BATCH + j)) : `missing-${b}-${j}@example.com`));
const batchEmails = Array.from({ length: 256 }, (_, b) => batchOf(b));

if (!(await mailwarden.suppressions.check(project, suppressed(7))).suppressed) throw new Error('the probe’s suppressions were not stored');
// Untimed: the server's caches, the prepared statements and the JIT.
for (let n = 0; n < singles / 10; n++) await mailwarden.suppressions.check(project, single(n));
for (let b = 0; b < batches / 10; b++) await mailwarden.suppressions.checkMany(project, batchEmails[b & 255]!);
(globalThis as { gc?: () => void }).gc?.();

let started = performance.now();
for (let n = 0; n < singles; n++) await mailwarden.suppressions.check(project, single(n));
const perCheck = ((performance.now() - started) * 1000) / singles;
started = performance.now();
for (let b = 0; b < batches; b++) await mailwarden.suppressions.checkMany(project, batchEmails[b & 255]!);
const perBatch = ((performance.now() - started) * 1000) / batches;
await close();
console.log(`${perCheck.toFixed(2)} ${perBatch.toFixed(2)}`);
process.exit(0);
