export const providers = ['ses', 'sendgrid', 'mailgun', 'sparkpost', 'postmark', 'mandrill'] as const;
export type Provider = (typeof providers)[number];

export const deliveryEventTypes = [
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'rejected',
  'opened',
  'clicked',
  'unsubscribed',
  'unknown',
] as const;
export type DeliveryEventType = (typeof deliveryEventTypes)[number];

/** How permanent a bounce is, as the provider classified it. */
export type BounceClass = 'hard' | 'soft' | 'undetermined';

/**
 * For a `rejected` event: the provider refused to send because the address is already on the
 * provider's own list of this kind (SendGrid "Bounced Address", Mailgun `suppress-complaint`, SES
 * `OnAccountSuppressionList`, …).
 */
export type ProviderSuppression = 'bounce' | 'complaint' | 'unsubscribe';

/**
 * One provider event about one recipient, normalized. Webhook parsers produce these; `applyEvents`
 * consumes them. An app that parses webhooks itself can build them too.
 */
export interface DeliveryEvent {
  provider: Provider;
  type: DeliveryEventType;
  /** Set for `bounced` events. */
  bounceClass?: BounceClass | null;
  /** Set for `rejected` events caused by the provider's own suppression list. */
  providerSuppression?: ProviderSuppression | null;
  /** The id the provider's send API returned; `null` when the payload carries none. */
  messageId: string | null;
  /** The recipient address as the provider reported it. */
  recipient: string;
  /** The tracking ID carried by the message, exactly as sent; `null` when absent. */
  trackingId: string | null;
  /** When the provider says the event happened. */
  occurredAt: Date;
  /**
   * Identifies the event across retries: the provider's event id where it is stable, else a hash of
   * the event's identifying fields. Unique per provider (mailwarden scopes it by provider and project).
   */
  eventKey: string;
  /** The provider's own words, for display (bounce diagnostic, reject reason). Not stored. */
  description?: string;
}
