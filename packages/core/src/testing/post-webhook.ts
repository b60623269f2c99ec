import type { WebhookRoute } from '../webhooks/routes.js';
import type { TestWebhook } from './test-event.js';

/**
 * The intake URL of a webhook route (a provider, or `ses-eventbridge`) for a project, under a service's
 * base URL (where the API is mounted): `{base}/projects/{projectId}/webhooks/{route}`.
 *
 * @example
 * webhookUrl('http://127.0.0.1:3000/mailwarden', 'acme', 'sendgrid');
 * // 'http://127.0.0.1:3000/mailwarden/projects/acme/webhooks/sendgrid'
 */
export function webhookUrl(baseUrl: string, projectId: string, route: WebhookRoute): string {
  return `${baseUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(projectId)}/webhooks/${route}`;
}

/**
 * Posts a built request to a running service, as the provider would: the same method, headers and
 * body bytes. Resolves with the service's answer, whatever its status.
 *
 * @example
 * const response = await postWebhook(webhookUrl('http://127.0.0.1:3000', 'acme', 'postmark'), request);
 * console.log(response.status, await response.json());
 */
export function postWebhook(
  url: string | URL,
  webhook: Pick<TestWebhook, 'method' | 'headers' | 'rawBody'>,
  init: { signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(url, { method: webhook.method, headers: webhook.headers, body: webhook.rawBody, redirect: 'manual', ...init });
}
