import type { Provider } from '../events/delivery-event.js';
import type { WebhookReceipt } from './receipt.js';
import type { WebhookRequest } from './request.js';

/** What provider receivers may need from outside, injectable so tests need no network and no real clock. */
export interface WebhookEnvironment {
  /** Epoch milliseconds, for timestamp tolerances. */
  now: () => number;
  /** Fetches an SNS signing certificate (PEM) from an already host-checked HTTPS URL. */
  fetchCertificate: (url: string) => Promise<string>;
  /** Confirms an SNS subscription by fetching its already host-checked `SubscribeURL`. */
  confirmSubscription: (subscribeUrl: string) => Promise<void>;
}

/**
 * One provider's webhook receiver: verifies a request as its page in docs/providers/ says, then parses and normalizes it
 * into delivery events (one per recipient). Throws `webhook_unauthorized` when authentication fails and
 * `invalid_payload` when the body can never be parsed; a malformed item inside a good batch becomes a
 * warning instead. Receivers keep per-instance caches (certificates, replay tokens).
 */
export interface ProviderWebhook<Auth> {
  readonly provider: Provider;
  receive(request: WebhookRequest, auth: Auth): Promise<WebhookReceipt>;
}

export async function defaultFetchText(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${new URL(url).host} answered ${response.status}`);
  return response.text();
}

/**
 * One provider's webhook as mailwarden knows it before any request: how its receiver is made (one per
 * intake, since receivers keep caches), and how a refused request is answered.
 */
export interface ProviderWebhookDefinition<Auth> {
  /**
   * Whether a 401 carries `WWW-Authenticate: Basic`: true for providers that can authenticate with basic
   * credentials. SNS sends those of an `https://user:pass@…` endpoint only after that challenge.
   */
  readonly basicChallenge: boolean;
  /**
   * The status a request is answered when the store is unavailable, for a provider that retries only
   * that one (Brevo: 429); absent means `store_unavailable`'s 503. Either way with `Retry-After`.
   */
  readonly storeUnavailableStatus?: 429;
  readonly createReceiver: (env: WebhookEnvironment) => ProviderWebhook<Auth>;
}
