// Label sets stay bounded whatever arrives: random paths, methods, query strings and bodies through the
// HTTP handler, providers' webhook bodies, events with random addresses and tracking IDs. Every label
// value comes from the route table, the methods, the statuses, the vocabulary or the store's operation
// names, and none holds an address or a tracking ID (docs/metrics.md).
import { createHttpHandler, createMailwarden, createMemoryStore, providers, type DeliveryEvent } from '@mailwarden/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { createPrometheusMetrics } from '../src/index.js';

const apiKey = 'key-acme';
const metrics = createPrometheusMetrics({ defaultMetrics: false });
const mailwarden = createMailwarden({
  store: createMemoryStore({ changes: {} }),
  metrics,
  alerts: { window: 10, minMessages: 1, trackingIds: true },
  webhooks: { auth: { acme: { postmark: { basic: [{ username: 'postmark', password: 'secret' }] } } } },
});
const handler = createHttpHandler(mailwarden, { apiKeys: { [apiKey]: 'acme' }, logger: { error() {} } });

/** What a tracking ID or an address looks like here: a marker no label value may contain. */
const trackingIdArbitrary = fc.stringMatching(/^[a-z0-9]{6,12}$/).map((id) => `trk${id}`);
const addressArbitrary = fc.emailAddress();

const segmentArbitrary = fc.oneof(
  fc.constantFrom('projects', 'acme', 'other', 'suppressions', 'check', 'bulk', 'messages', 'tracking-ids', 'stats', 'changes'),
  fc.constantFrom('alerts', 'streams', 'paused', 'pause', 'outbound-webhooks', 'webhooks', 'unsubscribe', 'openapi.json', 'dashboard'),
  fc.constantFrom(...providers, 'ses-eventbridge', 'no-such-provider'),
  addressArbitrary.map(encodeURIComponent),
  trackingIdArbitrary,
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const requestArbitrary = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), fc.stringMatching(/^[A-Za-z]{1,8}$/)),
  segments: fc.array(segmentArbitrary, { minLength: 0, maxLength: 6 }),
  query: fc.oneof(
    fc.constant(''),
    addressArbitrary.map((email) => `email=${encodeURIComponent(email)}`),
    fc.string({ maxLength: 20 }),
  ),
  body: fc.oneof(
    fc.constant(undefined),
    fc.json(),
    addressArbitrary.map((email) => JSON.stringify({ email, reason: 'manual' })),
  ),
});
const eventArbitrary = fc.record({
  provider: fc.constantFrom(...providers),
  type: fc.constantFrom('delivered', 'bounced', 'complained', 'opened', 'unsubscribed'),
  recipient: addressArbitrary,
  trackingId: fc.option(trackingIdArbitrary, { nil: null }),
  messageId: trackingIdArbitrary,
  eventKey: fc.uuid(),
});

const allowedMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other']);
let allowedRoutes: Set<string>;
const seen = { addresses: new Set<string>(), trackingIds: new Set<string>() };

/** Every label value of every metric now: each from a bounded set, none an address or a tracking ID. */
async function expectBoundedLabels(): Promise<number> {
  let labelSets = 0;
  for (const family of await metrics.registry.getMetricsAsJSON()) {
    for (const { labels } of family.values) {
      labelSets++;
      for (const [name, value] of Object.entries(labels)) {
        const text = String(value);
        expect(text, `${family.name}{${name}}`).not.toContain('@');
        expect(text, `${family.name}{${name}}`).not.toMatch(/trk[a-z0-9]/);
        if (name === 'route') expect(allowedRoutes.has(text), text).toBe(true);
        if (name === 'method') expect(allowedMethods.has(text), text).toBe(true);
        if (name === 'status') expect(text).toMatch(/^[1-5]\d\d$/);
      }
    }
  }
  return labelSets;
}

test('label values come from bounded sets under fuzzed requests and events', async () => {
  const openapi = await handler.handle({ method: 'GET', path: '/openapi.json', query: '', headers: {} });
  allowedRoutes = new Set([...Object.keys(JSON.parse(openapi.body as string).paths), 'unmatched', '/dashboard']);

  await fc.assert(
    fc.asyncProperty(requestArbitrary, fc.array(eventArbitrary, { maxLength: 3 }), async (request, events) => {
      const response = await handler.handle({
        method: request.method,
        path: `/${request.segments.join('/')}`,
        query: request.query,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        ...(request.body === undefined ? {} : { body: new TextEncoder().encode(request.body) }),
      });
      expect(response.status).toBeLessThan(500);
      const occurredAt = new Date('2026-11-20T10:00:00Z');
      await mailwarden.applyEvents(
        'acme',
        events.map((event) => ({ ...event, occurredAt }) as DeliveryEvent),
      );
      for (const event of events) {
        seen.addresses.add(event.recipient);
        if (event.trackingId !== null) seen.trackingIds.add(event.trackingId);
      }
      await expectBoundedLabels();
    }),
    { numRuns: 150 },
  );
  await mailwarden.store.getAlertWindows('acme', [null, ...seen.trackingIds]);
  const labelSets = await expectBoundedLabels();
  // Bounded by the vocabulary, not by what arrived: far fewer series than the addresses and tracking IDs seen.
  expect(seen.addresses.size).toBeGreaterThan(100);
  expect(labelSets).toBeLessThan(allowedRoutes.size * allowedMethods.size * 10 + 200);
});
