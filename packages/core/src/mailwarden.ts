import type { MailwardenContext } from './services/context.js';
import { createCursorCodec } from './cursor.js';
import { createEmailHasher } from './email/hash.js';
import { assertStreamName } from './stream.js';
import { applyEvents } from './services/apply-events.js';
import { createHookDispatcher, type MailwardenHooks, type MailwardenLogger } from './services/hooks.js';
import type { DeliveryEvent } from './events/delivery-event.js';
import { createMessageService, createTrackingIdService, type MessageService, type TrackingIdService } from './services/message-service.js';
import { readStats } from './services/stats-service.js';
import type { ApplyEventsResult, Stats, StatsRangeQuery } from './api-schemas.js';
import { createMemoryStore } from './memory-store/memory-store.js';
import type { Store } from './store/store.js';
import { measureStore } from './store/measured-store.js';
import type { MailwardenMetrics } from './metrics.js';
import { defaultSuppressionPolicy, type SuppressionPolicy } from './suppressions/policy.js';
import { checkSuppressionRules, type SuppressionRules } from './suppressions/rules.js';
import { createAllowlistService, type AllowlistService } from './services/allowlist-service.js';
import { filterSuppressed, type FilterSuppressedOptions, type FilterSuppressedResult } from './services/send-gate.js';
import { createSuppressionService, type SuppressionService } from './services/suppression-service.js';
import { createErasureService, type ErasureService } from './services/erasure-service.js';
import { createChangeService, type ChangeService } from './services/change-service.js';
import { createAlertService, type AlertService } from './services/alert-service.js';
import { createStreamService, type StreamService } from './services/stream-service.js';
import { alertRulesOf, type AlertRules } from './suppressions/alerts.js';
import { createWebhookIngest, type IngestResult, type WebhookOptions } from './webhooks/ingest.js';
import { createUnsubscribeLinks, type UnsubscribeLinks, type UnsubscribeLinksOptions } from './unsubscribe/links.js';
import { checkOutboundOptions, type OutboundOptions } from './outbound/options.js';
import { startOutboundEngine } from './outbound/engine.js';
import { createOutboundService, type OutboundService } from './outbound/outbound-service.js';
import type { WebhookRequest } from './webhooks/request.js';
import type { WebhookRoute } from './webhooks/routes.js';

