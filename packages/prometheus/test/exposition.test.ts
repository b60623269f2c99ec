// `/metrics` as a scraper reads it: traffic through a real mailwarden mounted with the Express binding,
// then `text()` parsed as the Prometheus text format, every metric of docs/metrics.md with its type
// and labels.
import type { AddressInfo } from 'node:net';
import { createMailwarden, createMemoryStore } from '@mailwarden/core';
import { postmarkWebhook } from '@mailwarden/core/testing';
import { createMailwardenRouter } from '@mailwarden/express';
import express from 'express';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import { createPrometheusMetrics } from '../src/index.js';

const credentials = { username: 'postmark', password: 'secret' };
const apiKey = 'key-acme';

/** Every metric mailwarden records, its type and its labels (docs/metrics.md). */
const documented = {
  mailwarden_http_requests_total: ['COUNTER', ['route', 'method', 'status']],
  mailwarden_http_request_duration_seconds: ['HISTOGRAM', ['route', 'method']],
  mailwarden_events_received_total: ['COUNTER', ['provider', 'type']],
  mailwarden_webhook_verification_failures_total: ['COUNTER', ['provider']],
  mailwarden_suppressions_added_total: ['COUNTER', ['reason', 'source']],
  mailwarden_suppressions_removed_total: ['COUNTER', ['reason']],
  mailwarden_store_errors_total: ['COUNTER', ['operation']],
  mailwarden_store_operation_duration_seconds: ['HISTOGRAM', ['operation']],
  mailwarden_change_feed_lag_changes: ['GAUGE', ['endpoint']],
  mailwarden_outbound_lag_seconds: ['GAUGE', ['endpoint']],
  mailwarden_outbound_deliveries_total: ['COUNTER', ['result']],
  mailwarden_hook_calls_dropped_total: ['COUNTER', []],
  mailwarden_alert_rate: ['GAUGE', ['kind']],
} as const;

