import type { Store } from '@mailwarden/core';
import { actorMatches, ruleActors, type Change, type ChangeQuery, type StoredAlertRule, type StoredEvent } from '@mailwarden/core/store';
import fc from 'fast-check';
import * as arbitrary from './arbitraries.js';
import { erasureOf } from './erasure.js';
import { feedEvent, messageTo, readFeed, readFiltered } from './feed.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { addresses, HOUR, softBounce, softBounceRule, suppression, T0 } from './records.js';

const now = T0 + 10 * HOUR;

/** An event as the service prepares it, with its provider's actor (`webhookActor`). */
const withActor = (event: StoredEvent, actor: string | undefined): StoredEvent => (actor === undefined ? event : { ...event, actor });

/** Whether a change passes `filters` as `ChangeQuery` defines them. */
function passes(change: Change, { kinds, actors, hash }: Omit<ChangeQuery, 'after' | 'limit'>): boolean {
  const about =
    'record' in change
      ? change.record.hash
      : 'entry' in change
        ? change.entry.key
        : change.kind === 'address.erased'
          ? change.hash
          : undefined;
  return (
    (kinds === undefined || kinds.length === 0 || kinds.includes(change.kind)) &&
    (actors === undefined || actors.length === 0 || actors.some((actor) => actorMatches(change.actor, actor))) &&
    (hash === undefined || about === hash)
  );
}

/** A small alert rule: two messages, one of them bounced, fires and pauses `marketing`. */
const alertRule: StoredAlertRule = {
  window: 10,
  minMessages: 2,
  bounce: { firePpm: 500_000, resolvePpm: 100_000 },
  complaint: { firePpm: 500_000, resolvePpm: 100_000 },
  trackingIds: false,
  pause: ['marketing'],
};

/** Every kind of write a store takes an actor for, each with `actor(index)`; run on the store and the model alike. */
function everyWrite(projectId: string, actor: (index: number) => string | undefined): ((target: Store) => Promise<unknown>)[] {
  const [a, b, c] = addresses(3);
  const identity = messageTo(c);
  return [
    (target) => target.addSuppression(projectId, suppression(a, 'manual', T0), now, actor(0)),
    (target) => target.mergeSuppressions(projectId, [suppression(a, 'hard_bounce', T0), suppression(b, 'manual', T0)], now, actor(1)),
    (target) => target.removeSuppression(projectId, a.hash, undefined, now, actor(2)),
    (target) => target.removeSuppressions(projectId, [b.hash], undefined, now, actor(3)),
    (target) => target.addAllowlistEntry(projectId, { key: a.hash, entry: a.email, createdAt: now }, actor(4)),
    (target) => target.removeAllowlistEntry(projectId, a.hash, now, actor(5)),
    (target) => target.pauseStream(projectId, 'digest', now, actor(6)),
    (target) => target.resumeStream(projectId, 'digest', now, actor(7)),
    (target) =>
      target.applyEvents(
        projectId,
        [withActor(feedEvent(identity, 'bounced', T0, { key: 'audit:1', suppress: 'hard_bounce' }), actor(8))],
        { now },
      ),
    (target) => target.eraseAddress(projectId, erasureOf(b.email, now, actor(9))),
    (target) => target.syncApiKeys(projectId, [{ name: 'ops', scopes: ['read'], version: '0123456789abcdef' }], now, actor(10) ?? 'config'),
  ];
}

