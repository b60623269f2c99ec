// `@mailwarden/core/schemas`: the zod schemas of every JSON shape the service takes or returns, to
// validate input in your own HTTP layer, check responses in tests, or describe the API.

export {
  MAX_PAGE_SIZE,
  DEFAULT_PAGE_SIZE,
  MAX_BATCH_SIZE,
  factNames,
  suppressionReasonSchema,
  suppressionSchema,
  listSuppressionsQuerySchema,
  listSuppressionsResponseSchema,
  checkSuppressionQuerySchema,
  checkSuppressionResponseSchema,
  batchCheckRequestSchema,
  batchCheckResultSchema,
  batchCheckResponseSchema,
  addSuppressionRequestSchema,
  addSuppressionResponseSchema,
  removeSuppressionResponseSchema,
  messageStatusSchema,
  providerSchema,
  messageSchema,
  listMessagesQuerySchema,
  listMessagesResponseSchema,
  trackingIdSummarySchema,
  listTrackingIdsQuerySchema,
  listTrackingIdsResponseSchema,
  deliveryEventSchema,
  eventWarningSchema,
  applyEventsResultSchema,
  errorBodySchema,
} from './schemas.js';
export type * from './api-shapes.js';
