import type { Provider } from './events/delivery-event.js';
import type { DeliveryEventType } from './events/delivery-event.js';
import type { SuppressionSource } from './suppressions/provenance.js';
import type { SuppressionReason } from './vocabulary.js';

/**
 * What mailwarden measures, as calls a metrics backend receives (`MailwardenOptions.metrics`).
 * `@mailwarden/prometheus` implements it with prom-client; every label value passed here comes from a
 * bounded set (route templates, providers, event types, reasons, configured endpoint ids, store
 * operation names), never from a request's text (docs/metrics.md).
 */
export interface MailwardenMetrics {
  /** One HTTP request answered: its route template (`unmatched` for none), method, status and duration. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** Events received through a provider's webhook, by provider and type. */
  eventsReceived(provider: Provider, type: DeliveryEventType, count: number): void;
  /** A provider's webhook request refused by its verification (`webhook_unauthorized`). */
  webhookVerificationFailed(provider: Provider): void;
  /** Suppressions added (created or raised) in any list, by reason and source. */
  suppressionsAdded(reason: SuppressionReason, source: SuppressionSource, count: number): void;
  /** Suppressions removed from any list, by reason (`expired` for the sweep's). */
  suppressionsRemoved(reason: SuppressionReason | 'expired', count: number): void;
  /** One store operation (a `Store` method's name): its duration, and whether it failed. */
  storeOperation(operation: string, seconds: number, failed: boolean): void;
  /** Hook calls dropped because too many were pending (`maxPendingHookCalls`). */
  hookCallsDropped(count: number): void;
  /** One outbound delivery attempt of `endpoint`: `delivered` (2xx) or `failed`. */
  outboundDelivery(endpoint: string, result: 'delivered' | 'failed'): void;
  /** How far `endpoint` is behind its project's feed: changes not yet delivered, and the age of the oldest in seconds (0 when caught up). */
  outboundLag(projectId: string, endpoint: string, changes: number, seconds: number): void;
  /** A project's alert window rates now (fractions 0–1), when read. */
  alertRates(projectId: string, bounceRate: number, complaintRate: number): void;
}