export function describeAuditTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const runs = Math.max(3, Math.ceil((options.numRuns ?? 50) / 5));

  describe('the audit trail', () => {
    test('every kind of write records the actor it is given on each change it makes', async ({ store, projectId }) => {
      const model = createStoreModel({ changes: {} });
      const actors = ['key:ops', 'import:2025-01-01T00:00:00.000Z-0a1b2c', 'key:ops', 'key:admin', 'key:ops', 'key:ops'].concat([
        'key:admin',
        'key:admin',
        'webhook:postmark:bounced',
        'key:admin',
        'config',
      ]);
      for (const call of everyWrite(projectId, (index) => actors[index])) expect(await call(store)).toStrictEqual(await call(model));
      const changes = await readFeed(store, projectId, 4);
      expect(changes).toEqual(await readFeed(model, projectId));
      // The erasure deleted the changes about b; a's stay.
      expect(changes.map((change) => [change.kind, change.actor])).toStrictEqual([
        ['suppression.added', 'key:ops'],
        ['suppression.upgraded', 'import:2025-01-01T00:00:00.000Z-0a1b2c'],
        ['suppression.removed', 'key:ops'],
        ['allowlist.added', 'key:ops'],
        ['allowlist.removed', 'key:ops'],
        ['stream.paused', 'key:admin'],
        ['stream.resumed', 'key:admin'],
        ['suppression.added', 'webhook:postmark:bounced'],
        ['message.status_changed', 'webhook:postmark:bounced'],
        ['address.erased', 'key:admin'],
        ['key.added', 'config'],
      ]);
    });

    test('a write given no actor stores none: its changes have no actor field', async ({ store, projectId }) => {
      const model = createStoreModel({ changes: {} });
      for (const call of everyWrite(projectId, () => undefined)) expect(await call(store)).toStrictEqual(await call(model));
      const changes = await readFeed(store, projectId, 4);
      expect(changes).toEqual(await readFeed(model, projectId));
      expect(changes.filter((change) => change.kind !== 'key.added' && 'actor' in change)).toStrictEqual([]);
    });

    test('changes a rule makes carry the rule’s actor: soft bounces, expiry, alerts, outbound', async ({ store, projectId }) => {
      const model = createStoreModel({ changes: {} });
      const [a, b, c] = addresses(3);
      const rule = softBounceRule(2, 1);
      const expiring = { ...suppression(c, 'hard_bounce', T0), expiresAt: T0 + HOUR };
      const progress = {
        cursor: 0,
        failures: 9,
        failingSince: now - HOUR,
        nextAttemptAt: 0,
        pausedAt: now,
        lastError: 'HTTP 503',
        lastSuccessAt: null,
      };
      const bounces = [softBounce(a, now - 2 * HOUR, 'm1', 'postmark:sb-1'), softBounce(a, now - HOUR, 'm2', 'postmark:sb-2')].map(
        (event) => withActor(event, 'webhook:postmark:bounced'),
      );
      const windowed = [
        withActor(feedEvent(messageTo(a), 'delivered', T0, { key: 'postmark:d-1' }), 'webhook:postmark:delivered'),
        withActor(feedEvent(messageTo(b), 'bounced', T0 + 1, { key: 'postmark:b-1' }), 'webhook:postmark:bounced'),
      ];
      const calls: ((target: Store) => Promise<unknown>)[] = [
        (target) => target.applyEvents(projectId, bounces, { now, softBounces: rule }),
        (target) => target.addSuppression(projectId, expiring, T0, 'key:ops'),
        (target) => target.addSuppression(projectId, suppression(c, 'manual', now), now, 'key:ops'), // replaces the expired one
        (target) => target.mergeSuppressions(projectId, [{ ...expiring, hash: b.hash, email: b.email }], T0, 'key:ops'),
        (target) => target.applyEvents(projectId, windowed, { now, alerts: alertRule }),
        (target) => target.leaseOutbound(projectId, 'hook', 'owner', now, now + HOUR),
        (target) => target.saveOutbound(projectId, 'hook', 'owner', progress, now + HOUR),
        (target) => target.resumeOutbound(projectId, 'hook', now + 1, 'key:admin'),
      ];
      for (const call of calls) expect(await call(store)).toStrictEqual(await call(model));
      if (store.purgeExpired !== undefined) {
        await store.purgeExpired(now);
        await model.purgeExpired!(now);
      }
      const changes = await readFeed(store, projectId, 4);
      expect(changes).toEqual(await readFeed(model, projectId));
      expect(changes.map((change) => [change.kind, change.actor])).toStrictEqual([
        ['suppression.added', 'rule:soft_bounces'],
        ['suppression.added', 'key:ops'],
        ['suppression.expired', 'rule:expiry'],
        ['suppression.added', 'key:ops'],
        ['suppression.added', 'key:ops'],
        ['message.status_changed', 'webhook:postmark:delivered'],
        ['message.status_changed', 'webhook:postmark:bounced'],
        ['alert.bounce_rate', 'rule:alerts'],
        ['stream.paused', 'rule:alerts'],
        ['endpoint.paused', 'rule:outbound'],
        ['endpoint.resumed', 'key:admin'],
        ...(store.purgeExpired === undefined ? [] : [['suppression.expired', ruleActors.expiry]]),
      ]);
    });

    // The filters: paging by actor (exact or a prefix of whole segments), by hash, with kinds, sees exactly
    // the matching sub-sequence whatever the page size, past a stretch longer than a store's look-ahead.
    test('filters by actor, prefix and hash, with kinds, page past long stretches of other changes', async ({ store, projectId }) => {
      const pool = addresses(1_205);
      const [x, y] = pool.slice(1_203);
      await store.mergeSuppressions(
        projectId,
        pool.slice(0, 1_200).map((address) => suppression(address, 'manual', T0)),
        now,
        'import:run-1',
      );
      await store.addAllowlistEntry(projectId, { key: x!.hash, entry: x!.email, createdAt: now }, 'key:ops');
      await store.addSuppression(projectId, suppression(x!, 'manual', T0), now, 'key:ops-2');
      await store.mergeSuppressions(
        projectId,
        pool.slice(1_200, 1_203).map((address) => suppression(address, 'hard_bounce', T0)),
        now,
      );
      await store.applyEvents(
        projectId,
        [withActor(feedEvent(messageTo(y!), 'bounced', T0, { suppress: 'hard_bounce' }), 'webhook:postmark:bounced')],
        { now },
      );
      await store.removeSuppression(projectId, x!.hash, undefined, now, 'key:ops');
      await store.pauseStream(projectId, 'marketing', now, 'key');
      const all = await readFeed(store, projectId, 1000);
      expect(all).toHaveLength(1_209);
      const examples: Omit<ChangeQuery, 'after' | 'limit'>[] = [
        { actors: ['key:ops'] }, // not key:ops-2
        { actors: ['key'] }, // every key, and the actor `key` itself
        { actors: ['webhook:postmark'] },
        { actors: ['webhook:ses', 'rule'] }, // none
        { hash: x!.hash },
        { hash: x!.hash, kinds: ['suppression.added', 'suppression.removed'] },
        { hash: x!.hash, actors: ['key:ops'] },
        { hash: y!.hash, actors: ['webhook'], kinds: ['suppression.added'] },
        { actors: ['import'], kinds: ['allowlist.added'] }, // none
      ];
      for (const filters of examples) {
        const expected = all.filter((change) => passes(change, filters));
        expect(await readFiltered(store, projectId, 1, filters), JSON.stringify(filters)).toEqual(expected);
        expect(await readFiltered(store, projectId, 3, filters), JSON.stringify(filters)).toEqual(expected);
      }
      expect(all.filter((change) => passes(change, { actors: ['key:ops'] })).map((change) => change.kind)).toStrictEqual([
        'allowlist.added',
        'suppression.removed',
      ]);
    });

    // Random writes of every kind, each with a random actor or none: the feed equals the model's change for change.
    test('random writes with random actors append exactly the model’s changes, each with its actor', async () => {
      const store = await options.createStore({ changes: {} });
      try {
        const actor = fc.constantFrom(undefined, 'key:ops', 'key:ops-2', 'import:run-1', 'unsubscribe:marketing');
        const write = fc.oneof(
          fc.tuple(arbitrary.suppression, actor).map(
            ([record, by]) =>
              (target: Store, id: string) =>
                target.addSuppression(id, record, now, by),
          ),
          fc.tuple(fc.array(arbitrary.suppression, { maxLength: 3 }), actor).map(
            ([records, by]) =>
              (target: Store, id: string) =>
                target.mergeSuppressions(id, records, now, by),
          ),
          fc.tuple(arbitrary.hash, arbitrary.suppressionList, actor).map(
            ([hash, stream, by]) =>
              (target: Store, id: string) =>
                target.removeSuppression(id, hash, stream, now, by),
          ),
          fc.tuple(fc.constantFrom(...arbitrary.addressPool), actor).map(
            ([address, by]) =>
              (target: Store, id: string) =>
                target.addAllowlistEntry(id, { key: address.hash, entry: address.email, createdAt: now }, by),
          ),
          fc.tuple(arbitrary.hash, actor).map(
            ([hash, by]) =>
              (target: Store, id: string) =>
                target.removeAllowlistEntry(id, hash, now, by),
          ),
          fc.tuple(fc.constantFrom('marketing', 'digest'), fc.boolean(), actor).map(
            ([stream, pause, by]) =>
              (target: Store, id: string) =>
                pause ? target.pauseStream(id, stream, now, by) : target.resumeStream(id, stream, now, by),
          ),
          fc.tuple(arbitrary.eventBatch, actor).map(
            ([events, by]) =>
              (target: Store, id: string) =>
                target.applyEvents(
                  id,
                  events.map((event) => withActor(event, by)),
                  { now },
                ),
          ),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(write, { minLength: 2, maxLength: 12 }), arbitrary.limit, async (writes, limit) => {
            const model = createStoreModel({ changes: {} });
            const projectId = randomProjectId();
            for (const run of writes) expect(await run(store, projectId)).toStrictEqual(await run(model, projectId));
            expect(await readFeed(store, projectId, limit)).toEqual(await readFeed(model, projectId));
          }),
          { numRuns: runs },
        );
      } finally {
        await store.close();
      }
    });
  });
}
