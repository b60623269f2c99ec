// What the probes of bench/compare-revisions.ts share: the mailwarden of one tree (a checkout at
// argv[2]) and a store of it, imported through the packages' public entries only, which every
// revision has (`@mailwarden/core`, `@mailwarden/redis`, `@mailwarden/postgres`), resolved from that
// tree's node_modules to its own sources (the probe runs with `--conditions=@mailwarden/source`).
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import postgres from 'postgres';

/** A public entry of a package, as the tree at `tree` resolves it. */
export function importFrom(tree: string, specifier: string): Promise<Record<string, unknown>> {
  const resolved = createRequire(join(tree, 'package.json')).resolve(specifier);
  return import(pathToFileURL(resolved).href) as Promise<Record<string, unknown>>;
}

/** A store of `kind` (memory, redis, postgres) on a fresh key prefix or schema, by the tree's own packages; `undefined` for memory. */
export async function storeOf(tree: string, kind: string, url: string): Promise<{ store: unknown; close(): Promise<void> }> {
  if (kind === 'redis') {
    const { createRedisStore } = (await importFrom(tree, '@mailwarden/redis')) as { createRedisStore(options: object): unknown };
    const client = new Redis(url);
    return { store: createRedisStore({ client, keyPrefix: `probe-${randomUUID()}:` }), close: async () => void client.disconnect() };
  }
  if (kind === 'postgres') {
    const { createPostgresStore, migrate } = (await importFrom(tree, '@mailwarden/postgres')) as {
      createPostgresStore(options: object): unknown;
      migrate(sql: postgres.Sql, options: object): Promise<unknown>;
    };
    const sql = postgres(url, { max: 4, onnotice: () => {} });
    const schema = `probe_${randomUUID().replaceAll('-', '')}`;
    await migrate(sql, { schema });
    return {
      store: createPostgresStore({ sql, schema }),
      close: async () => {
        await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
        await sql.end();
      },
    };
  }
  return { store: undefined, close: async () => {} };
}
