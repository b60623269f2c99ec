import { hash } from 'node:crypto';
import { providers, type DeliveryEvent, type Provider } from '../events/delivery-event.js';
import { MailwardenError } from '../errors.js';
import type { ApplyEventsResult } from '../api-schemas.js';
import { unauthorized } from './auth.js';
import { createProcessTokenClaims, type ClaimWebhookToken } from './one-time-tokens.js';
import { defaultFetchText, type ProviderWebhook, type WebhookEnvironment } from './provider.js';
import { providerWebhooks, webhookProvider, type ProviderAuth } from './providers.js';
import type { WebhookReceipt } from './receipt.js';
import type { WebhookRequest } from './request.js';

// Intake is configured per provider: the options name the auth each provider's definition takes.
export type { ProviderAuth };

export interface WebhookOptions {
  /** Each project's provider authentication: a map by project id, or a (possibly async) lookup. */
  auth: Readonly<Record<string, ProviderAuth>> | ((projectId: string) => ProviderAuth | undefined | Promise<ProviderAuth | undefined>);
  /** Clock and network access of the receivers; tests inject these. */
  environment?: Partial<WebhookEnvironment>;
}

export interface IngestResult extends ApplyEventsResult {
  /** Set when the request carried no events on purpose (a ping, an SNS subscription handshake). */
  notice?: WebhookReceipt['notice'];
}

export type IngestWebhook = (provider: Provider, projectId: string, request: WebhookRequest) => Promise<IngestResult>;

type Receivers = { [P in Provider]: ProviderWebhook<NonNullable<ProviderAuth[P]>> };

/**
 * Webhook intake: verify, parse and normalize a provider request, then store its events. The result
 * is returned only once every event is stored, so a caller may acknowledge the provider then; any
 * failure before that throws, and the provider's retry is safe (events are deduplicated).
 *
 * `claimToken` records one-time tokens (Mailgun's) across instances: pass the store's
 * `claimWebhookToken`; without it, tokens are remembered by this process only.
 */
export function createWebhookIngest(
  applyEvents: (projectId: string, events: readonly DeliveryEvent[]) => Promise<ApplyEventsResult>,
  options: WebhookOptions,
  claimToken?: ClaimWebhookToken,
): IngestWebhook {
  const environment: WebhookEnvironment = {
    now: Date.now,
    fetchCertificate: defaultFetchText,
    confirmSubscription: async (url) => void (await defaultFetchText(url)),
    ...options.environment,
  };
  const receivers = Object.fromEntries(
    providers.map((provider) => [provider, providerWebhooks[provider].createReceiver(environment)]),
  ) as Receivers;
  const claimOneTimeToken = claimToken ?? createProcessTokenClaims(environment.now);
  const authOf = async (projectId: string): Promise<ProviderAuth | undefined> =>
    typeof options.auth === 'function'
      ? options.auth(projectId)
      : Object.hasOwn(options.auth, projectId)
        ? options.auth[projectId]
        : undefined;

  return async (name, projectId, request) => {
    const provider = webhookProvider(name);
    const auth = (await authOf(projectId))?.[provider];
    if (auth === undefined) {
      throw new MailwardenError('webhook_unauthorized', `No ${provider} webhook authentication is configured for this project.`);
    }
    const receiver = receivers[provider] as ProviderWebhook<typeof auth>;
    const receipt = await receiver.receive(request, auth);
    if (receipt.oneTimeToken !== undefined) {
      const { token, expiresAt } = receipt.oneTimeToken;
      const digest = hash('sha256', request.rawBody, 'hex');
      if ((await claimOneTimeToken(projectId, token, digest, expiresAt)) === 'conflict') {
        throw unauthorized(`This ${provider} token was already used by a different request.`);
      }
    }
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
}
