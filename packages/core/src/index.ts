export { createMailwarden, type Mailwarden, type MailwardenOptions } from './mailwarden.js';
export type { MailwardenMetrics } from './metrics.js';
export type {
  MailwardenHooks,
  EventNotice,
  SuppressedNotice,
  SoftBounceRuleNotice,
  UnsuppressedNotice,
  MailwardenLogger,
} from './services/hooks.js';

export { MailwardenError, isMailwardenError, errorStatus, errorCodes, errorDocsUrl } from './errors.js';
export type { ErrorCode, ErrorBody, MailwardenErrorOptions } from './errors.js';

export { normalizeEmail, tryNormalizeEmail, type NormalizeResult } from './email/normalize.js';
export { MAX_ADDRESS_SEARCH_LENGTH, normalizeAddressDomain, normalizeAddressPrefix } from './email/search.js';

export { suppressionReasons, type SuppressionReason } from './vocabulary.js';
export { strongerReason } from './suppressions/reason.js';
export {
  suppressionSources,
  type SuppressionSource,
  type SuppressionProvenance,
  type SuppressionCause,
  type SoftBounceRuleCause,
  type RuleBounce,
} from './suppressions/provenance.js';
export {
  checkSuppressionRules,
  DEFAULT_SOFT_BOUNCE_EXPIRY_DAYS,
  SOFT_BOUNCE_LATENESS_MS,
  type SuppressionRules,
  type SoftBounceRule,
  type SuppressionExpiry,
} from './suppressions/rules.js';
export {
  checkAlertRules,
  storedAlertRule,
  DEFAULT_ALERT_WINDOW,
  DEFAULT_ALERT_MIN_MESSAGES,
  DEFAULT_BOUNCE_RATE,
  DEFAULT_COMPLAINT_RATE,
  DEFAULT_RESOLVE_RATIO,
  MAX_ALERT_WINDOW,
  type AlertRules,
} from './suppressions/alerts.js';
export type { ChangeService, ListChangesQuery, FollowChangesOptions } from './services/change-service.js';
export { toChangeView, parseChangeKinds, changeFamilies, type ChangeFamily, type ChangeKindFilter } from './services/change-view.js';
export type { AlertService, AlertStatusQuery } from './services/alert-service.js';
export type { StreamService } from './services/stream-service.js';
export { erasureForms, type ErasureService } from './services/erasure-service.js';
export { parseActorFilter, type ActorOption } from './services/actor-option.js';
export { changeKinds, type ChangeKind, type Change } from './store/changes.js';
export { defaultSuppressionPolicy, type SuppressionDecision, type SuppressionPolicy } from './suppressions/policy.js';
export type { SuppressionService, AddOptions, RemoveOptions, StreamOption } from './services/suppression-service.js';
export type { AllowlistService } from './services/allowlist-service.js';
export {
  checkOutboundOptions,
  DEFAULT_OUTBOUND_SCHEDULE,
  type OutboundOptions,
  type OutboundEndpoint,
  type OutboundTimers,
} from './outbound/options.js';
export type { OutboundService } from './outbound/outbound-service.js';
export type { FilterSuppressedOptions, FilterSuppressedResult, BlockedRecipient } from './services/send-gate.js';
export type { UnsubscribeLink, UnsubscribeLinks, UnsubscribeLinksOptions, UnsubscribeTarget } from './unsubscribe/links.js';
export { MIN_UNSUBSCRIBE_SECRET_LENGTH } from './unsubscribe/token.js';

export { MAX_STREAM_LENGTH, assertStreamName, isStreamName } from './stream.js';
export { MAX_TRACKING_ID_CODE_POINTS, checkTrackingId, assertTrackingId, type TrackingIdCheck } from './tracking-id.js';

export {
  providers,
  deliveryEventTypes,
  type Provider,
  type DeliveryEvent,
  type DeliveryEventType,
  type BounceClass,
  type ProviderSuppression,
  type EventDetails,
  eventDetails,
  eventDetailLimits,
} from './events/delivery-event.js';

export { messageStatuses, type FactName, type MessageStatus } from './vocabulary.js';
export type { Counters } from './messages/facts.js';
export type { MessageService, TrackingIdService } from './services/message-service.js';

// The store an application passes to createMailwarden. Writing a store: '@mailwarden/core/store'.
export type { Store } from './store/store.js';
export {
  createMemoryStore,
  type MemoryRetention,
  type MemoryStore,
  type MemoryStoreOptions,
  type RetainedEntries,
} from './memory-store/memory-store.js';

