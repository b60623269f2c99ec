// Timelines as PostgreSQL keeps them, read through a raw side channel: one row per entry, the cap kept
// inside mailwarden_apply_events, and rows that go with their message when retention purges it.
import { messageKey, timelineEntryId, TIMELINE_CAP, type StoredEvent } from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { connect, freshStore } from './database.js';

const sql = connect({ max: 4 });
afterAll(() => sql.end());

const DAY = 86_400_000;

function event(id: string, at: number, key: string): StoredEvent {
  const recipient = `${id}@example.com`;
  return {
    key: `ses:${key}`,
    message: {
      key: messageKey('ses', id, recipient),
      provider: 'ses',
      messageId: id,
      recipient,
      trackingId: null,
      stream: null,
      facts: 1,
      firstEventAt: at,
      lastEventAt: at,
    },
    trackingIdSearchKey: null,
    suppression: null,
    timelineEntry: {
      id: timelineEntryId(`ses:${key}`),
      eventKey: key,
      type: 'deferred',
      provider: 'ses',
      occurredAt: at,
      diagnostic: `try ${key}`,
    },
  };
}

describe('timelines in PostgreSQL', () => {
  test('one row per entry, at most the cap per message, and none left once retention purges the message', async () => {
    const { schema, store, drop } = await freshStore(sql, { retention: { messagesMs: 30 * DAY } });
    try {
      const now = Date.now();
      const old = now - 40 * DAY;
      const rows = async () =>
        (await sql.unsafe(`SELECT message_key, count(*)::int AS n FROM "${schema}".timeline_entries GROUP BY 1 ORDER BY 2`)).map(
          (row) => row.n as number,
        );
      const many = Array.from({ length: TIMELINE_CAP + 10 }, (_, i) => event('old', old + i, `old-${i}`));
      await store.applyEvents('acme', many.slice(30));
      await store.applyEvents('acme', [...many.slice(0, 30), event('new', now, 'new-1'), many[3]!]);
      expect(await rows()).toStrictEqual([1, TIMELINE_CAP]);

      expect(await store.purgeExpired(now)).toBe(1);
      expect(await rows()).toStrictEqual([1]);
      expect(await store.getMessage('acme', many[0]!.message!.key)).toBeUndefined();
      expect((await store.getMessage('acme', messageKey('ses', 'new', 'new@example.com')))?.timeline).toHaveLength(1);
    } finally {
      await drop();
    }
  });
});