/** The label names of each series of histogram `name`, from its `_count` lines. */
function histogramLabelNames(text: string, name: string): string[][] {
  const lines = text.split('\n').filter((line) => line.startsWith(`${name}_count{`));
  return lines.map((line) => [...line.matchAll(/(\w+)="(?:[^"\\]|\\.)*"/g)].map(([, key]) => key!));
}

async function withExpress<T>(metrics: ReturnType<typeof createPrometheusMetrics>, run: (url: string) => Promise<T>): Promise<T> {
  const mailwarden = createMailwarden({
    store: createMemoryStore({ changes: {} }),
    metrics,
    alerts: { window: 10, minMessages: 1 },
    webhooks: { auth: { acme: { postmark: { basic: [credentials] } } } },
  });
  const app = express();
  app.use('/mailwarden', createMailwardenRouter({ mailwarden, apiKeys: { [apiKey]: 'acme' }, logger: { error() {} } }));
  app.get('/metrics', async (_request, response) => {
    response.type(metrics.contentType).send(await metrics.text());
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await mailwarden.close();
  }
}

describe('the exposition', () => {
  test('parses as the Prometheus text format, with every documented metric, its type and its labels', async () => {
    const metrics = createPrometheusMetrics();
    const text = await withExpress(metrics, async (url) => {
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${url}/mailwarden${path}`, {
          ...init,
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...init.headers },
        });
      for (const type of ['bounced', 'delivered'] as const) {
        const webhook = postmarkWebhook({ auth: { basic: credentials }, events: [{ type, recipient: `${type}@example.com` }] });
        const posted = await fetch(`${url}/mailwarden/projects/acme/webhooks/postmark`, {
          method: 'POST',
          headers: webhook.headers,
          body: webhook.rawBody,
        });
        expect(posted.status).toBe(200);
      }
      const forged = postmarkWebhook({
        auth: { basic: { ...credentials, password: 'wrong' } },
        events: [{ type: 'delivered', recipient: 'x@example.com' }],
      });
      expect(
        (
          await fetch(`${url}/mailwarden/projects/acme/webhooks/postmark`, {
            method: 'POST',
            headers: forged.headers,
            body: forged.rawBody,
          })
        ).status,
      ).toBe(401);
      expect(
        (await api('/projects/acme/suppressions', { method: 'POST', body: JSON.stringify({ email: 'ana@example.com' }) })).status,
      ).toBe(201);
      expect((await api('/projects/acme/suppressions')).status).toBe(200);
      expect((await api('/projects/acme/alerts')).status).toBe(200);
      expect((await api('/nowhere/ana@example.com')).status).toBe(404);
      // The gauges of outbound delivery are set by the engine; here, by hand, as it would.
      metrics.outboundLag('acme', 'crm', 3, 1.5);
      metrics.outboundDelivery('crm', 'delivered');
      metrics.hookCallsDropped(1);
      const scraped = await fetch(`${url}/metrics`);
      expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return scraped.text();
    });

    const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
    for (const [name, [type, labels]] of Object.entries(documented)) {
      const family = families.get(name);
      expect(family, name).toBeDefined();
      expect(family!.type, name).toBe(type);
      expect(family!.help, name).not.toBe('');
      // The parser folds a histogram's series into one, labels dropped: its labels are read off its `_count` lines.
      const labelSets =
        type === 'HISTOGRAM' ? histogramLabelNames(text, name) : family!.metrics.map((sample) => Object.keys(sample.labels ?? {}));
      if (type === 'HISTOGRAM') expect(labelSets.length, name).toBeGreaterThan(0);
      for (const keys of labelSets) expect(keys.sort(), name).toEqual([...labels].sort());
    }
    const samples = (name: string) => families.get(name)!.metrics.map((sample) => ({ ...sample.labels, value: sample.value }));
    expect(samples('mailwarden_events_received_total')).toEqual(
      expect.arrayContaining([
        { provider: 'postmark', type: 'bounced', value: '1' },
        { provider: 'postmark', type: 'delivered', value: '1' },
      ]),
    );
    expect(samples('mailwarden_webhook_verification_failures_total')).toEqual([{ provider: 'postmark', value: '1' }]);
    expect(samples('mailwarden_suppressions_added_total')).toEqual(
      expect.arrayContaining([
        { reason: 'hard_bounce', source: 'webhook', value: '1' },
        { reason: 'manual', source: 'api', value: '1' },
      ]),
    );
    expect(samples('mailwarden_http_requests_total')).toEqual(
      expect.arrayContaining([
        { route: '/projects/{projectId}/webhooks/{provider}', method: 'POST', status: '200', value: '2' },
        { route: '/projects/{projectId}/webhooks/{provider}', method: 'POST', status: '401', value: '1' },
        { route: '/projects/{projectId}/suppressions', method: 'POST', status: '201', value: '1' },
        { route: 'unmatched', method: 'GET', status: '404', value: '1' },
      ]),
    );
    expect(samples('mailwarden_alert_rate')).toEqual(
      expect.arrayContaining([
        { kind: 'bounce', value: '0.5' },
        { kind: 'complaint', value: '0' },
      ]),
    );
    expect(samples('mailwarden_change_feed_lag_changes')).toEqual([{ endpoint: 'crm', value: '3' }]);
    expect(samples('mailwarden_outbound_deliveries_total')).toEqual([{ result: 'delivered', value: '1' }]);
    // Process metrics, under their usual names.
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('COUNTER');
    expect(text).not.toContain('@');
  });

  test("the app's registry, a prefix of its own, and no process metrics on request", async () => {
    const registry = new Registry();
    const metrics = createPrometheusMetrics({ registry, prefix: 'mail_', defaultMetrics: false });
    metrics.hookCallsDropped(2);
    expect(metrics.registry).toBe(registry);
    const families = parsePrometheusTextFormat(await registry.metrics());
    expect(families.find((family) => family.name === 'mail_hook_calls_dropped_total')?.metrics).toEqual([{ value: '2' }]);
    expect(families.some((family) => family.name.startsWith('process_'))).toBe(false);
  });

  test('per-project gauges: the highest of any project, or one series per project with projectLabel', async () => {
    const plain = createPrometheusMetrics({ defaultMetrics: false });
    plain.alertRates('acme', 0.02, 0);
    plain.alertRates('globex', 0.07, 0.001);
    plain.alertRates('globex', 0.01, 0);
    const rates = (text: string) =>
      parsePrometheusTextFormat(text)
        .find((family) => family.name === 'mailwarden_alert_rate')!
        .metrics.map((sample) => ({ ...sample.labels, value: sample.value }));
    expect(rates(await plain.text())).toEqual([
      { kind: 'bounce', value: '0.02' },
      { kind: 'complaint', value: '0' },
    ]);
    const labelled = createPrometheusMetrics({ defaultMetrics: false, projectLabel: true });
    labelled.alertRates('acme', 0.02, 0);
    labelled.alertRates('globex', 0.07, 0.001);
    expect(rates(await labelled.text())).toEqual([
      { kind: 'bounce', project: 'acme', value: '0.02' },
      { kind: 'complaint', project: 'acme', value: '0' },
      { kind: 'bounce', project: 'globex', value: '0.07' },
      { kind: 'complaint', project: 'globex', value: '0.001' },
    ]);
  });
});
