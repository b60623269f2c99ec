import { createMailwarden, createMemoryStore, providers, type DeliveryEvent, type Store } from '@mailwarden/core';
import fc from 'fast-check';
import { randomProjectId, storeTest, type StoreConformanceOptions } from './harness.js';

const T0 = Date.UTC(2026, 0, 1);

/** Single code units of every kind: lone surrogates, NUL and other controls, separators, the last ones. */
const awkwardUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
  fc.constantFrom(
    '\u0000',
    '\u0001',
    '\t',
    '\u007f',
    '\u0085',
    '\u2028',
    '\u202e',
    '\ud800',
    '\udbff',
    '\udc00',
    '\udfff',
    '\ufeff',
    '\uffff',
  ),
  fc.constantFrom('\u{1f4ec}', '\u{10ffff}', '\u{1f469}\u{1f3fd}\u200d\u{1f4bb}'),
  fc.constantFrom('a', 'b', '-', '%', '\\', '"', "'", ' '),
);

/** Text a provider's payload may carry: mostly plain, often with something a store could trip over. */
const hostileText = fc.string({ unit: awkwardUnit, maxLength: 16 });

/** Tracking IDs at and just over the limit, of one-unit and two-unit code points. */
const longTrackingId = fc.constantFrom(
  'x'.repeat(128),
  '\u{1f4ec}'.repeat(128),
  'x'.repeat(129),
  '\u{1f4ec}'.repeat(129),
  `${'x'.repeat(127)}\ud800`,
);

const hostileEvent: fc.Arbitrary<DeliveryEvent> = fc
  .record({
    // Every provider, the eleven of issue 24 included: a store keys and lists messages by it.
    provider: fc.constantFrom(...providers),
    type: fc.constantFrom('delivered', 'bounced', 'complained', 'deferred', 'opened'),
    bounceClass: fc.constantFrom('hard', 'soft'),
    // A few plain ids so events meet on one message; the rest anything.
    messageId: fc.oneof(fc.constantFrom('m1', 'm2', null), hostileText),
    recipient: fc.oneof(
      fc.constantFrom('a@example.com', 'B@Example.com'),
      hostileText.map((local) => `${local}@example.com`),
    ),
    trackingId: fc.oneof(fc.constantFrom(null, 'promo', 'PROMO'), hostileText, longTrackingId),
    occurredAt: fc.integer({ min: 0, max: 100 }).map((seconds) => new Date(T0 + seconds * 1000)),
    eventKey: fc.oneof(fc.uuid(), hostileText),
    // What the provider said, as an application might pass it: kept in the timeline, or the event refused.
    details: fc.option(
      fc.record(
        {
          smtpStatus: fc.constantFrom('5.1.1', '550', '5.1.1 ', 'x'),
          diagnostic: hostileText,
          bounceClassification: hostileText,
          rejectReason: hostileText,
          url: hostileText,
          userAgent: hostileText,
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    ),
  })
  .map(
    ({ bounceClass, details, ...event }) =>
      ({
        ...event,
        ...(event.type === 'bounced' ? { bounceClass } : {}),
        ...(details === undefined ? {} : { details }),
      }) as DeliveryEvent,
  );

/** Everything a project holds, read back in full. */
async function contents(store: Store, projectId: string) {
  const messages = await store.listMessages(projectId, { limit: 10_000 });
  return {
    messages,
    timelines: await Promise.all(messages.map((message) => store.getMessage(projectId, message.key))),
    trackingIds: await store.listTrackingIds(projectId, { limit: 10_000 }),
    suppressions: await store.listSuppressions(projectId, { limit: 10_000 }),
  };
}

/**
 * Events with text no store can keep (lone surrogates, U+0000) are refused before any store sees them,
 * per event, and everything else is kept exactly: so every store answers a batch and stores it as the
 * memory store does, and one bad string never fails the batch around it.
 */
export function describeHostileEventTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options);

  describe('hostile event text', () => {
    test('any batch of events gives the memory store’s answer and stored state', async ({ store }) => {
      await fc.assert(
        fc.asyncProperty(fc.array(hostileEvent, { maxLength: 12 }), async (events) => {
          const projectId = randomProjectId();
          const reference = createMemoryStore();
          // With personal data kept, so every detail reaches the store.
          const timeline = { personalData: true };
          const expected = await createMailwarden({ store: reference, timeline }).applyEvents(projectId, events);
          const actual = await createMailwarden({ store, timeline }).applyEvents(projectId, events);
          expect(actual).toStrictEqual(expected);
          expect(await contents(store, projectId)).toStrictEqual(await contents(reference, projectId));
        }),
        { numRuns: options.numRuns ?? 50 },
      );
    });

    test('a lone surrogate or U+0000 in an id skips that event with a warning; the rest is stored', async ({ store, projectId }) => {
      const good = (i: number): DeliveryEvent => ({
        provider: 'sparkpost',
        type: 'delivered',
        messageId: `ok-${i}`,
        recipient: `r${i}@example.com`,
        trackingId: 'launch',
        occurredAt: new Date(T0 + i),
        eventKey: `ok-${i}`,
      });
      const result = await createMailwarden({ store }).applyEvents(projectId, [
        good(1),
        { ...good(2), messageId: 'm\ud800x' },
        { ...good(3), eventKey: 'k\udc00' },
        { ...good(4), messageId: 'm\u0000' },
        { ...good(5), trackingId: 't\ud800' },
        good(6),
      ]);
      expect(result.accepted).toBe(3);
      expect(result.skipped).toBe(3);
      expect(result.warnings.map(({ index, code }) => [index, code])).toStrictEqual([
        [1, 'invalid_event'],
        [2, 'invalid_event'],
        [3, 'invalid_event'],
        [4, 'invalid_tracking_id'],
      ]);
      const stored = await store.listMessages(projectId, { limit: 10 });
      expect(stored.map((message) => [message.messageId, message.trackingId])).toStrictEqual([
        ['ok-6', 'launch'],
        ['ok-5', null],
        ['ok-1', 'launch'],
      ]);
    });

    test('a batch as large as a 10 MiB webhook, of the longest ids, is stored whole', async ({ store, projectId }) => {
      // 6 000 events of a 1 024-character message id and a 128-emoji tracking ID: about 9 MiB of text.
      const trackingIds = ['\u{1f4ec}'.repeat(128), `${'x'.repeat(127)}\u{10ffff}`, '\u202eevil'];
      const events: DeliveryEvent[] = Array.from({ length: 6000 }, (_, i) => ({
        provider: 'sendgrid',
        type: i % 10 === 0 ? 'bounced' : 'delivered',
        ...(i % 10 === 0 ? { bounceClass: 'hard' as const } : {}),
        messageId: `${String(i).padStart(6, '0')}${'\u00e9'.repeat(1018)}`,
        recipient: `r${i}@example.com`,
        trackingId: trackingIds[i % trackingIds.length]!,
        occurredAt: new Date(T0 + i),
        eventKey: `big-${i}`,
      }));
      const result = await createMailwarden({ store }).applyEvents(projectId, events);
      expect([result.accepted, result.skipped, result.warnings]).toStrictEqual([6000, 0, []]);
      const rows = await store.listTrackingIds(projectId, { limit: 10 });
      expect(rows.map((row) => [row.trackingId, row.messages]).sort()).toStrictEqual(trackingIds.map((id) => [id, 2000]).sort());
      expect((await store.listSuppressions(projectId, { limit: 1000 })).length).toBe(600);
    });
  });
}
