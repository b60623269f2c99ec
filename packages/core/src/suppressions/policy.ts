import type { DeliveryEvent } from '../events/delivery-event.js';
import type { SuppressionReason } from '../vocabulary.js';

/**
 * Decides whether an event suppresses its recipient, and why. It must be a pure function of the event:
 * stores apply its decision atomically with the event, and a retried event must decide the same way.
 */
export type SuppressionPolicy = (event: DeliveryEvent) => SuppressionReason | null;

/**
 * docs/decisions.md#automatic-suppression: a hard bounce suppresses with `hard_bounce`, a complaint with `complaint`, a provider
 * reject because the address is on the provider's own bounce or complaint list with the matching
 * reason. Soft bounces, deferrals, unsubscribes and unsubscribe-list rejects do not suppress.
 *
 * @example
 * // Also suppress on undetermined bounces:
 * const policy: SuppressionPolicy = (event) =>
 *   event.type === 'bounced' && event.bounceClass === 'undetermined' ? 'hard_bounce' : defaultSuppressionPolicy(event);
 */
export const defaultSuppressionPolicy: SuppressionPolicy = (event) => {
  switch (event.type) {
    case 'complained':
      return 'complaint';
    case 'bounced':
      return event.bounceClass === 'hard' ? 'hard_bounce' : null;
    case 'rejected':
      if (event.providerSuppression === 'bounce') return 'hard_bounce';
      if (event.providerSuppression === 'complaint') return 'complaint';
      return null;
    default:
      return null;
  }
};
