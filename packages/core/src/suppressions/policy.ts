import type { DeliveryEvent } from '../events/delivery-event.js';
import type { SuppressionReason } from '../vocabulary.js';

/**
 * What the policy decided for one event: a reason to suppress its recipient on the project-wide list,
 * `'unsubscribe'` to record the recipient's unsubscribe (reason `manual`, source `unsubscribe`) in the
 * event's stream (else the project's `defaultStream`, else project-wide; docs/decisions.md, "Who
 * suppresses on an unsubscribe"), or `null` for nothing.
 */
export type SuppressionDecision = SuppressionReason | 'unsubscribe' | null;

/**
 * Decides whether an event suppresses its recipient, and why. It must be a pure function of the event:
 * stores apply its decision atomically with the event, and a retried event must decide the same way.
 */
export type SuppressionPolicy = (event: DeliveryEvent) => SuppressionDecision;

/**
 * docs/decisions.md#automatic-suppression: a hard bounce suppresses with `hard_bounce`, a complaint with `complaint`, a provider
 * reject because the address is on the provider's own bounce or complaint list with the matching
 * reason. An unsubscribe records the recipient's unsubscribe in the message's stream
 * (docs/decisions.md, "Who suppresses on an unsubscribe"). Soft bounces, deferrals and
 * unsubscribe-list rejects do not suppress (a reject names no stream, and its unsubscribe was recorded
 * when it happened).
 *
 * @example
 * // Also suppress on undetermined bounces:
 * const policy: SuppressionPolicy = (event) =>
 *   event.type === 'bounced' && event.bounceClass === 'undetermined' ? 'hard_bounce' : defaultSuppressionPolicy(event);
 *
 * @example
 * // Keep recording unsubscribes without suppressing on them (mailwarden before streams):
 * const policy: SuppressionPolicy = (event) => (event.type === 'unsubscribed' ? null : defaultSuppressionPolicy(event));
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
    case 'unsubscribed':
      return 'unsubscribe';
    default:
      return null;
  }
};
