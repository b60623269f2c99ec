// Heap per received event of a memory store without retention (docs/storage.md#retention-memory-store):
// live bytes (`heapUsed + arrayBuffers` after a full collection) after applying the `applyEvents`
// benchmark's SendGrid-like stream through the service, minus before, divided by the events.
//   npx tsx --expose-gc --conditions=@mailwarden/source bench/memory-heap.ts [batches of 1 000, default 300]
import { createMailwarden, createMemoryStore } from '@mailwarden/core';
import { eventBatch } from './core.bench.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const live = () => {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const batches = Number(process.argv[2] ?? 300);
const before = live();
const store = createMemoryStore();
const mailwarden = createMailwarden({ store });
let events = 0;
for (let b = 0; b < batches; b++) {
  const batch = eventBatch(b);
  await mailwarden.applyEvents('acme', batch);
  events += batch.length;
}
const bytes = live() - before;
const { messages, timelineEntries } = store.retained();
console.log(`${events} events, ${messages} messages, ${timelineEntries} timeline entries: ${(bytes / 2 ** 20).toFixed(1)} MiB`);
console.log(`${(bytes / events).toFixed(0)} bytes per event, ${(bytes / messages).toFixed(0)} per message`);
