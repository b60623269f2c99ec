// The API's shapes as types: what the service and the HTTP API answer. One list, exported by
// `@mailwarden/core` and by `@mailwarden/core/schemas` beside the schemas they are inferred from.
export type {
  Suppression,
  SuppressionPage,
  SuppressionCheck,
  BatchCheckResult,
  Message,
  MessagePage,
  MessageDetail,
  TimelineEntryView,
  TrackingIdSummary,
  TrackingIdPage,
  EventWarning,
  ApplyEventsResult,
  ListSuppressionsQuery,
  ListMessagesQuery,
  ListTrackingIdsQuery,
  StatsRangeQuery,
  Stats,
  StatsBucketView,
} from './schemas.js';