export interface MailwardenOptions {
  /** Where state lives. Default: a new memory store, without retention (`createMemoryStore()`). */
  store?: Store;
  /** Hash addresses with HMAC-SHA256 under this key instead of plain SHA-256. Keep it stable. */
  hashKey?: string | Uint8Array;
  /** Sign pagination cursors with HMAC, so altered cursors are rejected. */
  cursorSecret?: string | Uint8Array;
  /** Which events suppress their recipient. Default: `defaultSuppressionPolicy`. */
  policy?: SuppressionPolicy;
  /**
   * Each project's default stream: where a provider's unsubscribe event for a message sent without a
   * stream is recorded. A map by project id, or a lookup. Without one, such an unsubscribe is recorded
   * project-wide (reason `manual`, source `unsubscribe`), as the provider itself stops mailing the
   * address (docs/decisions.md, "Who suppresses on an unsubscribe"). A name that is not a stream name
   * throws `invalid_stream` (at creation for a map, when used for a lookup).
   *
   * @example
   * const mailwarden = createMailwarden({ defaultStream: { acme: 'marketing' } });
   */
  defaultStream?: Readonly<Record<string, string>> | ((projectId: string) => string | undefined);
  /**
   * Suppression rules beside the policy, all off by default: the soft-bounce rule (suppress after
   * repeated soft bounces) and when suppressions expire (docs/core.md, "Rules"). One object for every
   * project, or a lookup by project. Checked at creation for an object, when used for a lookup (a
   * `RangeError` naming the field).
   *
   * @example
   * const mailwarden = createMailwarden({ rules: { softBounces: { bounces: 3, days: 7 } } });
   */
  rules?: SuppressionRules | ((projectId: string) => SuppressionRules | undefined);
  /**
   * Deliverability alerts: bounce and complaint rates over each project's last messages, a crossing
   * appending `alert.bounce_rate` / `alert.complaint_rate` to the change feed and optionally pausing
   * streams (docs/core.md, "Alerts"). One object for every project, or a lookup by project; checked as
   * `rules` are (a `RangeError` naming the field). Without it, no alert window is kept.
   *
   * @example
   * const mailwarden = createMailwarden({ alerts: { bounceRate: 5, complaintRate: 0.1, pauseStreams: ['marketing'] } });
   */
  alerts?: AlertRules | ((projectId: string) => AlertRules | undefined);
  /** Clock for manual suppressions, in epoch milliseconds. Default: `Date.now`. */
  now?: () => number;
  /** Webhook intake: each project's provider authentication. Without it, `ingestWebhook` refuses every request. */
  webhooks?: WebhookOptions;
  /**
   * Message timelines. `personalData: true` keeps the clicked `url` and the reader's `userAgent` of
   * opens and clicks in every project's timelines; by default they are dropped before the store sees
   * them (they are personal data; see docs/decisions.md#message-timelines).
   */
  timeline?: { personalData?: boolean };
  /**
   * Hooks: functions called after a change is committed, at most once per change across every
   * instance sharing the store, never for a duplicate. Nothing waits for them: they start after the
   * answer in progress (a webhook's acknowledgement, `applyEvents`' result) is on its way, and a call
   * that throws or rejects is logged. A crash between the commit and the call loses the call: catch up
   * from the listings by time range (docs/core.md#hooks).
   *
   * @example
   * const mailwarden = createMailwarden({
   *   on: {
   *     suppressed: async ({ projectId, email, reason }) => {
   *       console.log(`${projectId}: stop mailing ${email} (${reason})`);
   *     },
   *   },
   * });
   */
  on?: MailwardenHooks;
  /** Hook calls whose promise has not settled yet, at most; past it, calls are dropped and logged. Default 1 000. */
  maxPendingHookCalls?: number;
  /** Where failing hooks are reported. Default: `console.error`. */
  logger?: MailwardenLogger;
  /**
   * One-click unsubscribe links (RFC 8058): the public URL where the HTTP API is mounted and the secrets
   * that seal their tokens (docs/unsubscribe.md). Without it, `unsubscribeLinks` throws
   * `unsubscribe_links_not_configured`.
   *
   * @example
   * const mailwarden = createMailwarden({
   *   unsubscribeLinks: { baseUrl: 'https://mail.example.com/mailwarden', secrets: [process.env.UNSUBSCRIBE_SECRET!] },
   * });
   */
  unsubscribeLinks?: UnsubscribeLinksOptions;
  /**
   * Outbound webhooks: each project's endpoints receive its changes as signed POSTs (Standard Webhooks),
   * at least once, in feed order, retried for a day and more, delivered on timers by whichever instance
   * holds an endpoint's lease in the store (docs/outbound-webhooks.md). Delivery starts at creation and
   * stops at `close()`. Needs a store with a change feed (its `changes` option) when an endpoint is
   * configured; checked at creation (a `RangeError` naming the field).
   *
   * @example
   * const mailwarden = createMailwarden({
   *   store: createMemoryStore({ changes: {} }),
   *   outbound: { endpoints: { acme: [{ id: 'crm', url: 'https://crm.example.com/hooks', secrets: [process.env.WEBHOOK_SECRET!] }] } },
   * });
   */
  outbound?: OutboundOptions;
  /**
   * Where to record metrics: HTTP requests, events received, webhook verification failures, suppressions
   * added and removed, store operations and errors, dropped hook calls, outbound delivery and lag, alert
   * rates (docs/metrics.md). `createPrometheusMetrics()` of `@mailwarden/prometheus` makes one. Without
   * it, nothing is measured and the store is used as given.
   *
   * @example
   * import { createPrometheusMetrics } from '@mailwarden/prometheus';
   *
   * const metrics = createPrometheusMetrics();
   * const mailwarden = createMailwarden({ metrics });
   * // serve `await metrics.text()` with `metrics.contentType` at GET /metrics
   */
  metrics?: MailwardenMetrics;
}

