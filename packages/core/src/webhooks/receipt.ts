import type { DeliveryEvent } from '../events/delivery-event.js';
import type { EventWarning } from '../schemas.js';

/** What one provider request turned into, before anything is stored. */
export interface WebhookReceipt {
  events: DeliveryEvent[];
  /** For each event, the position of the provider item it came from (for warnings). */
  sources: number[];
  /** Items of the payload that could not be used; the rest is applied. */
  warnings: EventWarning[];
  /** How many provider items were skipped (each has a warning). */
  skipped: number;
  /**
   * Set when the request carried no events on purpose: a provider ping or test post, or an SNS
   * subscription handshake. Answered with 200 so the provider is satisfied.
   */
  notice?: 'ping' | 'subscription_confirmed' | 'unsubscribe_confirmation';
  /** Runs once the events are stored (for example, remembering a Mailgun token against replays). */
  afterStored?: () => void;
}

export function emptyReceipt(notice?: WebhookReceipt['notice']): WebhookReceipt {
  return notice === undefined
    ? { events: [], sources: [], warnings: [], skipped: 0 }
    : { events: [], sources: [], warnings: [], skipped: 0, notice };
}
