import type { Store } from '@mailwarden/core';
import type { AlertChange, ApplyEventsOptions, Change, StoredAlertRule, StoredEvent } from '@mailwarden/core/store';
import { storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { feedEvent, messageTo, readFeed } from './feed.js';
import { addresses, HOUR, T0, type MessageIdentity } from './records.js';

/** SES's review levels on a small window: 5 % bounces, 0.1 % complaints, resolving below 80 % of each. */
const rule: StoredAlertRule = {
  window: 100,
  minMessages: 20,
  bounce: { firePpm: 50_000, resolvePpm: 40_000 },
  complaint: { firePpm: 1_000, resolvePpm: 800 },
  trackingIds: false,
  pause: [],
};

const now = T0 + 10 * HOUR;

/** Fresh messages, each to an address of its own. */
const identities = (count: number): MessageIdentity[] => addresses(count).map(messageTo);

/** A delivered message each: it enters the windows. */
const delivered = (messages: readonly MessageIdentity[], trackingId: string | null = null): StoredEvent[] =>
  messages.map((identity, index) => feedEvent(identity, 'delivered', T0 + index, { trackingId }));

const alertsOf = (changes: readonly Change[]) =>
  changes.filter((change): change is AlertChange => change.kind === 'alert.bounce_rate' || change.kind === 'alert.complaint_rate');

/** An alert change without its seq: what a test states. */
const crossing = (
  kind: AlertChange['kind'],
  firing: boolean,
  messages: number,
  count: number,
  thresholdPpm: number,
  trackingId: string | null = null,
) => ({
  kind,
  at: now,
  trackingId,
  firing,
  messages,
  count,
  thresholdPpm,
});

export function describeAlertTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const withoutFeed = storeTest(options);

  /** The same batches on the store and the model: the same answers, feeds and windows. */
  const both = async (
    store: Store,
    projectId: string,
    batches: readonly StoredEvent[][],
    applyOptions: ApplyEventsOptions,
    scopes: (string | null)[],
  ) => {
    const model = createStoreModel({ changes: {} });
    for (const batch of batches)
      expect(await store.applyEvents(projectId, batch, applyOptions)).toStrictEqual(
        await model.applyEvents(projectId, batch, applyOptions),
      );
    expect(await readFeed(store, projectId, 50)).toEqual(await readFeed(model, projectId, 50));
    expect(await store.getAlertWindows(projectId, scopes)).toStrictEqual(await model.getAlertWindows(projectId, scopes));
  };

  describe('deliverability alerts', () => {
    test('a bounce rate crossing 5 % fires once, at the minimum of messages; it resolves once, below 4 %', async ({ store, projectId }) => {
      const messages = identities(26);
      const options = { now, alerts: rule };
      await both(
        store,
        projectId,
        [
          // 20 messages, no bounce; then a hard bounce of the third: 1 of 20 is 5 %, exactly the threshold.
          delivered(messages.slice(0, 20)),
          [feedEvent(messages[2]!, 'bounced', T0 + 50, { key: 'alerts:bounce' })],
          // A second event of the same message counts nothing more.
          [feedEvent(messages[2]!, 'bounced', T0 + 51, { key: 'alerts:again' })],
          // 1 of 21 to 1 of 25 is at least 4 %: still firing; 1 of 26 resolves it.
          delivered(messages.slice(20, 26)),
        ],
        options,
        [null],
      );
      expect(alertsOf(await readFeed(store, projectId, 50))).toMatchObject([
        crossing('alert.bounce_rate', true, 20, 1, 50_000),
        crossing('alert.bounce_rate', false, 26, 1, 40_000),
      ]);
      expect(await store.getAlertWindows(projectId, [null, 'never'])).toStrictEqual([
        { trackingId: null, messages: 26, bounced: 1, complained: 0, bounceFiring: false, complaintFiring: false },
        undefined,
      ]);
    });

    test('no crossing below the minimum of messages, however high the rate; a message that bounced at entry counts', async ({
      store,
      projectId,
    }) => {
      const messages = identities(20);
      const options = { now, alerts: rule };
      const bounced = messages.slice(0, 19).map((identity, index) => feedEvent(identity, 'bounced', T0 + index));
      await both(store, projectId, [bounced, delivered(messages.slice(19))], options, [null]);
      expect(alertsOf(await readFeed(store, projectId, 50))).toMatchObject([crossing('alert.bounce_rate', true, 20, 19, 50_000)]);
    });

    test('a complaint rate fires once; it resolves when the complained message leaves the window', async ({ store, projectId }) => {
      const messages = identities(101);
      const options = { now, alerts: rule };
      await both(
        store,
        projectId,
        [
          delivered(messages.slice(0, 20)),
          [feedEvent(messages[0]!, 'complained', T0 + 50)],
          // Up to 100 messages the complaint stays in; the 101st pushes the oldest, the complained one, out.
          delivered(messages.slice(20, 100)),
          delivered(messages.slice(100)),
        ],
        options,
        [null],
      );
      expect(alertsOf(await readFeed(store, projectId, 500))).toMatchObject([
        crossing('alert.complaint_rate', true, 20, 1, 1_000),
        crossing('alert.complaint_rate', false, 100, 0, 800),
      ]);
    });

    test('with trackingIds, each tracking ID has a window of its own beside the project’s', async ({ store, projectId }) => {
      const options = { now, alerts: { ...rule, trackingIds: true } };
      const [promo, news] = [identities(20), identities(30)];
      await both(
        store,
        projectId,
        [
          delivered(news, 'news'),
          delivered(promo, 'promo'),
          // 1 of promo's 20 is 5 %; 1 of the project's 50 is 2 %.
          [feedEvent(promo[4]!, 'bounced', T0 + 60, { trackingId: 'promo' })],
        ],
        options,
        [null, 'promo', 'news', 'other'],
      );
      expect(alertsOf(await readFeed(store, projectId, 500))).toMatchObject([crossing('alert.bounce_rate', true, 20, 1, 50_000, 'promo')]);
    });

    test('a crossing up of the project’s window pauses the rule’s streams in the same step; going down resumes none', async ({
      store,
      projectId,
    }) => {
      const options = { now, alerts: { ...rule, pause: ['marketing', 'digest'] } };
      const messages = identities(26);
      await store.pauseStream(projectId, 'digest', T0);
      await store.applyEvents(projectId, delivered(messages.slice(0, 19)), options);
      await store.applyEvents(projectId, [feedEvent(messages[19]!, 'bounced', T0 + 19)], options);
      const changes = await readFeed(store, projectId, 50);
      const up = changes.findIndex((change) => change.kind === 'alert.bounce_rate');
      expect(changes.slice(up - 1)).toMatchObject([
        { kind: 'message.status_changed', to: 'bounced' },
        crossing('alert.bounce_rate', true, 20, 1, 50_000),
        { kind: 'stream.paused', at: now, stream: 'marketing', cause: 'alert.bounce_rate' },
      ]);
      expect(changes[up + 1]!.seq).toBe(changes[up]!.seq + 1);
      await store.applyEvents(projectId, delivered(messages.slice(20)), options);
      expect(alertsOf(await readFeed(store, projectId, 50)).map((change) => change.firing)).toStrictEqual([true, false]);
      expect(await store.listPausedStreams(projectId)).toStrictEqual([
        { stream: 'digest', pausedAt: T0, cause: 'operator' },
        { stream: 'marketing', pausedAt: now, cause: 'alert.bounce_rate' },
      ]);
    });

    // The order law for alerts: the same events split over three instances applying at once. Bounces of
    // messages already in the window only raise the rate, then new messages only lower it: whatever the
    // interleaving, exactly one crossing up and one down, with the same numbers.
    test('the same events over three concurrent instances: exactly one crossing up and one down', async ({ store, projectId }) => {
      const options = { now, alerts: rule };
      const messages = identities(102);
      const first = messages.slice(0, 20);
      const later = messages.slice(20);
      const concurrently = async (events: readonly StoredEvent[]) => {
        const shares = [0, 1, 2].map((share) => events.filter((_, index) => index % 3 === share));
        await Promise.all(
          shares.map(async (share) => {
            for (let start = 0; start < share.length; start += 4)
              await store.applyEvents(projectId, share.slice(start, start + 4), options);
          }),
        );
      };
      await store.applyEvents(projectId, delivered(first), options);
      await concurrently(first.slice(0, 5).map((identity, index) => feedEvent(identity, 'bounced', T0 + 100 + index)));
      await concurrently(delivered(later));
      // 5 of 20 to 5 of 100, then the oldest leave: 3 of 100 resolves (below 4 %).
      expect(alertsOf(await readFeed(store, projectId, 500))).toMatchObject([
        crossing('alert.bounce_rate', true, 20, 1, 50_000),
        crossing('alert.bounce_rate', false, 100, 3, 40_000),
      ]);
      expect(await store.getAlertWindows(projectId, [null])).toStrictEqual([
        { trackingId: null, messages: 100, bounced: 3, complained: 0, bounceFiring: false, complaintFiring: false },
      ]);
    });

    withoutFeed('without the rule no window moves; windows move without a feed', async ({ store, projectId }) => {
      const messages = identities(20);
      await store.applyEvents(projectId, delivered(messages.slice(0, 10)), { now });
      expect(await store.getAlertWindows(projectId, [null])).toStrictEqual([undefined]);
      await store.applyEvents(projectId, delivered(messages.slice(10)), { now, alerts: rule });
      expect(await store.getAlertWindows(projectId, [null])).toStrictEqual([
        { trackingId: null, messages: 10, bounced: 0, complained: 0, bounceFiring: false, complaintFiring: false },
      ]);
    });
  });
}

