export const providers = [
  'ses',
  'sendgrid',
  'mailgun',
  'sparkpost',
  'postmark',
  'mandrill',
  'resend',
  'brevo',
  'mailjet',
  'mailersend',
  'postal',
] as const;
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
export const bounceClasses = ['hard', 'soft', 'undetermined'] as const;
export type BounceClass = (typeof bounceClasses)[number];

/**
 * For a `rejected` event: the provider refused to send because the address is already on the
 * provider's own list of this kind (SendGrid "Bounced Address", Mailgun `suppress-complaint`, SES
 * `OnAccountSuppressionList`, …).
 */
export const providerSuppressions = ['bounce', 'complaint', 'unsubscribe'] as const;
export type ProviderSuppression = (typeof providerSuppressions)[number];

/** The most UTF-16 code units a message id and an event key may have (`deliveryEventSchema` refuses more). */
export const eventIdLimits = { messageId: 1024, eventKey: 512 } as const;

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
  /**
   * The stream carried by the message (`service_stream`), exactly as sent; `null` or absent when none.
   * One that is not a stream name (`isStreamName`) is dropped with an `invalid_stream` warning.
   */
  stream?: string | null;
  /** When the provider says the event happened. */
  occurredAt: Date;
  /**
   * Identifies the event across retries: the provider's event id where it is stable, else a hash of
   * the event's identifying fields. Unique per provider (mailwarden scopes it by provider and project).
   */
  eventKey: string;
  /**
   * What the provider said that a person needs, kept in the message's timeline (receivers fill it with
   * `eventDetails`, which makes any provider text fit the limits `deliveryEventSchema` checks).
   */
  details?: EventDetails;
  /** @deprecated Use `details.diagnostic`; read as it when `details.diagnostic` is absent. */
  description?: string;
}

/**
 * What the provider said about one event, in its own words, for a person reading the message's
 * timeline. Never the raw payload. Every field is optional and capped (`eventDetailLimits`).
 */
export interface EventDetails {
  /** The SMTP status: the enhanced code (`5.1.1`) when the provider gives one, else the reply code (`550`). */
  smtpStatus?: string;
  /** The SMTP reply or the provider's reason text for a bounce, deferral or drop. */
  diagnostic?: string;
  /** The provider's own classification of a bounce (SES `Permanent/General`, SparkPost `10`, …). */
  bounceClassification?: string;
  /** A complaint's feedback type (ARF `abuse`, `fraud`, …) as the provider reported it. */
  feedbackType?: string;
  /** Why the provider refused to send (`rejected` events). */
  rejectReason?: string;
  /** The clicked link. Personal data: kept only when the instance opts in (`timeline.personalData`). */
  url?: string;
  /** The reader's user agent on an open or click. Personal data, like `url`. */
  userAgent?: string;
}

/** The most UTF-16 code units each detail keeps (`eventDetails` truncates to them; the schema refuses more). */
export const eventDetailLimits = {
  smtpStatus: 16,
  diagnostic: 500,
  bounceClassification: 100,
  feedbackType: 64,
  rejectReason: 300,
  url: 1000,
  userAgent: 300,
} as const satisfies Record<keyof EventDetails, number>;

/** The details that are personal data, dropped unless the instance opts in. */
export const personalDetails = ['url', 'userAgent'] as const satisfies readonly (keyof EventDetails)[];

const smtpStatusPattern = /^[245](?:[0-9]{2}|\.[0-9]{1,3}\.[0-9]{1,3})$/;

/** Whether `text` is an SMTP status `EventDetails.smtpStatus` accepts: `5.1.1` or `550`. */
export function isSmtpStatus(text: string): boolean {
  return smtpStatusPattern.test(text);
}

/**
 * The SMTP status an SMTP reply states, for providers that give only the text: its first enhanced code
 * (`5.1.1`), else the reply code it starts with (`550`, after an optional `smtp;`); `undefined` if none.
 */
export function smtpStatusIn(reply: unknown): string | undefined {
  if (typeof reply !== 'string') return undefined;
  const enhanced = /(?:^|[^0-9.])([245]\.[0-9]{1,3}\.[0-9]{1,3})(?![0-9.])/.exec(reply);
  if (enhanced !== null) return enhanced[1];
  return /^\s*(?:smtp;\s*)?([245][0-9]{2})(?![0-9])/i.exec(reply)?.[1];
}

/**
 * Details from what a payload holds, fitted to the limits whatever the provider sent: values that are
 * not strings, or blank, are left out; text is trimmed, U+0000 and lone surrogates become U+FFFD and
 * each field is cut to its limit (never inside a surrogate pair); an SMTP status that is not one is
 * left out. Returns `undefined` when nothing is left.
 */
export function eventDetails(raw: { [K in keyof EventDetails]?: unknown }): EventDetails | undefined {
  const details: EventDetails = {};
  let any = false;
  for (const name of Object.keys(eventDetailLimits) as (keyof EventDetails)[]) {
    const value = raw[name];
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) continue;
    let text = String(value)
      .replace(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
      .trim();
    const limit = eventDetailLimits[name];
    if (text.length > limit) text = text.slice(0, /[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? limit - 1 : limit);
    if (text === '' || (name === 'smtpStatus' && !isSmtpStatus(text))) continue;
    details[name] = text;
    any = true;
  }
  return any ? details : undefined;
}