// What the API and the services answer, and their limits.
export {
  MAX_PAGE_SIZE,
  DEFAULT_PAGE_SIZE,
  MAX_BATCH_SIZE,
  MAX_BULK_SIZE,
  MAX_CHANGE_PAGE_SIZE,
  DEFAULT_CHANGE_PAGE_SIZE,
} from './api-schemas.js';
export type * from './api-shapes.js';

// Send side: attach a tracking ID (and a stream) to each provider's send request.
export {
  SERVICE_STREAM_KEY,
  SERVICE_STREAM_HEADER,
  type StreamCarrierOptions,
} from './carriers/stream-carrier.js';
export {
  LIST_UNSUBSCRIBE,
  LIST_UNSUBSCRIBE_POST,
  type UnsubscribeCarrierOptions,
  type UnsubscribeLinkHeaders,
  type UnsubscribeLinkOf,
} from './carriers/unsubscribe-headers.js';
export {
  SERVICE_ID_HEADER,
  attachSesHeaderTrackingId,
  readSesHeaderTrackingId,
  readSesHeaderStream,
  encodeServiceIdHeader,
  decodeHeaderValue,
  type SesMessageHeader,
  type SesV2HeadersRequest,
  type SesBulkEntryHeaders,
  type SesDestination,
  type SesHeaderCarrierOptions,
} from './carriers/ses-header.js';
export {
  SERVICE_ID_TAG,
  SERVICE_ID_ENCODING_TAG,
  attachSesTagsTrackingId,
  readSesTagsTrackingId,
  readSesTagsStream,
  sesTrackingTags,
  type SesApiVersion,
  type SesMessageTag,
  type SesV1TagsRequest,
  type SesV2TagsRequest,
  type SesBulkEntryTags,
} from './carriers/ses-tags.js';
export {
  SENDGRID_CUSTOM_ARGS_MAX_BYTES,
  attachSendGridTrackingId,
  readSendGridTrackingId,
  readSendGridStream,
  type SendGridCarrierOptions,
  type SendGridMailRequest,
  type SendGridPersonalization,
} from './carriers/sendgrid.js';
export {
  MAILGUN_OPTIONS_MAX_BYTES,
  MAILGUN_VARIABLES_HEADER,
  MAILGUN_SERVICE_ID_ENCODING_VARIABLE,
  attachMailgunTrackingId,
  attachMailgunSmtpTrackingId,
  readMailgunTrackingId,
  readMailgunLegacyTrackingId,
  readMailgunStream,
  readMailgunLegacyStream,
  type MailgunMessageFields,
  type MailgunCarrierOptions,
  type MailgunSmtpCarrierOptions,
  type MailgunSmtpHeaders,
  type MailgunSmtpHeaderValue,
} from './carriers/mailgun.js';
export {
  BREVO_CUSTOM_HEADER,
  attachBrevoTrackingId,
  readBrevoTrackingId,
  readBrevoStream,
  type BrevoCarrierOptions,
  type BrevoWithTrackingId,
} from './carriers/brevo.js';
export {
  SPARKPOST_METADATA_MAX_BYTES,
  attachSparkPostTrackingId,
  readSparkPostTrackingId,
  readSparkPostStream,
  type SparkPostCarrierOptions,
} from './carriers/sparkpost.js';
export {
  POSTMARK_METADATA_MAX_FIELDS,
  POSTMARK_METADATA_VALUE_MAX,
  attachPostmarkTrackingId,
  readPostmarkTrackingId,
  readPostmarkStream,
  splitPostmarkTrackingId,
  type PostmarkCarrierOptions,
  type PostmarkWithTrackingId,
} from './carriers/postmark.js';
export {
  attachPostalTrackingId,
  readPostalTrackingId,
  POSTAL_TAG_MAX_CHARACTERS,
  type PostalCarrierOptions,
  type PostalWithTrackingId,
} from './carriers/postal.js';
export {
  MANDRILL_METADATA_MAX_BYTES,
  attachMandrillTrackingId,
  readMandrillStream,
  readMandrillTrackingId,
  type MandrillCarrierOptions,
  type MandrillWithTrackingId,
} from './carriers/mandrill.js';
export {
  attachResendTrackingId,
  readResendStream,
  readResendTrackingId,
  RESEND_MAX_TAGS,
  type ResendCarrierOptions,
  type ResendTag,
  type ResendWithTrackingId,
} from './carriers/resend.js';
export { attachMailjetTrackingId, readMailjetStream, readMailjetTrackingId, type MailjetCarrierOptions } from './carriers/mailjet.js';
export {
  attachMailerSendTrackingId,
  mailerSendTrackingTags,
  readMailerSendStream,
  readMailerSendTrackingId,
  MAILERSEND_MAX_TAGS,
  type MailerSendCarrierOptions,
  type MailerSendWithTrackingId,
} from './carriers/mailersend.js';

