import type { PrometheusMetrics } from '@mailwarden/prometheus';

/**
 * What the service records and serves at `/metrics` (docs/server.md, "Metrics"): the calls mailwarden
 * makes (`createMailwarden({ metrics })`) and their exposition in the Prometheus text format.
 */
export type ServiceMetrics = Omit<PrometheusMetrics, 'registry'>;

/**
 * A Prometheus registry of the service's own, with process metrics. Loaded only when metrics are on, so
 * a service without them loads no prom-client.
 */
export async function createServiceMetrics(): Promise<ServiceMetrics> {
  const { createPrometheusMetrics } = await import('@mailwarden/prometheus');
  return createPrometheusMetrics();
}
