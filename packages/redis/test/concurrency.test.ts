// Several app instances (clients) hammer the same addresses, messages and event keys at once. The end
// state must be one the model allows, with no duplicate rows and no lost or doubled counts.
import { randomUUID } from 'node:crypto';
import type { SuppressionReason } from '@mailwarden/core';
import {
  Fact,
  createEmailHasher,
  messageKey,
  reasonRank,
  type MessageRecord,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { createStoreModel } from '@mailwarden/store-test-suite';
import { Redis } from 'ioredis';
import { afterAll, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { suppressionField, suppressionMember } from '../src/layout.js';

const CLIENTS = 4;
const T0 = Date.UTC(2025, 0, 1);
const hashEmail = createEmailHasher();

const url = inject('redisUrl');
const raw = new Redis(url);
const clients = Array.from({ length: CLIENTS }, () => new Redis(url));
afterAll(() => Promise.all([raw.quit(), ...clients.map((client) => client.quit())]));

/** A small seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

function addresses(name: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const email = `${name}${i}-${randomUUID()}@example.com`;
    return { email, hash: hashEmail(email) };
  });
}

test('concurrent adds, removes and events from several clients end in a state the model allows', async () => {
  const keyPrefix = `concurrency:${randomUUID()}:`;
  const projectId = 'shared';
  const tag = `${keyPrefix}{${projectId}}:`;
  const stores = clients.map((client) => createRedisStore({ client, keyPrefix }));

  // Addresses only added and removed: each success must alternate, add, remove, add…
  const toggled = addresses('toggled', 3);
  // Addresses only suppressed by events and by adds later than every event: the result is fixed.
  const bounced = addresses('bounced', 3);
  const messages = Array.from({ length: 6 }, (_, i) => {
    const messageId = `msg-${i}-${randomUUID()}`;
    const recipient = bounced[i % bounced.length]!.email;
    return { key: messageKey('sendgrid', messageId, recipient), provider: 'sendgrid' as const, messageId, recipient };
  });
  const trackingIds = [null, 'promo-b', 'promo-a', 'Promo', 'promo-c'];
  const facts = [Fact.sent, Fact.delivered, Fact.soft_bounced, Fact.hard_bounced, Fact.complained, Fact.opened | Fact.delivered];
  const reasons: SuppressionReason[] = ['hard_bounce', 'complaint'];

  // 300 distinct events; every client sends about half of them, so most arrive twice or more, at once.
  const eventNext = random(7);
  const events: StoredEvent[] = Array.from({ length: 300 }, (_, i) => {
    const identity = pick(eventNext, messages);
    const trackingId = pick(eventNext, trackingIds);
    const time = T0 + Math.floor(eventNext() * 50) * 1000;
    const message: MessageRecord = {
      ...identity,
      trackingId,
      stream: null,
      facts: pick(eventNext, facts),
      firstEventAt: time,
      lastEventAt: time,
    };
    const suppressed = eventNext() < 0.3;
    return {
      key: `sendgrid:event-${i}`,
      message,
      trackingIdSearchKey: trackingId?.toLowerCase() ?? null,
      suppression: suppressed
        ? { hash: hashEmail(identity.recipient), email: identity.recipient, reason: pick(eventNext, reasons), createdAt: time }
        : null,
    };
  });

  const counts = new Map(toggled.map(({ hash }) => [hash, { created: 0, removed: 0 }]));
  const appliedKeys: string[] = [];
  await Promise.all(
    stores.map(async (store, client) => {
      const next = random(100 + client);
      const mine = events.filter(() => next() < 0.5);
      for (let round = 0; round < 40; round++) {
        // Ten calls in flight per client at a time: toggles, late manual adds, and event batches.
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            const roll = next();
            if (roll < 0.4) {
              const { email, hash } = pick(next, toggled);
              if (next() < 0.5) {
                const { created } = await store.addSuppression(projectId, { hash, email, reason: 'manual', createdAt: T0 });
                if (created) counts.get(hash)!.created++;
              } else if (await store.removeSuppression(projectId, hash)) {
                counts.get(hash)!.removed++;
              }
            } else if (roll < 0.5) {
              const { email, hash } = pick(next, bounced);
              await store.addSuppression(projectId, { hash, email, reason: 'manual', createdAt: T0 + 3_600_000 });
            } else {
              const start = Math.floor(next() * mine.length);
              const batch = mine.slice(start, start + 1 + Math.floor(next() * 8));
              const outcomes = await store.applyEvents(projectId, batch);
              batch.forEach((event, i) => outcomes[i] !== 'duplicate' && appliedKeys.push(event.key));
            }
          }),
        );
      }
      // Whatever the random walk skipped, each client finally sends all of its events once more.
      const outcomes = await store.applyEvents(projectId, mine);
      mine.forEach((event, i) => outcomes[i] !== 'duplicate' && appliedKeys.push(event.key));
    }),
  );

  // Each event sent by any client was applied exactly once.
  const sent = new Set(appliedKeys);
  expect(appliedKeys).toHaveLength(sent.size);
  const model = createStoreModel();
  await model.applyEvents(
    projectId,
    events.filter((event) => sent.has(event.key)),
  );
  const store = stores[0]!;

  // Messages and counters: as if each applied event had been applied once, in any order.
  expect(await store.listMessages(projectId, { limit: 100 })).toStrictEqual(await model.listMessages(projectId, { limit: 100 }));
  const rows = await store.listTrackingIds(projectId, { limit: 100 });
  expect(rows).toStrictEqual(await model.listTrackingIds(projectId, { limit: 100 }));
  for (const trackingId of trackingIds.filter((id): id is string => id !== null)) {
    expect(await store.listMessages(projectId, { limit: 100, trackingId })).toStrictEqual(
      await model.listMessages(projectId, { limit: 100, trackingId }),
    );
  }
  // Raw: one order entry per message, one per tracking ID, indexes as long as the counters say.
  expect(await raw.zcard(`${tag}mo`)).toBe(messages.filter((m) => events.some((e) => sent.has(e.key) && e.message?.key === m.key)).length);
  expect(await raw.zcard(`${tag}to`)).toBe(rows.length);
  expect(await raw.hlen(`${tag}t`)).toBe(rows.length);
  for (const row of rows) expect(await raw.zcard(`${tag}mt:${row.trackingId}`)).toBe(row.messages);

  // Toggled addresses: successes alternated, and the stored state is the last one.
  for (const { hash } of toggled) {
    const { created, removed } = counts.get(hash)!;
    expect(created - removed).toBeGreaterThanOrEqual(0);
    expect(created - removed).toBeLessThanOrEqual(1);
    expect(await raw.hexists(`${tag}s`, suppressionField(hash))).toBe(created - removed);
  }
  // Event-suppressed addresses: the strongest reason and the earliest time of their events, whatever
  // the order; the later manual adds never changed them.
  for (const { email, hash } of bounced) {
    const upserts = events.filter((event) => sent.has(event.key) && event.suppression?.hash === hash).map((event) => event.suppression!);
    const expected: SuppressionRecord | undefined =
      upserts.length === 0
        ? undefined
        : {
            hash,
            email,
            reason: upserts.reduce((a, b) => (reasonRank(b.reason) > reasonRank(a.reason) ? b : a)).reason,
            createdAt: Math.min(...upserts.map((record) => record.createdAt)),
          };
    const stored = await store.getSuppression(projectId, hash);
    if (expected !== undefined) expect(stored).toStrictEqual(expected);
    // Without an event, only the manual add can have created it.
    else if (stored !== undefined) expect(stored).toStrictEqual({ hash, email, reason: 'manual', createdAt: T0 + 3_600_000 });
  }
  // No duplicate rows: one order entry per suppression, and it names the stored createdAt.
  const stored = ((await raw.callBuffer('HKEYS', `${tag}s`)) as Buffer[]).map((field) => field.toString('hex')).sort();
  const members = (
    await Promise.all(
      (await raw.zrangeBuffer(`${tag}sk`, 0, -1)).map((head) => raw.zrangeBuffer(Buffer.concat([Buffer.from(`${tag}sb:`), head]), 0, -1)),
    )
  ).flat();
  expect(members).toHaveLength(stored.length);
  const listed = await store.listSuppressions(projectId, { limit: 100 });
  expect(listed.map((record) => record.hash.slice(0, 60)).sort()).toStrictEqual(stored);
  expect(new Set(members.map((member) => member.toString('hex', 8, 38)))).toStrictEqual(new Set(stored));
  for (const record of listed) expect(members.some((member) => member.equals(suppressionMember(record.createdAt, record.hash)))).toBe(true);
});