// Webhook side: verify, parse and normalize each provider's delivery events.
export type { WebhookRequest } from './webhooks/request.js';
export type { WebhookReceipt } from './webhooks/receipt.js';
export type { ProviderWebhook, WebhookEnvironment } from './webhooks/provider.js';
export type { BasicAuthCredentials, SharedSecretAuth } from './webhooks/auth.js';
export { createWebhookIngest, type IngestResult, type IngestWebhook, type ProviderAuth, type WebhookOptions } from './webhooks/ingest.js';
export { createSesWebhook, parseSesWebhook, type SesWebhookAuth } from './webhooks/ses.js';
export {
  createSesEventBridgeWebhook,
  parseSesEventBridgeWebhook,
  type SesEventBridgeWebhookAuth,
} from './webhooks/ses-eventbridge.js';
export { routeProvider, webhookRoutes, type WebhookRoute } from './webhooks/routes.js';
export { createSnsVerifier, type SnsVerifier } from './webhooks/sns.js';
export {
  createSendGridWebhook,
  parseSendGridWebhook,
  type ParseSendGridWebhookOptions,
  type SendGridWebhookAuth,
} from './webhooks/sendgrid.js';
export { createMailgunWebhook, parseMailgunWebhook, parseMailgunLegacyWebhook, type MailgunWebhookAuth } from './webhooks/mailgun.js';
export { createSparkPostWebhook, parseSparkPostWebhook, type SparkPostWebhookAuth } from './webhooks/sparkpost.js';
export { createBrevoWebhook, parseBrevoWebhook, type BrevoWebhookAuth } from './webhooks/brevo.js';
export { createPostmarkWebhook, parsePostmarkWebhook, type PostmarkWebhookAuth } from './webhooks/postmark.js';
export { createPostalWebhook, parsePostalWebhook, type PostalWebhookAuth } from './webhooks/postal.js';
export { createMandrillWebhook, parseMandrillWebhook, type MandrillWebhookAuth } from './webhooks/mandrill.js';
export { createResendWebhook, parseResendWebhook, type ResendWebhookAuth } from './webhooks/resend.js';
export { createMailjetWebhook, parseMailjetWebhook, type MailjetWebhookAuth } from './webhooks/mailjet.js';
export {
  createMailerSendWebhook,
  parseMailerSendWebhook,
  MAILERSEND_TEST_SECRET,
  type MailerSendWebhookAuth,
} from './webhooks/mailersend.js';

// HTTP: the framework-free handler the Express and Fastify bindings translate to.
export { createHttpHandler, type DashboardFiles, type HttpHandler, type HttpHandlerOptions, type HttpLogger } from './http/handler.js';
export type { HttpRequest, HttpResponse, HttpHeaders } from './http/request.js';
export { answerClientError, answerConnect } from './http/client-errors.js';
export { unsubscribePageContentSecurityPolicy } from './http/unsubscribe-page.js';
export {
  checkRateLimits,
  createRateLimiter,
  defaultRateLimits,
  RATE_SYNC_INTERVAL_MS,
  rateSyncSize,
  type RateLimitBucket,
  type RateLimitExceeded,
  type RateLimiter,
  type RateLimitOptions,
} from './http/rate-limits.js';
export {
  apiScopes,
  apiKeyHash,
  isApiKeyHash,
  isApiKeyName,
  unnamedKeyName,
  type ApiKeys,
  type ApiKeyScope,
  type ApiKeyEntry,
  type ApiKeyGrant,
  type ApiScope,
} from './http/api-keys.js';
export { unsubscribeRoutes } from './http/unsubscribe-routes.js';
export { routes, type Route, type RouteAuth, type RouteMethod } from './http/routes.js';
export { createOpenApiDocument, type OpenApiOptions } from './http/openapi.js';
