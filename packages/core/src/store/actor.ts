import type { DeliveryEventType, Provider } from '../events/delivery-event.js';

/**
 * Who made a change, as the audit trail names it (docs/decisions.md, "The audit trail"): a type, then
 * what tells actors of that type apart, joined by `:`. Never a secret, never an address.
 *
 * - `key:<name>`: a request with that API key (its configured name; an unnamed key's is `key-` and
 *   the first 8 hex of its SHA-256).
 * - `webhook:<provider>:<event type>`: a provider's event (`webhook:ses:complained`).
 * - `rule:soft_bounces`, `rule:expiry`, `rule:alerts`, `rule:outbound`: a rule of the project: the
 *   soft-bounce rule's suppression, an expired suppression deleted, an alert crossing and the streams it
 *   paused, an outbound endpoint paused after failing too long.
 * - `import:<run>`: one run of `mailwarden suppressions import`.
 * - `unsubscribe` or `unsubscribe:<stream>`: a recipient's one-click unsubscribe, by its token's stream.
 * - `config`: the service's configuration (keys added, changed or removed).
 */
export type Actor = string;

export const keyActor = (name: string): Actor => `key:${name}`;
export const webhookActor = (provider: Provider, type: DeliveryEventType): Actor => `webhook:${provider}:${type}`;
export const importActor = (run: string): Actor => `import:${run}`;
export const unsubscribeActor = (stream: string | undefined): Actor => (stream === undefined ? 'unsubscribe' : `unsubscribe:${stream}`);

/** The actors stores write themselves: rules of the project, and the configuration. */
export const ruleActors = {
  softBounces: 'rule:soft_bounces',
  expiry: 'rule:expiry',
  alerts: 'rule:alerts',
  outbound: 'rule:outbound',
} as const satisfies Record<string, Actor>;
export const CONFIG_ACTOR: Actor = 'config';

/** Whether `actor` matches a filter: equal to it, or starting with it and `:` (`key` matches `key:ops`, not `keys:x`). */
export function actorMatches(actor: Actor | undefined, filter: string): boolean {
  if (actor === undefined) return false;
  return actor === filter || (actor.length > filter.length && actor.startsWith(filter) && actor[filter.length] === ':');
}

/**
 * The `email` an erased address's suppressions keep (`Store.eraseAddress`): a placeholder that is not an
 * address anyone can hold (`.invalid` is reserved, RFC 2606), unique per hash, so listings and the
 * spec's `email` string stay well-formed (docs/decisions.md, "Erasure").
 */
export function erasedEmail(hash: string): string {
  return `${hash.slice(0, 16)}@erased.invalid`;
}
