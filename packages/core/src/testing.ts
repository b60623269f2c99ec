// `@mailwarden/core/testing`: what an application's own tests use to prove its webhook integration. For
// each provider, a builder that turns delivery events into the request the provider really posts,
// signed or authenticated as the provider does; keys for the providers that sign; and a way to post
// the request to a running service. No test runner is needed: the kit is plain functions over node:crypto.

export {
  testEventTypes,
  type TestEvent,
  type TestEventType,
  type ReportedEvent,
  type TestWebhook,
  type TestPayload,
  type SharedSecretCredentials,
} from './testing/test-event.js';

export { sesWebhook, snsSubscriptionConfirmation, type SesWebhookOptions, type SnsSigningOptions } from './testing/ses.js';
export { sesEventBridgeWebhook, type SesEventBridgeWebhookOptions } from './testing/ses-eventbridge.js';
export { testSnsSigner, fetchTestSnsCertificate, fetchSnsCertificateTrustingTestSigner } from './testing/sns-test-signer.js';
export { sendGridWebhook, createSendGridKeyPair, type SendGridWebhookOptions } from './testing/sendgrid.js';
export { mailgunWebhook, type MailgunWebhookOptions } from './testing/mailgun.js';
export { sparkPostWebhook, type SparkPostWebhookOptions } from './testing/sparkpost.js';
export { postmarkWebhook, type PostmarkWebhookOptions } from './testing/postmark.js';
export { mandrillWebhook, type MandrillWebhookOptions } from './testing/mandrill.js';
export { brevoWebhook, type BrevoWebhookOptions } from './testing/brevo.js';
export { resendWebhook, type ResendWebhookOptions } from './testing/resend.js';
export { mailerSendWebhook, mailerSendPing, type MailerSendWebhookOptions } from './testing/mailersend.js';
export { mailjetWebhook, type MailjetWebhookOptions } from './testing/mailjet.js';
export { postalWebhook, createPostalKeyPair, signPostalBody, type PostalWebhookOptions } from './testing/postal.js';

export { webhooksFor, type WebhooksForOptions } from './testing/webhooks-for.js';
export { webhookUrl, postWebhook } from './testing/post-webhook.js';
export { dumpMemoryStore } from './memory-store/dump.js';
