import type { MailwardenOptions } from '@mailwarden/core';

/**
 * What `/metrics` serves (docs/server.md, "Metrics"): an exposition in the Prometheus text format. The
 * same object is passed to `createMailwarden({ metrics })`, which records into it.
 */
export interface ServiceMetrics extends NonNullable<MailwardenOptions['metrics']> {
  /** The exposition's `Content-Type`, e.g. `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
  text(): Promise<string>;
}

/** A Prometheus registry of the service's own, with process metrics; `undefined` until `@mailwarden/prometheus` is wired. */
export async function createServiceMetrics(): Promise<ServiceMetrics | undefined> {
  return undefined;
}
