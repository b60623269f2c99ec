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
  /**
   * A one-time token the request was signed with (Mailgun): intake claims it in the store before
   * storing the events, and refuses the request if the token was already used with another body.
   */
  oneTimeToken?: { token: string; expiresAt: number };
}

export function emptyReceipt(notice?: WebhookReceipt['notice']): WebhookReceipt {
  return notice === undefined
    ? { events: [], sources: [], warnings: [], skipped: 0 }
    : { events: [], sources: [], warnings: [], skipped: 0, notice };
}

/** What one provider item gives: an event, nothing on purpose (a ping, a kind we do not track), or why it is unusable. */
export type ItemOutcome = DeliveryEvent | 'ignored' | string;

/**
 * A batch of provider items as a receipt: events with the index of their item, a warning for each
 * unusable item (skipped, the rest applied), and a ping when every item (of none or more) was ignored on purpose.
 */
export function receiptOfItems(items: readonly unknown[], parseItem: (item: unknown) => ItemOutcome): WebhookReceipt {
  const receipt = emptyReceipt();
  let ignored = 0;
  items.forEach((item, index) => {
    const outcome = parseItem(item);
    if (outcome === 'ignored') ignored++;
    else if (typeof outcome === 'string') {
      receipt.warnings.push({ index, code: 'invalid_event', message: outcome });
      receipt.skipped++;
    } else {
      receipt.events.push(outcome);
      receipt.sources.push(index);
    }
  });
  return ignored === items.length ? emptyReceipt('ping') : receipt;
}
