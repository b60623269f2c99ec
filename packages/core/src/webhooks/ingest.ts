import { hash } from 'node:crypto';
import type { DeliveryEvent } from '../events/delivery-event.js';
import { MailwardenError, isMailwardenError } from '../errors.js';
import type { ApplyEventsResult } from '../api-schemas.js';
import type { MailwardenMetrics } from '../metrics.js';
import { unauthorized } from './auth.js';
import { createProcessTokenClaims, type ClaimWebhookToken } from './one-time-tokens.js';
import { defaultFetchText, type ProviderWebhook, type WebhookEnvironment } from './provider.js';
import { providerWebhooks, webhookRoute, type ProviderAuth } from './providers.js';
import type { WebhookReceipt } from './receipt.js';
import type { WebhookRequest } from './request.js';
import { routeProvider, webhookRoutes, type WebhookRoute } from './routes.js';

// Intake is configured per route: the options name the auth each route's definition takes.
export type { ProviderAuth };

export interface WebhookOptions {
  /** Each project's webhook authentication by route: a map by project id, or a (possibly async) lookup. */
  auth: Readonly<Record<string, ProviderAuth>> | ((projectId: string) => ProviderAuth | undefined | Promise<ProviderAuth | undefined>);
  /** Clock and network access of the receivers; tests inject these. */
  environment?: Partial<WebhookEnvironment>;
}

export interface IngestResult extends ApplyEventsResult {
  /** Set when the request carried no events on purpose (a ping, an SNS subscription handshake). */
  notice?: WebhookReceipt['notice'];
}

/** Takes the request posted to a webhook route: a provider's name, or a second intake (`ses-eventbridge`). */
export type IngestWebhook = (route: WebhookRoute, projectId: string, request: WebhookRequest) => Promise<IngestResult>;

type Receivers = { [R in WebhookRoute]: ProviderWebhook<NonNullable<ProviderAuth[R]>> };

/**
 * Webhook intake: verify, parse and normalize a provider request, then store its events. The result
 * is returned only once every event is stored, so a caller may acknowledge the provider then; any
 * failure before that throws, and the provider's retry is safe (events are deduplicated).
 *
 * `claimToken` records one-time tokens (Mailgun's) across instances: pass the store's
 * `claimWebhookToken`; without it, tokens are remembered by this process only. `metrics` counts the
 * events received and the requests refused by verification (docs/metrics.md).
 */
export function createWebhookIngest(
  applyEvents: (projectId: string, events: readonly DeliveryEvent[]) => Promise<ApplyEventsResult>,
  options: WebhookOptions,
  claimToken?: ClaimWebhookToken,
  metrics?: MailwardenMetrics,
): IngestWebhook {
  const environment: WebhookEnvironment = {
    now: Date.now,
    fetchCertificate: defaultFetchText,
    confirmSubscription: async (url) => void (await defaultFetchText(url)),
    ...options.environment,
  };
  const receivers = Object.fromEntries(
    webhookRoutes.map((route) => [route, providerWebhooks[route].createReceiver(environment)]),
  ) as Receivers;
  const claimOneTimeToken = claimToken ?? createProcessTokenClaims(environment.now);
  const authOf = async (projectId: string): Promise<ProviderAuth | undefined> =>
    typeof options.auth === 'function'
      ? options.auth(projectId)
      : Object.hasOwn(options.auth, projectId)
        ? options.auth[projectId]
        : undefined;

  const ingest: IngestWebhook = async (name, projectId, request) => {
    const route = webhookRoute(name);
    const auth = (await authOf(projectId))?.[route];
    if (auth === undefined) {
      throw new MailwardenError('webhook_unauthorized', `No ${route} webhook authentication is configured for this project.`);
    }
    const receiver = receivers[route] as ProviderWebhook<typeof auth>;
    const receipt = await receiver.receive(request, auth);
    if (receipt.oneTimeToken !== undefined) {
      const { token, expiresAt } = receipt.oneTimeToken;
      const digest = hash('sha256', request.rawBody, 'hex');
      if ((await claimOneTimeToken(projectId, token, digest, expiresAt)) === 'conflict') {
        throw unauthorized(`This ${route} token was already used by a different request.`);
      }
    }
    if (metrics !== undefined) countReceived(metrics, receipt.events);
    const applied = await applyEvents(projectId, receipt.events);
    // applyEvents numbers its warnings by event; report them by the provider item they came from.
    const warnings = [
      ...receipt.warnings,
      ...applied.warnings.map((warning) => ({ ...warning, index: receipt.sources[warning.index] ?? warning.index })),
    ];
    return {
      accepted: applied.accepted,
      duplicates: applied.duplicates,
      skipped: receipt.skipped + applied.skipped,
      warnings,
      ...(receipt.notice === undefined ? {} : { notice: receipt.notice }),
    };
  };
  if (metrics === undefined) return ingest;
  return async (name, projectId, request) => {
    try {
      return await ingest(name, projectId, request);
    } catch (error) {
      if (isMailwardenError(error) && error.code === 'webhook_unauthorized')
        metrics.webhookVerificationFailed(routeProvider(name as WebhookRoute));
      throw error;
    }
  };
}

/** Counts a verified request's events by provider and type, one call per pair (docs/metrics.md). */
function countReceived(metrics: MailwardenMetrics, events: readonly DeliveryEvent[]): void {
  const counts = new Map<string, { event: DeliveryEvent; count: number }>();
  for (const event of events) {
    const label = `${event.provider}\n${event.type}`;
    const seen = counts.get(label);
    if (seen === undefined) counts.set(label, { event, count: 1 });
    else seen.count++;
  }
  for (const { event, count } of counts.values()) metrics.eventsReceived(event.provider, event.type, count);
}
