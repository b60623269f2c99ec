// Hooks across instances: three app instances share one Redis or PostgreSQL store and receive the same
// webhook events at once (a provider retrying into a load balancer). Each event's hook runs once in
// all, on whichever instance stored it; each address is reported suppressed once, and upgraded once
// per stronger reason.
import { randomUUID } from 'node:crypto';
import { createMailwarden, type DeliveryEvent, type EventNotice, type SuppressedNotice } from '@mailwarden/core';
import { describe, expect, inject, test } from 'vitest';
import { openStore } from '../src/store.js';

const INSTANCES = 3;
const AT = Date.UTC(2026, 10, 24, 9);

/** 60 events about 20 recipients: delivered, then hard bounces for half, complaints for a quarter. */
function webhookEvents(): DeliveryEvent[] {
  return Array.from({ length: 60 }, (_, index): DeliveryEvent => {
    const recipient = `user${index % 20}@example.com`;
    const type =
      index < 20 ? 'delivered' : index < 40 ? (index % 2 === 0 ? 'bounced' : 'opened') : index % 4 === 0 ? 'complained' : 'clicked';
    return {
      provider: 'sendgrid',
      type,
      ...(type === 'bounced' ? { bounceClass: 'hard' as const } : {}),
      messageId: `m-${index % 20}`,
      recipient,
      trackingId: 'spring-sale',
      occurredAt: new Date(AT + index * 1000),
      eventKey: `event-${index}`,
    };
  });
}

describe('hooks across instances sharing a store', () => {
  test.each(['redis', 'postgres'] as const)('%s: each event and each suppression change is reported once in all', async (kind) => {
    const env =
      kind === 'redis'
        ? { REDIS_URL: inject('redisUrl'), MAILWARDEN_REDIS_KEY_PREFIX: `hooks-${randomUUID()}:` }
        : { DATABASE_URL: inject('databaseUrl'), MAILWARDEN_PG_SCHEMA: `hooks_${randomUUID().replaceAll('-', '')}` };
    const opened = await Promise.all(Array.from({ length: INSTANCES }, () => openStore(env)));
    try {
      const events: EventNotice[] = [];
      const suppressed: SuppressedNotice[] = [];
      const instances = opened.map(({ store }) =>
        createMailwarden({
          store,
          on: { event: (notice) => void events.push(notice), suppressed: (notice) => void suppressed.push(notice) },
        }),
      );
      const all = webhookEvents();
      // Every instance gets every event, in batches of 7, each in its own order.
      await Promise.all(
        instances.map(async (mailwarden, instance) => {
          const mine = instance === 0 ? all : instance === 1 ? [...all].reverse() : [...all.slice(30), ...all.slice(0, 30)];
          for (let from = 0; from < mine.length; from += 7) await mailwarden.applyEvents('acme', mine.slice(from, from + 7));
        }),
      );
      await Promise.all(instances.map((mailwarden) => mailwarden.hooksSettled()));

      expect(events.map(({ event }) => event.eventKey).sort()).toStrictEqual(all.map((event) => event.eventKey).sort());
      const list = await instances[0]!.suppressions.list('acme', { limit: 100 });
      expect([...new Set(suppressed.map((notice) => notice.email))].sort()).toStrictEqual(list.items.map((item) => item.email).sort());
      for (const item of list.items) {
        // Instances call their hooks concurrently, so the calls may come in any order; followed from
        // "not suppressed", each reported change leads to the next, and the last to the stored reason.
        const reported = suppressed.filter((notice) => notice.email === item.email);
        let reason: string | null = null;
        for (let step = 0; step < reported.length; step++) {
          const next = reported.filter((notice) => notice.previousReason === reason);
          expect(next, `${item.email}: one change from ${reason}`).toHaveLength(1);
          reason = next[0]!.reason;
        }
        expect(reason, item.email).toBe(item.reason);
      }
    } finally {
      await Promise.all(opened.map((store) => store.close()));
    }
  });
});
