// Deliverability alerts in process (docs/core.md, "Alerts"): the rules checked at creation and turned
// into the integers stores compare, the status of a window, and alert rules passed to the store only
// when a project has them.
import {
  checkAlertRules,
  createMailwarden,
  createMemoryStore,
  storedAlertRule,
  type AlertRules,
  type DeliveryEvent,
  type Store,
} from '@mailwarden/core';
import type { ApplyEventsOptions } from '@mailwarden/core/store';
import { alertStatusSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.UTC(2026, 10, 1, 9);

/** `n` messages, one event each: the first `bounced` hard-bounce, the rest are delivered. */
function messages(n: number, bounced: number, overrides: Partial<DeliveryEvent> = {}, from = 0): DeliveryEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    provider: 'postmark' as const,
    eventKey: `e-${from + i}`,
    type: i < bounced ? ('bounced' as const) : ('delivered' as const),
    ...(i < bounced ? { bounceClass: 'hard' as const } : {}),
    messageId: `m-${from + i}`,
    recipient: `r${from + i}@example.com`,
    trackingId: 'newsletter',
    occurredAt: new Date(T0),
    ...overrides,
  }));
}

describe('alert rules', () => {
  test('defaults: SES review levels over the last 1 000 messages, resolving at 80 %', () => {
    expect(storedAlertRule({})).toEqual({
      window: 1000,
      minMessages: 100,
      bounce: { firePpm: 50_000, resolvePpm: 40_000 },
      complaint: { firePpm: 1000, resolvePpm: 800 },
      trackingIds: false,
      pause: [],
    });
    expect(storedAlertRule({ window: 20, bounceRate: 10, resolveRatio: 1, trackingIds: true, pauseStreams: ['a', 'a', 'b'] })).toEqual({
      window: 20,
      // The default minimum is never more than the window.
      minMessages: 20,
      bounce: { firePpm: 100_000, resolvePpm: 100_000 },
      complaint: { firePpm: 1000, resolvePpm: 1000 },
      trackingIds: true,
      pause: ['a', 'b'],
    });
  });

  test.each([
    [{ window: 5 }, 'alerts.window'],
    [{ window: 1.5 }, 'alerts.window'],
    [{ window: 100, minMessages: 101 }, 'alerts.minMessages'],
    [{ minMessages: 0 }, 'alerts.minMessages'],
    [{ bounceRate: 0 }, 'alerts.bounceRate'],
    [{ complaintRate: 101 }, 'alerts.complaintRate'],
    [{ bounceRate: '5' }, 'alerts.bounceRate'],
    [{ resolveRatio: 0 }, 'alerts.resolveRatio'],
    [{ resolveRatio: 1.2 }, 'alerts.resolveRatio'],
    [{ trackingIds: 'yes' }, 'alerts.trackingIds'],
    [{ pauseStreams: 'marketing' }, 'alerts.pauseStreams'],
    [{ pauseStreams: ['ok', 'Not OK'] }, 'alerts.pauseStreams[1]'],
    [{ bounceRates: 5 }, 'alerts.bounceRates'],
  ])('%j is refused with a RangeError naming %s', (rules, field) => {
    expect(() => checkAlertRules(rules as AlertRules)).toThrow(RangeError);
    expect(() => checkAlertRules(rules as AlertRules)).toThrow(`${field} `);
  });

  test('checked at creation for an object, when first used for a lookup', async () => {
    expect(() => createMailwarden({ alerts: { bounceRate: 0 } })).toThrow('alerts.bounceRate');
    const mailwarden = createMailwarden({ alerts: (projectId) => (projectId === 'bad' ? { window: 1 } : {}) });
    await expect(mailwarden.applyEvents('bad', messages(1, 0))).rejects.toThrow('alerts("bad").window');
    await expect(mailwarden.alerts.status('good')).resolves.toMatchObject({ window: 1000 });
  });
});

describe('alerts.status', () => {
  test('without rules for the project: alerts_not_configured', async () => {
    await expectMailwardenError(() => createMailwarden().alerts.status('acme'), 'alerts_not_configured');
    const some = createMailwarden({ alerts: (projectId) => (projectId === 'acme' ? {} : undefined) });
    await expectMailwardenError(() => some.alerts.status('other'), 'alerts_not_configured');
    // No window per tracking ID unless asked for.
    await expectMailwardenError(() => some.alerts.status('acme', { trackingId: 'newsletter' }), 'alerts_not_configured');
  });

  test('an empty window: nothing counted, nothing firing, the thresholds as fractions', async () => {
    const status = await createMailwarden({ alerts: {} }).alerts.status('acme');
    expect(status).toEqual({
      window: 1000,
      min_messages: 100,
      tracking_id: null,
      messages: 0,
      bounce: { count: 0, rate: 0, threshold: 0.05, resolve_below: 0.04, firing: false },
      complaint: { count: 0, rate: 0, threshold: 0.001, resolve_below: 0.0008, firing: false },
      paused_streams: [],
    });
    expect(alertStatusSchema.parse(status)).toEqual(status);
  });

  test("a window's rates against its thresholds, per tracking ID too, with the streams the crossing paused", async () => {
    const mailwarden = createMailwarden({
      store: createMemoryStore(),
      now: () => T0,
      alerts: { window: 10, minMessages: 10, bounceRate: 20, trackingIds: true, pauseStreams: ['marketing'] },
    });
    await mailwarden.applyEvents('acme', messages(10, 2));
    const status = await mailwarden.alerts.status('acme');
    expect(status).toMatchObject({
      messages: 10,
      bounce: { count: 2, rate: 0.2, threshold: 0.2, resolve_below: 0.16, firing: true },
      complaint: { count: 0, rate: 0, firing: false },
      paused_streams: [{ stream: 'marketing', paused_at: new Date(T0).toISOString(), cause: 'alert.bounce_rate' }],
    });
    expect(await mailwarden.alerts.status('acme', { trackingId: 'newsletter' })).toMatchObject({
      tracking_id: 'newsletter',
      messages: 10,
      bounce: { count: 2, firing: true },
    });
    expect(await mailwarden.alerts.status('acme', { trackingId: 'other' })).toMatchObject({ tracking_id: 'other', messages: 0 });
    // The paused stream blocks its sends until an operator resumes it.
    expect((await mailwarden.filterSuppressed('acme', ['x@example.com'], { stream: 'marketing' })).blocked).toEqual([
      { email: 'x@example.com', reason: 'stream_paused' },
    ]);
  });

  test('alert rules go to the store only for a project that has them', async () => {
    const seen: (ApplyEventsOptions | undefined)[] = [];
    const inner = createMemoryStore();
    const store: Store = {
      ...inner,
      applyEvents(projectId, events, options) {
        seen.push(options);
        return inner.applyEvents(projectId, events, options);
      },
    };
    const mailwarden = createMailwarden({
      store,
      now: () => T0,
      alerts: (projectId) => (projectId === 'acme' ? { window: 50 } : undefined),
    });
    await mailwarden.applyEvents('acme', messages(1, 0));
    await mailwarden.applyEvents('other', messages(1, 0));
    expect(seen[0]?.alerts).toMatchObject({ window: 50 });
    expect(seen[1]).toEqual({ now: T0 });
  });
});
