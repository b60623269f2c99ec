import type { DeliveryEventType, MessageStatus, Provider, SuppressionReason, SuppressionSource } from '@mailwarden/core';

// The API's enumerations as people read them. Records, so a value the API adds is a type error here.

/** Every status, in the API's precedence order. */
export const statusLabels: Record<MessageStatus, string> = {
  complained: 'Complained',
  bounced: 'Bounced',
  rejected: 'Rejected',
  delivered: 'Delivered',
  soft_bounced: 'Soft bounced',
  deferred: 'Deferred',
  sent: 'Sent',
};

export function isStatus(value: string): value is MessageStatus {
  return Object.hasOwn(statusLabels, value);
}

export const providerLabels: Record<Provider, string> = {
  ses: 'Amazon SES',
  sendgrid: 'SendGrid',
  mailgun: 'Mailgun',
  sparkpost: 'SparkPost',
  postmark: 'Postmark',
  mandrill: 'Mandrill',
  resend: 'Resend',
  brevo: 'Brevo',
  mailjet: 'Mailjet',
  mailersend: 'MailerSend',
  postal: 'Postal',
};

export function isProvider(value: string): value is Provider {
  return Object.hasOwn(providerLabels, value);
}

export const eventLabels: Record<DeliveryEventType, string> = {
  sent: 'Sent',
  delivered: 'Delivered',
  deferred: 'Deferred',
  bounced: 'Bounced',
  complained: 'Complained',
  rejected: 'Rejected',
  opened: 'Opened',
  clicked: 'Clicked',
  unsubscribed: 'Unsubscribed',
  unknown: 'Unknown event',
};

export const reasonLabels: Record<SuppressionReason, string> = {
  hard_bounce: 'Hard bounce',
  complaint: 'Complaint',
  manual: 'Manual',
};

/** How a suppression came to be; `null` is a record stored before mailwarden kept provenance. */
export function sourceLabel(source: SuppressionSource | null | undefined): string {
  switch (source) {
    case 'api':
      return 'Added through the API or the dashboard';
    case 'webhook':
      return 'Provider event';
    case 'import':
      return 'Imported with the CLI';
    case 'unsubscribe':
      return 'The recipient unsubscribed';
    default:
      return 'Not recorded';
  }
}

/**
 * What an unsubscribe adds beside its reason: its reason is `manual` and its source `unsubscribe`
 * (docs/decisions.md, "How an unsubscribe is shown"), which this tells apart from a manual add.
 */
export const UNSUBSCRIBED = 'Unsubscribed';

/** The reason as a sentence reads it: "Hard bounce", or "Manual, unsubscribed" for an unsubscribe. */
export function reasonText(reason: SuppressionReason, source: SuppressionSource | null | undefined): string {
  return source === 'unsubscribe' ? `${reasonLabels[reason]}, ${UNSUBSCRIBED.toLowerCase()}` : reasonLabels[reason];
}

/** The name people read for the project-wide list, which holds entries of no stream and blocks every stream. */
export const PROJECT_WIDE = 'Project-wide';
