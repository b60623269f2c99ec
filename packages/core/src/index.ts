export { createMailwarden, type Mailwarden, type MailwardenOptions } from './mailwarden.js';

export { MailwardenError, isMailwardenError, errorStatus, errorCodes, errorDocsUrl } from './errors.js';
export type { ErrorCode, ErrorBody, MailwardenErrorOptions } from './errors.js';

export { normalizeEmail, tryNormalizeEmail, type NormalizeResult } from './email/normalize.js';
export { createEmailHasher, isEmailHash, type EmailHasher } from './email/hash.js';

export { suppressionReasons, strongerReason, reasonRank, reasonFromRank, type SuppressionReason } from './suppressions/reason.js';
export { defaultSuppressionPolicy, type SuppressionPolicy } from './suppressions/policy.js';
export type { SuppressionService } from './suppressions/service.js';
export type { FilterSuppressedOptions, FilterSuppressedResult, BlockedRecipient } from './suppressions/send-gate.js';

export {
  MAX_TRACKING_ID_CODE_POINTS,
  checkTrackingId,
  assertTrackingId,
  codePointLength,
  compareCodePoints,
  trackingIdSearchKey,
  type TrackingIdCheck,
} from './tracking-id.js';

export {
  providers,
  deliveryEventTypes,
  type Provider,
  type DeliveryEvent,
  type DeliveryEventType,
  type BounceClass,
  type ProviderSuppression,
} from './events/delivery-event.js';

export { Fact, factsOf, factNamesOf, messageStatus, messageStatuses, countersOf } from './messages/facts.js';
export type { FactName, MessageStatus, Counters } from './messages/facts.js';
export { messageKey, mergeMessage, joinTrackingIds, trackingIdDeltas } from './messages/message.js';
export type { MessageRecord, TrackingIdDelta } from './messages/message.js';
export type { MessageService, TrackingIdService } from './messages/service.js';

export { createCursorCodec, type CursorCodec, type CursorScope } from './cursor.js';

export type {
  Store,
  StoredEvent,
  EventOutcome,
  SuppressionRecord,
  SuppressionPosition,
  MessagePosition,
  MessageQuery,
  TrackingIdQuery,
  TrackingIdRecord,
} from './store/store.js';
export { createMemoryStore } from './store/memory/memory-store.js';

export * from './schemas.js';
