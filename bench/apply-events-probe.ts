// One measurement for bench/compare-revisions.ts: µs per event of `applyEvents` with the mailwarden of
// the tree at argv[2] (its own sources), on a store of argv[3] (memory, redis, postgres) at argv[4].
// Prints the figure as the last line.
import type { Mailwarden } from '@mailwarden/core';
import { eventBatch } from './core.bench.js';
import { importFrom, storeOf } from './probe-tree.js';

const [tree, kind, url] = process.argv.slice(2) as [string, string, string];

const { createMailwarden } = (await importFrom(tree, '@mailwarden/core')) as { createMailwarden(options: object): Mailwarden };
const { store, close } = await storeOf(tree, kind, url);
const mailwarden = createMailwarden(store === undefined ? {} : { store });
let batch = 0;
// The memory store first holds about 100 000 messages, as the memory section of docs/performance.md.
for (const untimed = kind === 'memory' ? 110 : 5; batch < untimed; batch++) await mailwarden.applyEvents('bench', eventBatch(batch));
const batches = Array.from({ length: 30 }, (_, i) => eventBatch(batch + i));
(globalThis as { gc?: () => void }).gc?.();
const started = performance.now();
for (const events of batches) await mailwarden.applyEvents('bench', events);
const microseconds = ((performance.now() - started) * 1000) / (batches.length * 1000);
await close();
console.log(microseconds.toFixed(2));
process.exit(0);
