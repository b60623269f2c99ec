// What the suppressions-file tests share: a store that goes away mid-import, a project's list in a form
// to compare, and the arbitraries of the property tests.
import { MailwardenError, suppressionReasons, type Mailwarden } from '@mailwarden/core';
import fc from 'fast-check';
import type { SuppressionTarget } from '../src/suppressions-file/target.js';

/** What a project's list (the project-wide one, or `stream`'s) holds, in a form to compare: sorted by address. */
export async function stored(mailwarden: Pick<Mailwarden, 'suppressions'>, project: string, stream?: string) {
  const rows: { email: string; reason: string; created_at: string; source: string | null | undefined }[] = [];
  let cursor: string | null = null;
  do {
    const query = stream === undefined ? { limit: 100 } : { limit: 100, stream };
    const page = await mailwarden.suppressions.list(project, cursor === null ? query : { ...query, cursor });
    rows.push(...page.items.map(({ email, reason, created_at, source }) => ({ email, reason, created_at, source })));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return rows.sort((a, b) => a.email.localeCompare(b.email));
}

/**
 * A store that goes away at its `failAt`-th bulk add: with `applied`, after storing that batch (the
 * answer is what gets lost, as when the process is killed while the store commits), else before.
 * Every later call fails too. Counts the calls of each kind.
 */
export function storeGoingAway(mailwarden: Mailwarden, failAt: number, applied: boolean) {
  const calls = { addMany: 0, checkMany: 0 };
  const gone = () => new MailwardenError('store_unavailable', 'The store is gone.');
  const suppressions: SuppressionTarget = {
    list: (...args) => mailwarden.suppressions.list(...args),
    async checkMany(...args) {
      calls.checkMany++;
      if (calls.addMany >= failAt) throw gone();
      return mailwarden.suppressions.checkMany(...args);
    },
    async addMany(project, items, options) {
      const call = ++calls.addMany;
      if (call > failAt || (call === failAt && !applied)) throw gone();
      const answer = await mailwarden.suppressions.addMany(project, items, options);
      if (call === failAt) throw gone();
      return answer;
    },
  };
  return { target: { suppressions }, calls };
}

/**
 * A target whose calls reach the store in the order `scheduler` picks, not the order they are made:
 * as over HTTP, where a check sent after an add may be answered first.
 */
export function inSchedulerOrder(
  target: { suppressions: SuppressionTarget },
  scheduler: fc.Scheduler,
): { suppressions: SuppressionTarget } {
  const { suppressions } = target;
  return {
    suppressions: {
      list: (...args) => suppressions.list(...args),
      async checkMany(...args) {
        await scheduler.schedule(Promise.resolve(), 'checkMany');
        return suppressions.checkMany(...args);
      },
      async addMany(...args) {
        await scheduler.schedule(Promise.resolve(), 'addMany');
        return suppressions.addMany(...args);
      },
    },
  };
}

/**
 * A target whose adds reach the store a moment after they are made, once what is already waiting has
 * run: as over HTTP, where a short check sent after a bulk add can be taken first.
 */
export function addsLate(target: { suppressions: SuppressionTarget }): { suppressions: SuppressionTarget } {
  const { suppressions } = target;
  return {
    suppressions: {
      list: (...args) => suppressions.list(...args),
      checkMany: (...args) => suppressions.checkMany(...args),
      async addMany(...args) {
        await new Promise((resolve) => setImmediate(resolve));
        return suppressions.addMany(...args);
      },
    },
  };
}

/** A few addresses, so that rows repeat them. */
export const address = fc.constantFrom(
  'a@example.com',
  'B@example.com',
  'b@example.com',
  'c@example.org',
  'd.e+tag@example.net',
  'ünï@exämple.de',
);

/** A time the service takes: whole milliseconds, in the past. */
export const pastTime = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2026-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

/** The streams the rows of the property tests name (empty: the project-wide list). */
export const rowStreams = ['digest', 'marketing'] as const;

/**
 * One row of our CSV: an address (or something that is not one), a reason or none, a time or none, and
 * the list: a stream, or none (the project-wide list), mostly.
 */
export const csvRow = fc.record(
  {
    email: fc.oneof({ weight: 6, arbitrary: address }, { weight: 1, arbitrary: fc.constantFrom('not-an-address', '', 'x@') }),
    reason: fc.constantFrom(...suppressionReasons, '', 'unsubscribe', 'BOUNCE'),
    created_at: fc.option(pastTime, { nil: '' }),
    stream: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...rowStreams) }),
  },
  { requiredKeys: ['email', 'reason', 'created_at'] },
);
export type CsvRow = typeof csvRow extends fc.Arbitrary<infer T> ? T : never;

export function csvOf(rows: readonly CsvRow[]): string {
  return `email,reason,created_at,stream\n${rows.map(({ email, reason, created_at, stream = '' }) => `${email},${reason},${created_at},${stream}\n`).join('')}`;
}

/** Addresses, valid ones and strings a CSV writer must quote: commas, quotes, white space, line breaks, no @. */
export const emailish = fc.oneof(
  fc.emailAddress(),
  fc
    .tuple(fc.emailAddress(), fc.constantFrom(' ', '"', ',', '""', '\t', ' , ', '\n', '\r\n'))
    .map(([email, noise]) => `${noise}${email}${noise}`),
  fc.string({ unit: fc.constantFrom('a', 'b', '@', '.', ',', '"', ' ', 'é', '+', '\t', '\n'), maxLength: 20 }),
  fc.string({ maxLength: 30 }),
);
