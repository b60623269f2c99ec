// What the Redis and PostgreSQL suites share: sizes, goals, the row that compares a store call with the
// raw driver call, the raw hash, and starting a server the way the tests do.
import { hash } from 'node:crypto';
import { ratio, type Measurement } from './measure.js';
import { formatNanos, formatPercent, formatRatio, type SuiteContext } from './report.js';

export const SUPPRESSIONS = 1_000_000;
export const MESSAGES = 1_000_000;
export const TRACKING_IDS = 100_000;
export const PAGE = 51; // the service asks for a page of 50 plus one, to know whether another follows
export const BATCH = 100;
export const START = Date.UTC(2025, 0, 1);
export const GOALS = { single: 1.15, batch: 1.25, deep: 1.5 };

/** The raw side's hash of an address: the same one-shot SHA-256 the store's hasher uses. */
export const rawHash = (email: string) => hash('sha256', email.trim().normalize('NFC').toLowerCase(), 'hex');

export const COMPARISON_COLUMNS = ['case', 'ours, per call', 'raw, per call', 'ours / raw (time)', 'goal', 'noise (ours / raw)'];

/** A table row: our call against the raw driver call, as a time ratio (how many times the raw call's time ours takes). */
export function comparison(what: string, ours: Measurement, raw: Measurement, goal: number | undefined): string[] {
  const slower = 1 / ratio(ours, raw);
  return [
    what,
    formatNanos(ours.nsPerOp),
    formatNanos(raw.nsPerOp),
    formatRatio(slower),
    goal === undefined ? '—' : `≤ ${formatRatio(goal)} ${slower <= goal ? 'met' : '**missed**'}`,
    `${formatPercent(ours.spread)} / ${formatPercent(raw.spread)}`,
  ];
}

export interface Services {
  setup(project: { provide(key: string, value: string): void }): Promise<void>;
  teardown(): Promise<void>;
}

const serverEnv = { redis: 'REDIS_URL', postgres: 'DATABASE_URL' } as const;
const provided = { redis: 'redisUrl', postgres: 'databaseUrl' } as const;

/**
 * The server's URL from the environment (REDIS_URL, DATABASE_URL), or a server started by the tests'
 * global setup, with the other servers set aside.
 */
export async function startServer(kind: 'redis' | 'postgres', context: SuiteContext): Promise<{ url: string; stop: () => Promise<void> }> {
  const configured = process.env[serverEnv[kind]];
  if (configured !== undefined) return { url: configured, stop: async () => {} };
  context.log(`starting ${kind}…`);
  // A variable path: the setup module is the tests' (vitest types), not part of the bench program.
  const path = new URL('../scripts/test-services.ts', import.meta.url).href;
  const services = (await import(path)) as Services;
  const others = ['REDIS_URL', 'DATABASE_URL', 'REDIS_CLUSTER_NODES', 'BROWSER_WS_ENDPOINT'].filter((name) => name !== serverEnv[kind]);
  const saved = others.filter((name) => process.env[name] === undefined);
  for (const name of saved) process.env[name] = 'unused';
  const urls: Record<string, string> = {};
  try {
    await services.setup({ provide: (key, value) => (urls[key] = value) });
  } finally {
    for (const name of saved) delete process.env[name];
  }
  return { url: urls[provided[kind]]!, stop: () => services.teardown() };
}
