// Rate limits (issue 27): what they add to a single check through the core handler, on each store. The
// same check with `rateLimits` on (limits never reached) and off, sampled in turn. A request never waits
// for the store's `hitRateLimits`: the limiter sends its hits in the background, here every 250 ms (a limit
// this high is never a 50th full), so on costs the limiter's own bookkeeping (docs/decisions.md, "Rate
// limits off the request path").
import { randomUUID } from 'node:crypto';
import { createHttpHandler, createMailwarden, type HttpRequest, type Store } from '@mailwarden/core';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createRedisStore } from '@mailwarden/redis';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { address, mix } from './core.bench.js';
import { measureGroup, ratio, type MeasureOptions } from './measure.js';
import { formatNanos, formatPercent, formatRatio, type BenchSuite, type SuiteContext } from './report.js';
import { startServer } from './store-bench.js';

const PROJECT = 'bench';
const API_KEY = 'bench-key';
const SUPPRESSIONS = 1000;
const SCHEMA = 'bench_rate_limits';
/** Far above what a sample sends, so every request is counted and none refused. */
const NEVER_REACHED = 1_000_000_000;

export const rateLimitsSuite: BenchSuite = {
  name: 'rate-limits',
  async run(context) {
    const options: MeasureOptions = context.quick
      ? { warmupMs: 150, sampleMs: 100, samples: 3 }
      : { warmupMs: 300, sampleMs: 300, samples: 7 };
    const rows = [await rowOf('memory', context, options, async () => ({ store: undefined, close: async () => {} }))];
    const redisServer = await startServer('redis', context);
    try {
      rows.push(
        await rowOf('Redis', context, options, async () => {
          const client = new Redis(redisServer.url);
          return {
            store: createRedisStore({ client, keyPrefix: `bench:${randomUUID()}:` }),
            close: async () => void (await client.quit()),
          };
        }),
      );
    } finally {
      await redisServer.stop();
    }
    const postgresServer = await startServer('postgres', context);
    try {
      rows.push(
        await rowOf('PostgreSQL', context, options, async () => {
          const sql = postgres(postgresServer.url, { max: 1, onnotice: () => {} });
          await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
          await migrate(sql, { schema: SCHEMA });
          return {
            store: createPostgresStore({ sql, schema: SCHEMA }),
            close: async () => {
              await sql.unsafe(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
              await sql.end();
            },
          };
        }),
      );
    } finally {
      await postgresServer.stop();
    }
    return [
      {
        title: 'Rate limits',
        intro: [
          `A single check (\`GET /projects/{projectId}/suppressions/check\`) through the core handler, no sockets, ` +
            `${SUPPRESSIONS} suppressions, with \`rateLimits\` on (limits never reached) and off, sampled in turn.`,
        ],
        tables: [{ columns: ['store', 'off, per check', 'on, per check', 'on / off (time)', 'noise (on / off)'], rows }],
      },
    ];
  },
};

async function rowOf(
  name: string,
  context: SuiteContext,
  options: MeasureOptions,
  open: () => Promise<{ store: Store | undefined; close: () => Promise<void> }>,
): Promise<string[]> {
  context.log(`${name}: a check with rate limits on and off`);
  const { store, close } = await open();
  try {
    const mailwarden = createMailwarden(store === undefined ? {} : { store });
    await mailwarden.suppressions.addMany(
      PROJECT,
      Array.from({ length: SUPPRESSIONS }, (_, i) => ({ email: address(i) })),
    );
    const apiKeys = { [API_KEY]: PROJECT };
    const off = createHttpHandler(mailwarden, { apiKeys });
    const on = createHttpHandler(mailwarden, {
      apiKeys,
      rateLimits: { perClient: NEVER_REACHED, perKey: NEVER_REACHED },
    });
    let seed = 0;
    const request = (): HttpRequest => ({
      method: 'GET',
      path: `/projects/${PROJECT}/suppressions/check`,
      query: `email=${encodeURIComponent(address(mix(seed++) % (2 * SUPPRESSIONS)))}`,
      headers: { 'x-api-key': API_KEY },
      remoteAddress: '192.0.2.1',
    });
    const [offMeasured, onMeasured] = await measureGroup(
      [
        { name: 'off', setup: request, run: (input: HttpRequest) => off.handle(input) },
        { name: 'on', setup: request, run: (input: HttpRequest) => on.handle(input) },
      ],
      options,
    );
    return [
      name,
      formatNanos(offMeasured!.nsPerOp),
      formatNanos(onMeasured!.nsPerOp),
      formatRatio(1 / ratio(onMeasured!, offMeasured!)),
      `${formatPercent(onMeasured!.spread)} / ${formatPercent(offMeasured!.spread)}`,
    ];
  } finally {
    await close();
  }
}
