// Suppression lists per stream in PostgreSQL, read back through direct SQL as well as through the store:
// each list its own rows ('' the project-wide one), checks, merges, the previous release's batches and
// invalidations (docs/storage-internals.md, "Suppression lists per stream").
import { randomUUID } from 'node:crypto';
import {
  createEmailHasher,
  messageKey,
  type SuppressionInvalidation,
  type SuppressionReason,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { connect, freshStore } from './database.js';

const sql = connect({ max: 4 });
afterAll(() => sql.end());

const hashEmail = createEmailHasher();
const T = Date.UTC(2026, 0, 1);
const [ana, bo] = ['ana@example.com', 'bo@example.com'];

const record = (email: string, reason: SuppressionReason, createdAt: number, stream?: string): SuppressionRecord => ({
  hash: hashEmail(email),
  email,
  reason,
  createdAt,
  ...(stream === undefined ? {} : { stream }),
});

/** Every row of the table, in key order, as SQL holds it. */
const rowsOf = async (schema: string) => [
  ...(await sql.unsafe(`SELECT project_id, stream, hash, reason, created_at::float8 AS created_at
    FROM "${schema}".suppressions ORDER BY project_id, stream, hash`)),
];

describe('a list per stream', () => {
  test("each list has its own row, '' in SQL for the project-wide one; a check with a stream finds the project-wide row first", async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const hash = hashEmail(ana);
      expect(await store.addSuppression('acme', record(ana, 'manual', T + 2, 'marketing'))).toStrictEqual({
        record: record(ana, 'manual', T + 2, 'marketing'),
        created: true,
      });
      // Another list: created there too, whatever the stream's list holds.
      expect((await store.addSuppression('acme', record(ana, 'hard_bounce', T + 5))).created).toBe(true);
      expect(await store.addSuppression('acme', record(ana, 'complaint', T + 9, 'marketing'))).toStrictEqual({
        record: record(ana, 'manual', T + 2, 'marketing'),
        created: false,
      });
      expect(await rowsOf(schema)).toStrictEqual([
        { project_id: 'acme', stream: '', hash, reason: 2, created_at: T + 5 },
        { project_id: 'acme', stream: 'marketing', hash, reason: 1, created_at: T + 2 },
      ]);

      // Without a stream: the project-wide list only, read back without a stream key.
      expect(await store.getSuppression('acme', hash)).toStrictEqual(record(ana, 'hard_bounce', T + 5));
      // With one: the project-wide row when there is one, else the stream's.
      expect(await store.getSuppression('acme', hash, 'marketing')).toStrictEqual(record(ana, 'hard_bounce', T + 5));
      expect(await store.getSuppression('acme', hash, 'news')).toStrictEqual(record(ana, 'hard_bounce', T + 5));
      expect(await store.getSuppression('other', hash, 'marketing')).toBeUndefined();

      expect(await store.removeSuppression('acme', hash, 'news')).toBeUndefined();
      expect(await store.removeSuppression('acme', hash)).toStrictEqual(record(ana, 'hard_bounce', T + 5));
      expect(await store.removeSuppression('acme', hash)).toBeUndefined();
      expect(await store.getSuppression('acme', hash)).toBeUndefined();
      expect(await store.getSuppression('acme', hash, 'marketing')).toStrictEqual(record(ana, 'manual', T + 2, 'marketing'));
      expect(await store.getSuppression('acme', hash, 'news')).toBeUndefined();
      expect(await store.getSuppressions('acme', [hash, hashEmail(bo), hash], 'marketing')).toStrictEqual([
        record(ana, 'manual', T + 2, 'marketing'),
        undefined,
        record(ana, 'manual', T + 2, 'marketing'),
      ]);
      expect(await store.getSuppressions('acme', [hash])).toStrictEqual([undefined]);

      expect(await store.removeSuppressions('acme', [hash, hash], 'marketing')).toStrictEqual([
        record(ana, 'manual', T + 2, 'marketing'),
        undefined,
      ]);
      expect(await rowsOf(schema)).toStrictEqual([]);
    } finally {
      await drop();
    }
  });

  test('a merge joins each record into its own list, records of several lists in one batch; outcomes per list', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const hash = hashEmail(ana);
      expect(
        await store.mergeSuppressions('acme', [
          record(ana, 'manual', T + 4),
          record(ana, 'manual', T + 6, 'marketing'),
          record(ana, 'complaint', T + 8, 'marketing'),
          record(ana, 'hard_bounce', T + 3),
          record(bo, 'manual', T + 1, 'news'),
          record(ana, 'manual', T + 1, 'news'),
        ]),
      ).toStrictEqual(['suppressed', 'suppressed', 'upgraded_from_manual', 'upgraded_from_manual', 'suppressed', 'suppressed']);
      expect(
        await store.mergeSuppressions('acme', [record(ana, 'hard_bounce', T + 2, 'marketing'), record(ana, 'complaint', T, 'news')]),
      ).toStrictEqual(['applied', 'upgraded_from_manual']);
      expect(await rowsOf(schema)).toStrictEqual(
        [
          { project_id: 'acme', stream: '', hash, reason: 2, created_at: T + 3 },
          { project_id: 'acme', stream: 'marketing', hash, reason: 3, created_at: T + 2 },
          { project_id: 'acme', stream: 'news', hash, reason: 3, created_at: T },
          { project_id: 'acme', stream: 'news', hash: hashEmail(bo), reason: 1, created_at: T + 1 },
        ].sort((a, b) => (a.stream === b.stream ? (a.hash < b.hash ? -1 : 1) : a.stream < b.stream ? -1 : 1)),
      );
      // A listing is one list, in the newest-first order, filters and pages as the project-wide one's.
      expect(await store.listSuppressions('acme', { limit: 10, stream: 'news' })).toStrictEqual([
        record(bo, 'manual', T + 1, 'news'),
        record(ana, 'complaint', T, 'news'),
      ]);
      expect(await store.listSuppressions('acme', { limit: 10, stream: 'news', reason: 'complaint' })).toStrictEqual([
        record(ana, 'complaint', T, 'news'),
      ]);
      expect(
        await store.listSuppressions('acme', { limit: 10, stream: 'news', after: { createdAt: T + 1, hash: hashEmail(bo) } }),
      ).toStrictEqual([record(ana, 'complaint', T, 'news')]);
      expect(await store.listSuppressions('acme', { limit: 10, stream: 'news', emailPrefix: 'bo' })).toStrictEqual([
        record(bo, 'manual', T + 1, 'news'),
      ]);
      expect(await store.listSuppressions('acme', { limit: 10 })).toStrictEqual([record(ana, 'hard_bounce', T + 3)]);
      expect(await store.listSuppressions('acme', { limit: 10, stream: 'weekly' })).toStrictEqual([]);
    } finally {
      await drop();
    }
  });

  test("an event's suppression goes to the list of its stream; the previous release's event objects, to the project-wide one", async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const hash = hashEmail(ana);
      const key = messageKey('sendgrid', 'm1', ana);
      const message = {
        key,
        provider: 'sendgrid' as const,
        messageId: 'm1',
        recipient: ana,
        trackingId: null,
        stream: 'marketing',
        facts: 0,
        firstEventAt: T,
        lastEventAt: T,
      };
      const unsubscribe = { ...record(ana, 'manual', T, 'marketing'), provenance: { source: 'unsubscribe' as const, at: T } };
      expect(
        await store.applyEvents('acme', [
          { key: `sendgrid:${randomUUID()}`, message, trackingIdSearchKey: null, suppression: unsubscribe },
          { key: `sendgrid:${randomUUID()}`, message, trackingIdSearchKey: null, suppression: unsubscribe },
        ]),
      ).toStrictEqual(['suppressed', 'applied']);
      expect(await store.getSuppression('acme', hash)).toBeUndefined();
      expect(await store.getSuppression('acme', hash, 'marketing')).toStrictEqual(unsubscribe);

      // During a rolling deploy an instance of the previous release sends one object per event, whose
      // `stream` is its message's: the suppression it carries is the project-wide one it always was.
      const [row] = await sql
        .unsafe(`SELECT "${schema}".mailwarden_apply_events('acme', $1::text::jsonb)`, [
          JSON.stringify([
            {
              key: `sendgrid:${randomUUID()}`,
              message_key: key,
              provider: 'sendgrid',
              message_id: 'm1',
              recipient: ana,
              stream: 'marketing',
              facts: 0,
              first_event_at: T + 1,
              last_event_at: T + 1,
              hash,
              email: ana,
              reason: 2,
              created_at: T + 1,
            },
          ]),
        ])
        .values();
      expect(row?.[0]).toBe('s');
      expect(await rowsOf(schema)).toStrictEqual([
        { project_id: 'acme', stream: '', hash, reason: 2, created_at: T + 1 },
        { project_id: 'acme', stream: 'marketing', hash, reason: 1, created_at: T },
      ]);
      expect((await store.getMessage('acme', key))?.stream).toBe('marketing');
    } finally {
      await drop();
    }
  });

  test('an invalidation names each hash a batch changed once, whichever of its lists changed', async () => {
    const { schema, store: writer, drop } = await freshStore(sql);
    const listening = connect({ max: 2 });
    const reader = createPostgresStore({ sql: listening, schema });
    const received: SuppressionInvalidation[] = [];
    const stop = await reader.subscribeInvalidations((invalidation) => received.push(invalidation));
    const until = async (count: number) => {
      // Notifications arrive after commit, on the listening connection: poll for them, bounded.
      for (let tries = 0; received.length < count && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const sorted = (invalidation: SuppressionInvalidation | undefined) => ({
      ...invalidation,
      hashes: [...(invalidation?.hashes ?? [])].sort(),
    });
    try {
      const hashes = [hashEmail(ana), hashEmail(bo)].sort();
      await writer.mergeSuppressions('acme', [
        record(ana, 'manual', T),
        record(ana, 'manual', T, 'marketing'),
        record(bo, 'manual', T, 'news'),
      ]);
      await until(1);
      expect(received.map(sorted)).toStrictEqual([{ projectId: 'acme', hashes }]);
      // A merge that changes nothing notifies nothing; a removal from one list names its hashes.
      await writer.mergeSuppressions('acme', [record(ana, 'manual', T + 1, 'marketing')]);
      await writer.removeSuppressions('acme', [hashEmail(ana), hashEmail(bo)], 'marketing');
      await until(2);
      expect(received.slice(1).map(sorted)).toStrictEqual([{ projectId: 'acme', hashes: [hashEmail(ana)] }]);
      await writer.removeSuppression('acme', hashEmail(bo), 'news');
      await until(3);
      expect(received.slice(2)).toStrictEqual([{ projectId: 'acme', hashes: [hashEmail(bo)] }]);
    } finally {
      await stop();
      await listening.end();
      await drop();
    }
  });
});
