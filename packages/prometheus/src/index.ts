import type { MailwardenMetrics } from '@mailwarden/core';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface PrometheusMetricsOptions {
  /** Where the metrics are registered: the app's own registry, so one `/metrics` shows both. Default: a new `Registry`. */
  registry?: Registry;
  /** Prepended to every metric's name. Default `mailwarden_`. */
  prefix?: string;
  /**
   * Adds a `project` label to the per-project gauges (`alert_rate`, `change_feed_lag_changes`,
   * `outbound_lag_seconds`). Off by default: a label per project multiplies those series by the number
   * of projects; without it, each gauge shows the highest value of any project (docs/metrics.md).
   */
  projectLabel?: boolean;
  /** Registers prom-client's process and Node.js metrics (`collectDefaultMetrics`, unprefixed) in `registry`. Default `true`. */
  defaultMetrics?: boolean;
  /** The duration histograms' buckets, in seconds. Default: prom-client's (5 ms to 10 s). */
  buckets?: number[];
}

/** `MailwardenMetrics` recorded with prom-client, and the text `/metrics` serves. */
export interface PrometheusMetrics extends MailwardenMetrics {
  readonly registry: Registry;
  /** The exposition's `Content-Type` (`text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
  /** Every metric of `registry` in the Prometheus text format. */
  text(): Promise<string>;
}

/**
 * The metrics mailwarden records, as prom-client counters, histograms and gauges in one registry: pass
 * it to `createMailwarden({ metrics })`, then serve `text()` at `GET /metrics` with `contentType`.
 * Every label value comes from a bounded set (route templates, providers, event types, reasons, store
 * operations, configured endpoint ids); projects only with `projectLabel` (docs/metrics.md).
 *
 * @example
 * import { createMailwarden } from '@mailwarden/core';
 * import { createPrometheusMetrics } from '@mailwarden/prometheus';
 *
 * const metrics = createPrometheusMetrics();
 * const mailwarden = createMailwarden({ metrics });
 * app.get('/metrics', async (_request, response) => {
 *   response.type(metrics.contentType).send(await metrics.text());
 * });
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'mailwarden_';
  const projectLabel = options.projectLabel === true;
  const registers = [registry];
  const buckets = options.buckets === undefined ? {} : { buckets: options.buckets };
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  const httpRequests = new Counter({
    name: `${prefix}http_requests_total`,
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: `${prefix}http_request_duration_seconds`,
    help: 'How long HTTP requests took to answer, by route template and method.',
    labelNames: ['route', 'method'] as const,
    registers,
    ...buckets,
  });
  const eventsReceived = new Counter({
    name: `${prefix}events_received_total`,
    help: "Delivery events received through providers' webhooks, by provider and type.",
    labelNames: ['provider', 'type'] as const,
    registers,
  });
  const verificationFailures = new Counter({
    name: `${prefix}webhook_verification_failures_total`,
    help: 'Provider webhook requests refused by their verification, by provider.',
    labelNames: ['provider'] as const,
    registers,
  });
  const suppressionsAdded = new Counter({
    name: `${prefix}suppressions_added_total`,
    help: 'Suppressions created or raised to a stronger reason, by reason and source.',
    labelNames: ['reason', 'source'] as const,
    registers,
  });
  const suppressionsRemoved = new Counter({
    name: `${prefix}suppressions_removed_total`,
    help: 'Suppressions removed, by the reason they had.',
    labelNames: ['reason'] as const,
    registers,
  });
  const storeErrors = new Counter({
    name: `${prefix}store_errors_total`,
    help: 'Store operations that failed, by operation.',
    labelNames: ['operation'] as const,
    registers,
  });
  const storeDuration = new Histogram({
    name: `${prefix}store_operation_duration_seconds`,
    help: 'How long store operations took, by operation.',
    labelNames: ['operation'] as const,
    registers,
    ...buckets,
  });
  const perProject = projectLabel ? (['project'] as const) : ([] as const);
  const feedLag = new Gauge({
    name: `${prefix}change_feed_lag_changes`,
    help: 'Changes of the feed an outbound endpoint has not received yet, by endpoint.',
    labelNames: ['endpoint', ...perProject],
    registers,
  });
  const outboundLag = new Gauge({
    name: `${prefix}outbound_lag_seconds`,
    help: 'Age of the oldest change an outbound endpoint has not received yet (0 when caught up), by endpoint.',
    labelNames: ['endpoint', ...perProject],
    registers,
  });
  const outboundDeliveries = new Counter({
    name: `${prefix}outbound_deliveries_total`,
    help: 'Outbound webhook delivery attempts, by result (delivered: a 2xx answer; failed: anything else).',
    labelNames: ['result'] as const,
    registers,
  });
  const hookCallsDropped = new Counter({
    name: `${prefix}hook_calls_dropped_total`,
    help: 'Hook calls dropped because too many were pending.',
    registers,
  });
  const alertRate = new Gauge({
    name: `${prefix}alert_rate`,
    help: "Bounce and complaint rates of a project's alert window (fractions 0-1), by kind.",
    labelNames: ['kind', ...perProject],
    registers,
  });

  // Without the project label, a gauge shows the highest value of any project: the one to act on.
  const setFeedLag = projectGauge(feedLag, projectLabel);
  const setOutboundLag = projectGauge(outboundLag, projectLabel);
  const setAlertRate = projectGauge(alertRate, projectLabel);

  return {
    registry,
    get contentType() {
      return registry.contentType;
    },
    text: () => registry.metrics(),
    httpRequest(route, method, status, seconds) {
      httpRequests.inc({ route, method, status: String(status) });
      httpDuration.observe({ route, method }, seconds);
    },
    eventsReceived(provider, type, count) {
      eventsReceived.inc({ provider, type }, count);
    },
    webhookVerificationFailed(provider) {
      verificationFailures.inc({ provider });
    },
    suppressionsAdded(reason, source, count) {
      suppressionsAdded.inc({ reason, source }, count);
    },
    suppressionsRemoved(reason, count) {
      suppressionsRemoved.inc({ reason }, count);
    },
    storeOperation(operation, seconds, failed) {
      storeDuration.observe({ operation }, seconds);
      if (failed) storeErrors.inc({ operation });
    },
    hookCallsDropped(count) {
      hookCallsDropped.inc(count);
    },
    outboundDelivery(_endpoint, result) {
      outboundDeliveries.inc({ result });
    },
    outboundLag(projectId, endpoint, changes, seconds) {
      setFeedLag(projectId, { endpoint }, changes);
      setOutboundLag(projectId, { endpoint }, seconds);
    },
    alertRates(projectId, bounceRate, complaintRate) {
      setAlertRate(projectId, { kind: 'bounce' }, bounceRate);
      setAlertRate(projectId, { kind: 'complaint' }, complaintRate);
    },
  };
}

type Labels = Record<string, string>;

/**
 * Sets a per-project gauge: with the project label, the project's own series; without it, the series
 * of the other labels shows the highest value any project last reported.
 */
function projectGauge(gauge: Gauge<string>, projectLabel: boolean): (projectId: string, labels: Labels, value: number) => void {
  if (projectLabel) return (project, labels, value) => gauge.set({ ...labels, project }, value);
  const latest = new Map<string, Map<string, number>>();
  return (project, labels, value) => {
    const series = JSON.stringify(labels);
    let byProject = latest.get(series);
    if (byProject === undefined) latest.set(series, (byProject = new Map()));
    byProject.set(project, value);
    let highest = value;
    for (const other of byProject.values()) if (other > highest) highest = other;
    gauge.set(labels, highest);
  };
}