export interface Mailwarden {
  suppressions: SuppressionService;
  messages: MessageService;
  trackingIds: TrackingIdService;
  /** Addresses and domains that automatic rules never suppress (docs/core.md, "Allowlist"). */
  allowlist: AllowlistService;
  /** One-click unsubscribe links: made for a message's headers, then used by the recipient (docs/unsubscribe.md). */
  unsubscribeLinks: UnsubscribeLinks;
  /** The change feed: every change the store made, in order (docs/core.md, "Change feed"). Needs a store with a feed. */
  changes: ChangeService;
  /** Deliverability alerts: the rates of a window against their thresholds (docs/core.md, "Alerts"). */
  alerts: AlertService;
  /** Paused streams, which the send gate blocks (docs/core.md, "Paused streams"). */
  streams: StreamService;
  /** Erasure on request that keeps the address blocked, by hash only (docs/core.md, "Erasure"). */
  erasures: ErasureService;
  /**
   * Counts over time of the whole project, as `trackingIds.stats` gives them for one tracking ID.
   *
   * @example
   * const { buckets } = await mailwarden.stats('acme', { from: '2026-11-24T00:00:00Z', to: '2026-11-25T00:00:00Z', interval: 'hour' });
   */
  stats(projectId: string, query: StatsRangeQuery): Promise<Stats>;
  /** Records normalized delivery events; see `applyEvents`. */
  applyEvents(projectId: string, events: readonly DeliveryEvent[]): Promise<ApplyEventsResult>;
  /**
   * Verifies, parses and stores one provider webhook request posted to `route` (a provider's name, or
   * `ses-eventbridge`). Resolves once every event is stored, so acknowledge the provider only then;
   * throws `webhook_unauthorized`, `invalid_payload`, or a store error.
   */
  ingestWebhook(route: WebhookRoute, projectId: string, request: WebhookRequest): Promise<IngestResult>;
  /** The send gate; see `filterSuppressed`. */
  filterSuppressed(projectId: string, recipients: readonly string[], options?: FilterSuppressedOptions): Promise<FilterSuppressedResult>;
  /** Outbound webhook endpoints: where each stands, and resuming a paused one (docs/outbound-webhooks.md). */
  outbound: OutboundService;
  /** The store, for lifecycle and for bindings; with `metrics`, the store measured (its calls timed and counted). */
  readonly store: Store;
  /** Where it records metrics (`MailwardenOptions.metrics`), for the HTTP bindings; absent when none. */
  readonly metrics?: MailwardenMetrics;
  /** Its clock (`MailwardenOptions.now`), for the HTTP handler's rate-limit windows. */
  readonly now: () => number;
  /**
   * Resolves once every hook call started so far has settled (returned, resolved or rejected): for
   * tests, and for a graceful shutdown that lets hooks finish before `close()` (race it with a timeout:
   * a hook that hangs never settles).
   */
  hooksSettled(): Promise<void>;
  /**
   * Stops outbound delivery (waiting for requests in progress, each bounded by its timeout), then closes
   * the store. Hook calls in progress are not waited for (see `hooksSettled`).
   */
  close(): Promise<void>;
}

/**
 * Creates a mailwarden instance: the suppression list, message tracking and the send gate over one
 * store. Instances are cheap and stateless apart from the store, so many app instances can share one
 * Redis or Postgres store.
 *
 * @example
 * import { createMailwarden } from '@mailwarden/core';
 *
 * const mailwarden = createMailwarden();
 * await mailwarden.suppressions.add('acme', 'bounced@example.com');
 * const { allowed } = await mailwarden.filterSuppressed('acme', ['bounced@example.com', 'ok@example.com']);
 * // allowed: ['ok@example.com']
 */
