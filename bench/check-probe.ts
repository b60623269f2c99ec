// One measurement for bench/compare-revisions.ts: µs per suppression check, single (`suppressions.check`)
// and batch (`suppressions.checkMany` of 100), with the mailwarden of the tree at argv[2] (its own
// sources), on a store of argv[3] (memory, redis, postgres) at argv[4], which first holds 10 000
// suppressions. Checks go to the store itself (no check cache): half the single checks and a tenth of
// each batch are hits. A tree with stream lists (issue 23) also holds 10 000 suppressions in the stream
// `marketing` (other addresses) while it measures, and measures a third figure: `suppressions.check` with
// that stream, half of them hits (a quarter project-wide, a quarter in the stream); a tree without prints
// NaN for it. Prints the three figures, single, batch, single in a stream, as the last line.
import type { Mailwarden } from '@mailwarden/core';
import { importFrom, storeOf } from './probe-tree.js';

const [tree, kind, url] = process.argv.slice(2) as [string, string, string];
const SUPPRESSIONS = 10_000;
const BATCH = 100;
// The memory store answers in microseconds: more calls, so that a run lasts about as long as on a server.
// On a server a single check is one round trip of 30–40 µs: 3 000 of them lasted 0.1 s, and one stall of the
// server's process moved a round by 3× (docs/performance-history.md). So each figure is the median of
// SLICES timed slices, long enough together that a stall costs one slice, not the figure.
const singles = kind === 'memory' ? 100_000 : 15_000;
const batches = kind === 'memory' ? 5_000 : 1_000;
const SLICES = 5;

const { createMailwarden } = (await importFrom(tree, '@mailwarden/core')) as { createMailwarden(options: object): Mailwarden };
const { store, close } = await storeOf(tree, kind, url);
const mailwarden = createMailwarden(store === undefined ? {} : { store });
const project = 'bench';
const suppressed = (n: number) => `suppressed-${n}@example.com`;
for (let from = 0; from < SUPPRESSIONS; from += 1_000) {
  const items = Array.from({ length: 1_000 }, (_, i) => ({ email: suppressed(from + i), reason: 'hard_bounce' as const }));
  await mailwarden.suppressions.addMany(project, items, { source: 'import' });
}
// Whether this tree keeps stream lists: an older one ignores the option and suppresses project-wide.
const STREAM = 'marketing';
const probeAddress = 'stream-probe@example.com';
await mailwarden.suppressions.add(project, probeAddress, { stream: STREAM });
const hasStreams = !(await mailwarden.suppressions.check(project, probeAddress)).suppressed;
if (!hasStreams) await mailwarden.suppressions.remove(project, mailwarden.suppressions.hashOf(probeAddress));
const inStream = (n: number) => `in-stream-${n}@example.com`;
if (hasStreams) {
  for (let from = 0; from < SUPPRESSIONS; from += 1_000) {
    const items = Array.from({ length: 1_000 }, (_, i) => ({ email: inStream(from + i) }));
    await mailwarden.suppressions.addMany(project, items, { source: 'import', stream: STREAM });
  }
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

/** µs per call of `call(0 … count − 1)`: the median of SLICES slices of count / SLICES calls each. */
async function perCall(count: number, call: (n: number) => Promise<unknown>): Promise<number> {
  const size = Math.ceil(count / SLICES);
  const slices: number[] = [];
  for (let slice = 0; slice < SLICES; slice++) {
    const started = performance.now();
    for (let n = slice * size; n < (slice + 1) * size; n++) await call(n);
    slices.push(((performance.now() - started) * 1000) / size);
  }
  return slices.sort((a, b) => a - b)[SLICES >> 1]!;
}
const perCheck = await perCall(singles, (n) => mailwarden.suppressions.check(project, single(n)));
const perBatch = await perCall(batches, (b) => mailwarden.suppressions.checkMany(project, batchEmails[b & 255]!));
// In a stream: n % 4 = 0 a project-wide hit, 2 a hit in the stream, odd a miss.
const streamSingle = (n: number) => (n % 4 === 0 ? suppressed(pick(n)) : n % 4 === 2 ? inStream(pick(n)) : `missing-${n}@example.com`);
let perStreamCheck = Number.NaN;
if (hasStreams) {
  const { check } = mailwarden.suppressions;
  if (!(await check(project, inStream(7), { stream: STREAM })).suppressed)
    throw new Error('the probe’s stream suppressions were not stored');
  for (let n = 0; n < singles / 10; n++) await check(project, streamSingle(n), { stream: STREAM });
  perStreamCheck = await perCall(singles, (n) => check(project, streamSingle(n), { stream: STREAM }));
}
await close();
console.log(`${perCheck.toFixed(2)} ${perBatch.toFixed(2)} ${perStreamCheck.toFixed(2)}`);
process.exit(0);
