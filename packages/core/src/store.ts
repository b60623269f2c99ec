// `@mailwarden/core/store`: what a store implementation needs beyond the application's API. The Store
// interface and its records, the message facts and their join, the suppression reasons' ranks, and the
// keys and orders a store must reproduce exactly. Prove a store with `@mailwarden/store-test-suite`.

export type {
  Store,
  StoredEvent,
  MessageWithTimeline,
  EventOutcome,
  SuppressionMergeOutcome,
  SuppressionRecord,
  SuppressionPosition,
  SuppressionInvalidation,
  WebhookTokenClaim,
  MessagePosition,
  MessageQuery,
  SuppressionQuery,
  TrackingIdQuery,
  TrackingIdRecord,
  StatsQuery,
  StoredSoftBounceRule,
  ApplyEventsOptions,
  SoftBounceInput,
  DeliveryInput,
  AllowlistEntry,
  AllowlistQuery,
  AddressErasure,
  ErasureResult,
} from './store/store.js';
export type {
  AlertChange,
  AlertWindow,
  AllowlistChange,
  Change,
  ChangeFeedOptions,
  ChangeKind,
  ChangePage,
  ChangeQuery,
  EndpointChange,
  MessageStatusChange,
  OutboundProgress,
  OutboundState,
  PausedStream,
  StoredAlertRule,
  StreamChange,
  SuppressionChange,
  ErasureChange,
  KeyChange,
  AuditedKey,
  SyncedKey,
} from './store/changes.js';
export { actorMatches, erasedEmail, ruleActors, CONFIG_ACTOR, type Actor } from './store/actor.js';
export { changeKinds, changeFeedRetention, DEFAULT_CHANGE_MAX_AGE_MS, DEFAULT_CHANGE_MAX_LENGTH } from './store/changes.js';
// What a store throws: `store_unavailable` when it cannot be reached, `change_cursor_expired` for a cursor retention overtook.
export { MailwardenError, isMailwardenError } from './errors.js';
export { createCheckCache, type CheckCacheOptions } from './store/check-cache.js';
export { eventOutcomeOfCode } from './store/event-outcome-codes.js';
export { recipientDomainOf } from './store/recipient-domain.js';

// The numbers stores persist (append-only: never renumbered), then the functions over them.
export { Fact, statusCodes, reasonRanks, messageStatuses, suppressionReasons } from './vocabulary.js';
export type { FactName, MessageStatus, SuppressionReason } from './vocabulary.js';
export { factsOf, factNamesOf, messageStatus, statusFacts, counterFacts, countersOf } from './messages/facts.js';
export type { Counters } from './messages/facts.js';
export { messageKey, mergeMessage, joinTrackingIds, trackingIdDeltas } from './messages/message.js';
export type { MessageRecord, TrackingIdDelta } from './messages/message.js';
export { TIMELINE_CAP, TIMELINE_LIMITS, compareTimelineEntries, insertTimelineEntry, timelineEntryId } from './messages/timeline.js';
export type { TimelineEntry } from './messages/timeline.js';
export {
  statColumns,
  statFacts,
  statsIntervals,
  intervalMs,
  HOUR_MS,
  hourOf,
  noFactTimes,
  mergeFactTimes,
  statsMoves,
  emptyBucket,
  bucketOf,
  sumHours,
} from './messages/stats.js';
export type { StatColumn, StatCounts, StatsBucket, StatsInterval, FactTimes, StatsMove } from './messages/stats.js';

export { strongerReason, reasonRank, reasonFromRank } from './suppressions/reason.js';
export {
  suppressionSources,
  provenanceWins,
  packProvenance,
  unpackProvenance,
  packRule,
  packRuleBounce,
  type SuppressionSource,
  type SuppressionProvenance,
  type SuppressionCause,
  type SoftBounceRuleCause,
  type RuleBounce,
} from './suppressions/provenance.js';
export {
  DAY_MS,
  SOFT_BOUNCE_LATENESS_MS,
  storedSoftBounceRule,
  type SuppressionRules,
  type SoftBounceRule,
  type SuppressionExpiry,
} from './suppressions/rules.js';
export { createEmailHasher, isEmailHash, type EmailHasher } from './email/hash.js';
export { compareCodePoints, codePointLength, trackingIdSearchKey } from './tracking-id.js';
export { createCursorCodec, type CursorCodec, type CursorScope } from './cursor.js';