export function createMailwarden(options: MailwardenOptions = {}): Mailwarden {
  const now = options.now ?? Date.now;
  const { metrics } = options;
  const givenStore = options.store ?? createMemoryStore();
  const context: MailwardenContext = {
    // Only with metrics is the store wrapped: without, every call costs what it did.
    store: metrics === undefined ? givenStore : measureStore(givenStore, metrics, { now }),
    hashEmail: createEmailHasher(options.hashKey),
    cursors: createCursorCodec(options.cursorSecret),
    policy: options.policy ?? defaultSuppressionPolicy,
    now,
    timelinePersonalData: options.timeline?.personalData === true,
  };
  if (options.defaultStream !== undefined) context.defaultStream = defaultStreamOf(options.defaultStream);
  if (options.rules !== undefined) context.rules = rulesOf(options.rules);
  if (options.alerts !== undefined) context.alerts = alertRulesOf(options.alerts);
  const logger = options.logger ?? { error: (details, message) => console.error(message, details) };
  if (options.on !== undefined) context.hooks = createHookDispatcher(options.on, logger, options.maxPendingHookCalls, metrics);
  const applyEventsOfProject = (projectId: string, events: readonly DeliveryEvent[]) => applyEvents(context, projectId, events);
  // Without configuration every provider is refused, but an unknown provider is still "not found".
  const { store } = context;
  const ingestWebhook = createWebhookIngest(
    applyEventsOfProject,
    options.webhooks ?? { auth: {} },
    store.claimWebhookToken === undefined ? undefined : (...claim) => store.claimWebhookToken!(...claim),
    metrics,
  );
  const suppressions = createSuppressionService(context);
  const outbound = options.outbound === undefined ? undefined : checkOutboundOptions(options.outbound);
  if (outbound !== undefined && outbound.endpoints.length > 0 && store.changes === undefined)
    throw new RangeError('outbound: endpoints need a store with a change feed (create it with its `changes` option)');
  const outboundEngine = outbound?.endpoints.length
    ? startOutboundEngine(outbound, { store, now: context.now, logger, ...(metrics === undefined ? {} : { metrics }) })
    : undefined;
  return {
    suppressions,
    messages: createMessageService(context),
    trackingIds: createTrackingIdService(context),
    allowlist: createAllowlistService(context),
    unsubscribeLinks: createUnsubscribeLinks(options.unsubscribeLinks, suppressions),
    changes: createChangeService(context),
    alerts: createAlertService(context),
    streams: createStreamService(context),
    erasures: createErasureService(context),
    stats: (projectId, query) => readStats(context, projectId, null, query),
    applyEvents: applyEventsOfProject,
    ingestWebhook,
    filterSuppressed: (projectId, recipients, filterOptions) => filterSuppressed(context, projectId, recipients, filterOptions),
    outbound: createOutboundService(store, context.now, outbound?.endpoints ?? [], outboundEngine),
    store: context.store,
    ...(metrics === undefined ? {} : { metrics }),
    now,
    hooksSettled: () => context.hooks?.settled() ?? Promise.resolve(),
    close: async () => {
      await outboundEngine?.close();
      await context.store.close();
    },
  };
}

/** `MailwardenOptions.defaultStream` as one lookup: a map's names checked now, a function's when it answers. */
function defaultStreamOf(option: NonNullable<MailwardenOptions['defaultStream']>): (projectId: string) => string | undefined {
  if (typeof option === 'function') {
    return (projectId) => {
      const stream = option(projectId);
      return stream === undefined ? undefined : assertStreamName(stream);
    };
  }
  const streams = new Map(Object.entries(option).map(([projectId, stream]) => [projectId, assertStreamName(stream)]));
  return (projectId) => streams.get(projectId);
}

/** `MailwardenOptions.rules` as one lookup: an object checked now, a lookup's answers when first seen. */
function rulesOf(option: NonNullable<MailwardenOptions['rules']>): (projectId: string) => SuppressionRules | undefined {
  if (typeof option !== 'function') {
    const rules = checkSuppressionRules(option);
    return () => rules;
  }
  // A lookup usually answers with a few long-lived objects: each is checked once.
  const checked = new WeakSet<SuppressionRules>();
  return (projectId) => {
    const rules = option(projectId);
    if (rules === undefined || checked.has(rules)) return rules;
    checkSuppressionRules(rules, `rules(${JSON.stringify(projectId)})`);
    checked.add(rules);
    return rules;
  };
}
