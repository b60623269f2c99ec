import { providers, type Provider } from '../events/delivery-event.js';

/**
 * The webhook routes (`/projects/{projectId}/webhooks/{route}`): one per provider, named after it, and
 * second intakes of a provider whose events carry that provider's name (`ses-eventbridge`: SES event
 * publishing through EventBridge, events of `ses`), so a message's key, timeline and counts are the
 * same whichever route its events came by (docs/decisions.md "SES through EventBridge").
 */
export const webhookRoutes = [...providers, 'ses-eventbridge'] as const;
export type WebhookRoute = (typeof webhookRoutes)[number];

/** The second intakes, each with the provider its events carry. */
const secondIntakes: { readonly [R in Exclude<WebhookRoute, Provider>]: Provider } = { 'ses-eventbridge': 'ses' };

/** The provider the events of a route carry: the route's own name, or the provider a second intake is for. */
export function routeProvider(route: WebhookRoute): Provider {
  return Object.hasOwn(secondIntakes, route) ? secondIntakes[route as keyof typeof secondIntakes] : (route as Provider);
}
