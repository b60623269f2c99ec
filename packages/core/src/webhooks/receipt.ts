import type { DeliveryEvent } from '../events/delivery-event.js';
import type { EventWarning } from '../api-schemas.js';

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

/** The receipt of a request that carried no events on purpose. */
export function noticeReceipt(notice: NonNullable<WebhookReceipt['notice']>): WebhookReceipt {
  return { events: [], sources: [], warnings: [], skipped: 0, notice };
}

/**
 * What one provider item gives: an event, nothing on purpose (`'ignored'`: a ping, a kind we do not
 * track), or why it is unusable.
 */
export type ItemOutcome = DeliveryEvent | 'ignored' | string;

/**
 * The one way a receipt of provider items is built, from what each item gave, in item order: every event
 * with the index of its item, a warning for each unusable item (skipped, the rest applied), and a ping
 * when every item, of none or more, was ignored on purpose. An item that gives several events (an SES
 * notification, one per recipient) gives a list, whose unusable parts are each a warning of that item.
 *
 * @example
 * const receipt = receiptOf(payload.map(parseItem));
 */
export function receiptOf(outcomes: readonly (ItemOutcome | readonly ItemOutcome[])[]): WebhookReceipt {
  const receipt: WebhookReceipt = { events: [], sources: [], warnings: [], skipped: 0 };
  let ignored = 0;
  outcomes.forEach((outcome, index) => {
    if (outcome === 'ignored') ignored++;
    const parts = (Array.isArray(outcome) ? outcome : [outcome]) as readonly ItemOutcome[];
    for (const part of parts) {
      if (part === 'ignored') continue;
      if (typeof part === 'string') {
        receipt.warnings.push({ index, code: 'invalid_event', message: part });
        receipt.skipped++;
      } else {
        receipt.events.push(part);
        receipt.sources.push(index);
      }
    }
  });
  return ignored === outcomes.length ? noticeReceipt('ping') : receipt;
}
