// One measurement for bench/compare-revisions.ts: µs per event of `applyEvents` with the mailwarden of
// the tree at argv[2] (its own sources), on a store of argv[3] (memory, redis, postgres) at argv[4].
// Prints the figure as the last line.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { eventBatch } from './core.bench.js';

const [tree, kind, url] = process.argv.slice(2) as [string, string, string];
// Through the tree's own node_modules, so its @mailwarden packages are its own sources.
const load = (specifier: string) => import(new URL(`node_modules/${specifier}`, `file://${tree}/`).href);

const { createMailwarden } = await load('@mailwarden/core/src/index.ts');
let store: unknown;
let close = async () => {};
if (kind === 'redis') {
  const { createRedisStore } = await load('@mailwarden/redis/src/index.ts');
  const client = new Redis(url);
  store = createRedisStore({ client, keyPrefix: `probe-${randomUUID()}:` });
  close = async () => void client.disconnect();
} else if (kind === 'postgres') {
  const { createPostgresStore, migrate } = await load('@mailwarden/postgres/src/index.ts');
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  const schema = `probe_${randomUUID().replaceAll('-', '')}`;
  await migrate(sql, { schema });
  store = createPostgresStore({ sql, schema });
  close = async () => {
    await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
    await sql.end();
  };
}
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