export function describePausedStreamTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const withoutFeed = storeTest(options);

  describe('paused streams', () => {
    test('pause, list, resume, each once, with their changes', async ({ store, projectId }) => {
      expect(await store.listPausedStreams(projectId)).toStrictEqual([]);
      const marketing = { stream: 'marketing', pausedAt: now, cause: 'operator' as const };
      expect(await store.pauseStream(projectId, 'marketing', now)).toStrictEqual({ paused: marketing, created: true });
      expect(await store.pauseStream(projectId, 'marketing', now + 5)).toStrictEqual({ paused: marketing, created: false });
      await store.pauseStream(projectId, 'a-digest', now + 6);
      expect(await store.listPausedStreams(projectId)).toStrictEqual([
        { stream: 'a-digest', pausedAt: now + 6, cause: 'operator' },
        marketing,
      ]);
      expect(await store.resumeStream(projectId, 'marketing', now + 7)).toStrictEqual(marketing);
      expect(await store.resumeStream(projectId, 'marketing', now + 8)).toBeUndefined();
      expect(await store.listPausedStreams(projectId)).toStrictEqual([{ stream: 'a-digest', pausedAt: now + 6, cause: 'operator' }]);
      expect(await readFeed(store, projectId)).toEqual([
        { seq: 1, kind: 'stream.paused', at: now, stream: 'marketing', cause: 'operator' },
        { seq: 2, kind: 'stream.paused', at: now + 6, stream: 'a-digest', cause: 'operator' },
        { seq: 3, kind: 'stream.resumed', at: now + 7, stream: 'marketing', cause: 'operator' },
      ]);
    });

    withoutFeed('streams pause and resume without a feed too', async ({ store, projectId }) => {
      await store.pauseStream(projectId, 'marketing', now);
      expect(await store.listPausedStreams(projectId)).toStrictEqual([{ stream: 'marketing', pausedAt: now, cause: 'operator' }]);
      expect(await store.resumeStream(projectId, 'marketing', now)).toStrictEqual({
        stream: 'marketing',
        pausedAt: now,
        cause: 'operator',
      });
      expect(await store.listPausedStreams(projectId)).toStrictEqual([]);
    });
  });
}
