import { randomUUID } from 'node:crypto';
import { erasureForms, normalizeEmail, type DeliveryEventType, type Store } from '@mailwarden/core';
import {
  createEmailHasher,
  erasedEmail,
  messageKey,
  type AddressErasure,
  type Change,
  type StoredEvent,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import fc from 'fast-check';
import { feedEvent, readFeed, readFiltered } from './feed.js';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { causeOf, HOUR, type MessageIdentity, storedEvent, suppression, T0 } from './records.js';

const hashEmail = createEmailHasher();
const now = T0 + 10 * HOUR;

/**
 * What the erasure service gives `Store.eraseAddress` for an address as a caller typed it
 * (docs/decisions.md, "Erasure"): its hash, its normalized form, every text of it (`erasureForms`: as
 * given, trimmed, normalized, lower-cased, each JSON-escaped), and the project-wide record that keeps it blocked.
 */
export function erasureOf(given: string, at: number, actor?: string): AddressErasure {
  const email = normalizeEmail(given);
  const hash = hashEmail(email);
  const forms = erasureForms(given, email);
  return {
    hash,
    email,
    forms,
    suppression: { hash, email: erasedEmail(hash), reason: 'manual', createdAt: at, provenance: { source: 'api', at } },
    now: at,
    ...(actor === undefined ? {} : { actor }),
  };
}

/** A fresh address as a caller might type it: padded (a tab JSON escapes, U+0085 that normalization trims), mixed case, non-ASCII. */
function person() {
  const given = `\t${randomUUID()}.Zoë@Example.COM\u0085 `;
  const email = normalizeEmail(given);
  return { given, email, hash: hashEmail(email) };
}
type Person = ReturnType<typeof person>;

/** A message to `to`, with a provider message ID of its own. */
function messageOf(to: Person): MessageIdentity {
  const messageId = `m-${randomUUID()}`;
  return { key: messageKey('postmark', messageId, to.email), provider: 'postmark', messageId, recipient: to.email };
}

/**
 * An event as the service stores it: key `postmark:<eventKey>`, its timeline entry's `eventKey` the
 * provider's alone; a bounce or complaint suppresses with a diagnostic that quotes the address as given.
 */
function eventOf(
  identity: MessageIdentity,
  to: Person,
  type: DeliveryEventType,
  time: number,
  parts: { suppress?: 'hard_bounce' | 'complaint'; trackingId?: string | null } = {},
): StoredEvent {
  const eventKey = `${type}-${randomUUID()}`;
  const event = feedEvent(identity, type, time, { key: `postmark:${eventKey}`, ...parts });
  const own = event.suppression;
  return {
    ...event,
    actor: `webhook:postmark:${type}`,
    timelineEntry: { ...event.timelineEntry!, eventKey },
    suppression:
      own === null
        ? null
        : {
            ...own,
            provenance: {
              ...own.provenance!,
              event: causeOf(event.key, 'postmark', identity.messageId, `550 5.1.1 <${to.given.trim()}>: no such user`),
            },
          },
  };
}

/** An event stored as a dedup key alone (no message), the key embedding the address as given (some providers' IDs do). */
const dedupOnly = (to: Person): StoredEvent => storedEvent({ key: `ses:complaint-${to.given.trim()}` });

/** The record erasure keeps of `record`: the placeholder email, no diagnostic, (project-wide) no expiry. */
function kept(record: SuppressionRecord): SuppressionRecord {
  const copy = structuredClone({ ...record, email: erasedEmail(record.hash) });
  if (copy.stream === undefined) delete copy.expiresAt;
  if (copy.provenance?.event !== undefined) copy.provenance.event.diagnostic = null;
  for (const bounce of copy.provenance?.rule?.events ?? []) bounce.diagnostic = null;
  return copy;
}

/** Whether a change is about `who`: by hash, or a status change of a message to them. */
const about = (change: Change, who: Person) =>
  change.kind === 'message.status_changed'
    ? change.message.recipient === who.email
    : ('record' in change && change.record.hash === who.hash) ||
      ('entry' in change && change.entry.key === who.hash) ||
      (change.kind === 'address.erased' && change.hash === who.hash);

const lists = [undefined, 'a', 'marketing'] as const;

/** Everything the API reads about `who`: checks in every list, listings, messages with timelines, allowlist, feed. */
async function readAbout(store: Store, projectId: string, who: Person, messages: readonly MessageIdentity[]) {
  return {
    checks: await Promise.all(lists.map((stream) => store.getSuppressions(projectId, [who.hash], stream, now))),
    listed: await Promise.all(
      lists.map(async (stream) =>
        (await store.listSuppressions(projectId, { limit: 1000, ...(stream === undefined ? {} : { stream }) })).filter(
          (record) => record.hash === who.hash,
        ),
      ),
    ),
    messages: await store.listMessages(projectId, { recipient: who.email, limit: 100 }),
    timelines: await Promise.all(messages.map((identity) => store.getMessage(projectId, identity.key))),
    allowlisted: await store.findAllowlisted(projectId, [{ hash: who.hash, email: who.email }]),
    allowlist: (await store.listAllowlist(projectId, { limit: 1000 })).filter((entry) => entry.key === who.hash),
    changes: (await readFeed(store, projectId, 50)).filter((change) => about(change, who)),
  };
}

/** What stays of everyone: tracking-ID rows and stats are counts (docs/decisions.md, "Erasure"). */
async function readCounts(store: Store, projectId: string) {
  return {
    trackingIds: await store.listTrackingIds(projectId, { limit: 100 }),
    stats: await store.getStats(projectId, { interval: 'hour', from: T0, to: T0 + 24 * HOUR }),
  };
}

export function describeErasureTests(options: StoreConformanceOptions): void {
  const { describe, expect, dump } = options;
  const test = storeTest(options, { changes: {} });
  const runs = Math.max(3, Math.ceil((options.numRuns ?? 50) / 10));

  describe('erasure', () => {
    test('checks still answer suppressed project-wide, without expiry, singly and in batch', async ({ store, projectId }) => {
      const [a, b, c, other] = [person(), person(), person(), person()];
      const cause = causeOf('postmark:e-1', 'postmark', 'm-1', `550 5.1.1 <${a.given.trim()}>: no such user`);
      const bounced: SuppressionRecord = {
        ...suppression(a, 'hard_bounce', T0),
        provenance: { source: 'webhook', at: T0, event: cause },
        expiresAt: now + HOUR,
      };
      await store.addSuppression(projectId, bounced, now);
      await store.addSuppression(projectId, { ...suppression(c, 'manual', T0), expiresAt: now }, T0); // expired at now
      await store.addSuppression(projectId, suppression(other, 'complaint', T0), now);
      const erasures = [a, b, c].map((who) => erasureOf(who.given, now, 'key:admin'));
      const results = [];
      for (const erasure of erasures) results.push(await store.eraseAddress(projectId, erasure));
      expect(results).toStrictEqual([
        { records: [kept(bounced)], messages: 0, changes: 1 },
        { records: [erasures[1]!.suppression], messages: 0, changes: 0 },
        { records: [erasures[2]!.suppression], messages: 0, changes: 1 },
      ]);
      // Long after a's old expiry, in every list, one by one and in a batch with an address never erased.
      const later = now + 100 * HOUR;
      for (const stream of lists) {
        for (const [index, who] of [a, b, c].entries()) {
          const expected = results[index]!.records[0];
          expect(await store.getSuppression(projectId, who.hash, stream, later)).toStrictEqual(expected);
        }
        expect(await store.getSuppressions(projectId, [a.hash, other.hash, b.hash, c.hash], stream, later)).toStrictEqual([
          kept(bounced),
          suppression(other, 'complaint', T0),
          erasures[1]!.suppression,
          erasures[2]!.suppression,
        ]);
      }
      expect(kept(bounced)).toMatchObject({ email: erasedEmail(a.hash), provenance: { event: { diagnostic: null } } });
    });

    test('streams’ records stay with the placeholder email; the allowlist entry goes', async ({ store, projectId }) => {
      const [a, other] = [person(), person()];
      const marketing = { ...suppression(a, 'manual', T0), stream: 'marketing', expiresAt: now + HOUR };
      const digest = { ...suppression(a, 'complaint', T0 + 1), stream: 'a' };
      await store.mergeSuppressions(projectId, [marketing, digest], now);
      for (const who of [a, other]) await store.addAllowlistEntry(projectId, { key: who.hash, entry: who.email, createdAt: now });
      const erasure = erasureOf(a.given, now);
      expect(await store.eraseAddress(projectId, erasure)).toStrictEqual({
        records: [erasure.suppression, kept(digest), kept(marketing)],
        messages: 0,
        changes: 3,
      });
      expect(await store.listSuppressions(projectId, { stream: 'marketing', limit: 10 })).toStrictEqual([kept(marketing)]);
      expect(kept(marketing).expiresAt).toBe(now + HOUR);
      expect(await store.listAllowlist(projectId, { limit: 10 })).toStrictEqual([{ key: other.hash, entry: other.email, createdAt: now }]);
      expect(
        await store.findAllowlisted(
          projectId,
          [a, other].map(({ hash, email }) => ({ hash, email })),
        ),
      ).toStrictEqual([false, true]);
    });

    test('messages, timelines and dedup keys go; the feed forgets it and records the erasure; counts stay; idempotent', async ({
      store,
      projectId,
    }) => {
      const model = createStoreModel({ changes: {} });
      const [a, other] = [person(), person()];
      const [mine, theirs] = [messageOf(a), messageOf(other)];
      const events = [
        [mine, a],
        [theirs, other],
      ].flatMap(([identity, who]) => [
        eventOf(identity as MessageIdentity, who as Person, 'sent', T0, { trackingId: 'promo' }),
        eventOf(identity as MessageIdentity, who as Person, 'bounced', T0 + 1, { trackingId: 'promo', suppress: 'hard_bounce' }),
        dedupOnly(who as Person),
      ]);
      const calls: ((target: Store) => Promise<unknown>)[] = [
        (target) => target.addAllowlistEntry(projectId, { key: other.hash, entry: other.email, createdAt: now }, 'key:ops'),
        (target) => target.applyEvents(projectId, events, { now }),
        (target) => target.addAllowlistEntry(projectId, { key: a.hash, entry: a.email, createdAt: now }, 'key:ops'),
      ];
      for (const call of calls) expect(await call(store)).toStrictEqual(await call(model));
      const counts = await readCounts(store, projectId);
      const others = await readAbout(store, projectId, other, [theirs]);
      const erasure = erasureOf(a.given, now, 'key:admin');
      const result = await store.eraseAddress(projectId, erasure);
      expect(result).toStrictEqual(await model.eraseAddress(projectId, erasure));
      // a's added, two status changes and allowlisting; the other is allowlisted, so its bounce did not suppress.
      expect(result).toMatchObject({ messages: 1, changes: 4 });
      expect(await store.getMessage(projectId, mine.key)).toBeUndefined();
      expect(await store.listMessages(projectId, { recipient: a.email, limit: 10 })).toStrictEqual([]);
      expect(await readAbout(store, projectId, other, [theirs])).toStrictEqual(others);
      expect(await readCounts(store, projectId)).toStrictEqual(counts);
      const feed = await readFeed(store, projectId, 3);
      expect(feed).toEqual(await readFeed(model, projectId));
      expect(feed.filter((change) => about(change, a))).toStrictEqual([
        { seq: 8, kind: 'address.erased', at: now, actor: 'key:admin', hash: a.hash, ...result },
      ]);
      // Again: nothing more goes, the state is the same, and another erasure is recorded.
      const again = await store.eraseAddress(projectId, { ...erasure, now: now + 1 });
      expect(again).toStrictEqual({ records: result.records, messages: 0, changes: 0 });
      expect(await model.eraseAddress(projectId, { ...erasure, now: now + 1 })).toStrictEqual(again);
      expect(await readFiltered(store, projectId, 2, { hash: a.hash })).toStrictEqual(
        (await readFeed(model, projectId)).filter((change) => about(change, a)),
      );
      expect(await readAbout(store, projectId, other, [theirs])).toStrictEqual(others);
      // The erased events' dedup keys went: the same events are new data now. The other's are still known.
      const replay: ((target: Store) => Promise<unknown>)[] = [
        (target) => target.applyEvents(projectId, [dedupOnly(a), dedupOnly(other)], { now }),
      ];
      for (const call of replay) expect(await call(store)).toStrictEqual(await call(model));
      expect(await store.applyEvents(projectId, [dedupOnly(other)], { now })).toStrictEqual(['duplicate']);
    });

    // Many addresses, each with messages, events (diagnostics and dedup keys embedding it), suppressions
    // in several lists and maybe an allowlist entry: erasing one leaves everything the API reads about the
    // others as it was, answers as the model does, and (with `dump`) leaves no form of it in the store.
    test(
      dump === undefined
        ? 'erasing one of many addresses leaves the others as they were (no dump given: what the store holds is not searched)'
        : 'erasing one of many addresses leaves the others as they were, and no form of it anywhere in the store’s dump',
      async ({ store }) => {
        const plan = fc.record({
          people: fc.array(
            fc.record({
              lists: fc.subarray([...lists]),
              allowlisted: fc.boolean(),
              messages: fc.integer({ min: 0, max: 2 }),
              outcome: fc.constantFrom(null, 'hard_bounce' as const, 'complaint' as const),
              dedupOnly: fc.boolean(),
              trackingId: fc.constantFrom(null, 'promo', 'news'),
              expiring: fc.boolean(),
            }),
            { minLength: 2, maxLength: 4 },
          ),
          erase: fc.nat(),
          twice: fc.boolean(),
        });
        await fc.assert(
          fc.asyncProperty(plan, async ({ people, erase, twice }) => {
            const model = createStoreModel({ changes: {} });
            const projectId = randomProjectId();
            const everyone = people.map((shape) => ({ shape, who: person(), messages: [] as MessageIdentity[] }));
            const writes: ((target: Store) => Promise<unknown>)[] = [];
            for (const { shape, who, messages } of everyone) {
              for (const stream of shape.lists)
                writes.push((target) =>
                  target.addSuppression(
                    projectId,
                    {
                      ...suppression(who, 'manual', T0),
                      provenance: { source: 'api', at: T0 },
                      ...(stream === undefined ? {} : { stream }),
                      ...(shape.expiring ? { expiresAt: now + HOUR } : {}),
                    },
                    now,
                    'key:ops',
                  ),
                );
              if (shape.allowlisted)
                writes.push((target) =>
                  target.addAllowlistEntry(projectId, { key: who.hash, entry: who.email, createdAt: now }, 'key:ops'),
                );
              const events: StoredEvent[] = [];
              for (let index = 0; index < shape.messages; index++) {
                const identity = messageOf(who);
                messages.push(identity);
                const { trackingId } = shape;
                events.push(eventOf(identity, who, 'sent', T0 + index, { trackingId }));
                if (shape.outcome !== null)
                  events.push(
                    eventOf(identity, who, shape.outcome === 'hard_bounce' ? 'bounced' : 'complained', T0 + HOUR + index, {
                      trackingId,
                      suppress: shape.outcome,
                    }),
                  );
              }
              if (shape.dedupOnly) events.push(dedupOnly(who));
              writes.push((target) => target.applyEvents(projectId, events, { now }));
            }
            for (const write of writes) expect(await write(store)).toStrictEqual(await write(model));
            const gone = everyone[erase % everyone.length]!;
            const rest = everyone.filter((one) => one !== gone);
            const read = () => Promise.all(rest.map(({ who, messages }) => readAbout(store, projectId, who, messages)));
            const before = await read();
            const counts = await readCounts(store, projectId);
            const erasure = erasureOf(gone.who.given, now, 'key:admin');
            for (let time = 0; time < (twice ? 2 : 1); time++)
              expect(await store.eraseAddress(projectId, erasure)).toStrictEqual(await model.eraseAddress(projectId, erasure));
            expect(await read()).toStrictEqual(before);
            expect(await readCounts(store, projectId)).toStrictEqual(counts);
            expect(await readFeed(store, projectId, 4)).toEqual(await readFeed(model, projectId));
            const blocked = await store.getSuppressions(projectId, [gone.who.hash], undefined, now + 100 * HOUR);
            expect(blocked).toStrictEqual([expect.objectContaining({ email: erasedEmail(gone.who.hash) })]);
            expect(blocked[0]!.expiresAt).toBeUndefined();
            expect(await store.listMessages(projectId, { recipient: gone.who.email, limit: 10 })).toStrictEqual([]);
            if (dump !== undefined) {
              const text = await dump(store);
              for (const form of erasure.forms) expect(text.includes(form), `the dump holds ${JSON.stringify(form)}`).toBe(false);
            }
          }),
          { numRuns: runs },
        );
      },
    );
  });
}
