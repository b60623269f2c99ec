// What only the memory store has about expiry and the soft-bounce rule: its suppression table against a
// plain map while entries expire, move and are compacted away, purgeExpired's bounds, and the histories
// it forgets. The contract itself is the conformance suite's (memory-store.conformance.test.ts).
import { createHash } from 'node:crypto';
import { createMemoryStore, type SuppressionReason } from '@mailwarden/core';
import {
  packRuleBounce,
  storedSoftBounceRule,
  type SoftBounceInput,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { describe, expect, test } from 'vitest';
import { PURGE_BUDGET } from '../src/memory-store/memory-store.js';
import { SuppressionTable } from '../src/memory-store/suppression-table.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const PROJECT = 'acme';
const emailOf = (i: number) => `user${i}@example.com`;
const hashOf = (i: number) => createHash('sha256').update(emailOf(i)).digest('hex');

/** A small deterministic PRNG (mulberry32), so every run makes the same operations. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const record = (i: number, createdAt: number, expiresAt?: number, reason: SuppressionReason = 'manual'): SuppressionRecord => ({
  hash: hashOf(i),
  email: emailOf(i),
  reason,
  createdAt,
  provenance: { source: 'api', at: createdAt },
  ...(expiresAt !== undefined && { expiresAt }),
});

describe('memory suppression table with expiry', () => {
  test('agrees with a map through adds, joins, removals, compactions and purges', () => {
    const next = random(25);
    const table = new SuppressionTable();
    const model = new Map<string, SuppressionRecord>();
    const live = (stored: SuppressionRecord | undefined, now: number) =>
      stored === undefined || (stored.expiresAt !== undefined && stored.expiresAt <= now) ? undefined : stored;
    // 4 000 operations over 300 addresses: enough removals (over 1 024) to compact and reuse slots.
    for (let step = 0; step < 4_000; step++) {
      const i = Math.floor(next() * 300);
      const now = T0 + Math.floor(next() * 100);
      const createdAt = T0 + Math.floor(next() * 100);
      const expiresAt = next() < 0.5 ? undefined : createdAt + Math.floor(next() * 100);
      const hash = hashOf(i);
      const choice = next();
      if (choice < 0.35) {
        const candidate = record(i, createdAt, expiresAt);
        const before = live(model.get(hash), now);
        const { created } = table.add({ ...candidate }, now);
        expect(created).toBe(before === undefined);
        if (before === undefined) model.set(hash, candidate);
      } else if (choice < 0.65) {
        const candidate = record(i, createdAt, expiresAt, next() < 0.5 ? 'hard_bounce' : 'manual');
        const before = live(model.get(hash), now);
        table.upsert({ ...candidate }, now);
        if (before === undefined) model.set(hash, candidate);
        else {
          // The model of the join: the earlier time, the stronger reason, and the winner's provenance with its expiresAt.
          const wins =
            candidate.reason !== before.reason ? candidate.reason === 'hard_bounce' : candidate.provenance!.at < before.provenance!.at;
          const winner = wins ? candidate : before;
          const { expiresAt: _dropped, ...rest } = before;
          model.set(hash, {
            ...rest,
            reason: before.reason === 'hard_bounce' || candidate.reason === 'hard_bounce' ? 'hard_bounce' : 'manual',
            createdAt: Math.min(before.createdAt, candidate.createdAt),
            provenance: winner.provenance!,
            ...(winner.expiresAt !== undefined && { expiresAt: winner.expiresAt }),
          });
        }
      } else if (choice < 0.95) {
        table.remove(hash);
        model.delete(hash);
      } else {
        const removed = table.removeExpired(now, 5);
        const expired = [...model.values()]
          .filter((stored) => stored.expiresAt !== undefined && stored.expiresAt <= now)
          .sort((a, b) => a.expiresAt! - b.expiresAt!);
        expect(removed.length).toBe(Math.min(5, expired.length));
        for (const removedHash of removed) {
          expect(model.get(removedHash)!.expiresAt!).toBeLessThanOrEqual(now);
          model.delete(removedHash);
        }
      }
      const stored = model.get(hash);
      expect(table.get(hash)).toStrictEqual(stored);
      expect(table.get(hash, now)).toStrictEqual(live(stored, now));
    }
    const now = T0 + 50;
    const listed = table.list(10_000, undefined, undefined, now);
    const expected = [...model.values()]
      .filter((stored) => live(stored, now) !== undefined)
      .sort((a, b) => b.createdAt - a.createdAt || (a.hash < b.hash ? -1 : 1));
    expect(listed).toStrictEqual(expected);
    expect(table.expiring).toBe([...model.values()].filter((stored) => stored.expiresAt !== undefined).length);
  });

  test('an entry without expiresAt reads back without the field; an allowlisted add keeps its mark', () => {
    const table = new SuppressionTable();
    table.add(record(1, T0));
    table.add({ ...record(2, T0), provenance: { source: 'api', at: T0, allowlisted: true } });
    expect(Object.keys(table.get(hashOf(1), T0 + DAY)!)).not.toContain('expiresAt');
    expect(table.get(hashOf(2))!.provenance).toStrictEqual({ source: 'api', at: T0, allowlisted: true });
  });
});

describe('memory store purgeExpired', () => {
  test(`deletes at most ${PURGE_BUDGET} expired suppressions per call, soonest first, of every list; nothing else`, async () => {
    const store = createMemoryStore();
    const records: SuppressionRecord[] = [];
    for (let i = 0; i < 2_400; i++) records.push(record(i, T0, T0 + DAY + i));
    for (let i = 2_400; i < 2_500; i++) records.push({ ...record(i, T0, T0 + DAY + i), stream: 'news' });
    // Never expire, or not yet.
    records.push(record(3_000, T0), record(3_001, T0, T0 + 10 * DAY));
    await store.mergeSuppressions(PROJECT, records);
    const now = T0 + 2 * DAY;
    expect(await store.purgeExpired(now)).toBe(PURGE_BUDGET);
    // The soonest went first.
    expect(await store.getSuppression(PROJECT, hashOf(999))).toBeUndefined();
    expect(await store.getSuppression(PROJECT, hashOf(1_000))).toMatchObject({ expiresAt: T0 + DAY + 1_000 });
    expect(await store.purgeExpired(now)).toBe(PURGE_BUDGET);
    expect(await store.purgeExpired(now)).toBe(500);
    expect(await store.purgeExpired(now)).toBe(0);
    expect(await store.listSuppressions(PROJECT, { limit: 10 })).toStrictEqual([record(3_000, T0), record(3_001, T0, T0 + 10 * DAY)]);
    expect(await store.listSuppressions(PROJECT, { stream: 'news', limit: 10 })).toStrictEqual([]);
  });

  test('forgets a soft-bounce history once nothing of it is inside the keep time, not before', async () => {
    const store = createMemoryStore();
    const rule = storedSoftBounceRule({ softBounces: { bounces: 3, days: 7 } })!;
    const bounce = (i: number, at: number, message: string): StoredEvent => {
      const cause = { provider: 'ses' as const, messageId: message, eventId: `${message}${i}`.padEnd(32, '0'), diagnostic: null };
      const input: SoftBounceInput = {
        kind: 'soft_bounce',
        hash: hashOf(i),
        email: emailOf(i),
        at,
        message,
        cause,
        packed: packRuleBounce(cause, at),
        causeJson: JSON.stringify([cause.provider, cause.messageId, cause.diagnostic]),
      };
      return { key: `${message}-${i}`, message: null, trackingIdSearchKey: null, suppression: null, ruleInput: input };
    };
    await store.applyEvents(PROJECT, [bounce(1, T0, 'a'), bounce(2, T0 + DAY, 'a')], { now: T0 + DAY, softBounces: rule });
    expect(store.retained().softBounceHistories).toBe(2);
    // Address 1's only bounce leaves the keep time just after T0 + keepMs; address 2's a day later.
    await store.purgeExpired(T0 + rule.keepMs);
    expect(store.retained().softBounceHistories).toBe(2);
    await store.purgeExpired(T0 + rule.keepMs + 1);
    expect(store.retained().softBounceHistories).toBe(1);
    await store.purgeExpired(T0 + DAY + rule.keepMs + 1);
    expect(store.retained().softBounceHistories).toBe(0);
  });

  test('removal from the project-wide list forgets the history; from a stream it does not', async () => {
    const store = createMemoryStore();
    const rule = storedSoftBounceRule({ softBounces: { bounces: 2, days: 7 } })!;
    const cause = { provider: 'ses' as const, messageId: 'm1', eventId: 'f'.repeat(32), diagnostic: null };
    const input: SoftBounceInput = {
      kind: 'soft_bounce',
      hash: hashOf(1),
      email: emailOf(1),
      at: T0,
      message: 'm1',
      cause,
      packed: packRuleBounce(cause, T0),
      causeJson: JSON.stringify(['ses', 'm1', null]),
    };
    await store.applyEvents(PROJECT, [{ key: 'k1', message: null, trackingIdSearchKey: null, suppression: null, ruleInput: input }], {
      now: T0,
      softBounces: rule,
    });
    await store.removeSuppression(PROJECT, hashOf(1), 'news');
    expect(store.retained().softBounceHistories).toBe(1);
    await store.removeSuppressions(PROJECT, [hashOf(1)]);
    expect(store.retained().softBounceHistories).toBe(0);
  });
});
