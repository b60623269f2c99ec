import { z } from 'zod';
import { errorCodes } from './errors.js';
import {
  bounceClasses,
  deliveryEventTypes,
  eventDetailLimits,
  eventIdLimits,
  isSmtpStatus,
  providers,
  providerSuppressions,
} from './events/delivery-event.js';
import { Fact, messageStatuses, suppressionReasons, type FactName } from './vocabulary.js';
import { storableTextProblem } from './storable-text.js';
import { suppressionSources } from './suppressions/provenance.js';
import { changeKinds } from './store/changes.js';

// The spec's wire shapes (and mailwarden's extensions, docs/decisions.md), for users and for the OpenAPI document. The service
// returns exactly these shapes, so an embedded call and an HTTP call give the same JSON.

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_BATCH_SIZE = 100;
/** Items per bulk add or bulk remove (`suppressions.addMany`, `POST …/suppressions/bulk`). */
export const MAX_BULK_SIZE = 1000;

const pageLimit = z
  .union([
    z.int(),
    z
      .string()
      .regex(/^[0-9]{1,9}$/, 'limit must be a whole number')
      .transform(Number),
  ])
  .pipe(z.int().min(1).max(MAX_PAGE_SIZE))
  .optional()
  .meta({ description: `Results per page, 1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}.` });
const cursor = z.string().optional().meta({ description: 'Opaque cursor: the `next_cursor` of the previous page.' });
const nextCursor = z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; `null` on the last page.' });
const timestamp = z.iso.datetime({ precision: 3 }).meta({ description: 'ISO 8601 UTC, milliseconds, trailing Z.' });

export const suppressionReasonSchema = z.enum(suppressionReasons).meta({ id: 'SuppressionReason' });

const isoDateTime = z.iso.datetime({ offset: true });
const isoDate = z.iso.date();
/**
 * Whether a text is a time as requests give them: an ISO 8601 date-time with `Z` or an offset, at most
 * millisecond precision, or a date (midnight UTC). `Date.parse` reads what passes.
 */
export function isRequestTime(text: string): boolean {
  // Date-times first: they are the common case, and a failed parse builds zod's error objects (measured:
  // the other order made a million-row import's time checks 2 s of CPU more).
  return (isoDateTime.safeParse(text).success || isoDate.safeParse(text).success) && !/\.\d{4}/.test(text);
}
/** A bound of a time range in a listing's query (`isRequestTime`). Parsed with `Date.parse` by the services. */
const timeBound = (description: string) =>
  z
    .string()
    .refine(isRequestTime, {
      message: 'must be an ISO 8601 date-time with Z or an offset and at most milliseconds (2026-11-01T00:00:00Z), or a date (2026-11-01)',
    })
    .optional()
    .meta({ description, examples: ['2026-11-01T00:00:00Z', '2026-11-01T09:30:00.250+01:00', '2026-11-01'] });

export const providerSchema = z.enum(providers).meta({ id: 'Provider' });
export const suppressionSourceSchema = z.enum(suppressionSources).nullable().meta({
  id: 'SuppressionSource',
  description:
    "How the suppression came to be: `api` (added through the API), `webhook` (a provider event: a bounce or a complaint), `import` (the CLI), `unsubscribe` (the recipient asked: a provider's unsubscribe event, a one-click link, or an unsubscribe recorded as such; its reason is `manual`). `null` for suppressions stored before provenance was recorded.",
});
/** An event as a suppression shows it: its `cause`, and each bounce of a soft-bounce rule's window. */
const suppressionEventSchema = z.object({
  provider: providerSchema,
  message_id: z.string().nullable().meta({ description: "The provider's message ID, null when the event named none." }),
  message: z.string().nullable().meta({
    description:
      'Opens the message the event was about: `GET /projects/{projectId}/messages/{message}` (its `id` in the listing); null when the event named no message ID. Retention may have removed the message since (404).',
  }),
  event_id: z.string().meta({ description: "The event's id in its message's timeline (32 hex)." }),
  event_at: timestamp,
  diagnostic: z.string().nullable().meta({
    description: 'The SMTP reply (or status) for a bounce, the feedback type for a complaint; null when the provider gave none.',
  }),
});
export const suppressionCauseSchema = suppressionEventSchema.nullable().meta({
  id: 'SuppressionCause',
  description:
    "For a `webhook` suppression, the event that caused it: of the strongest reason, the earliest; for an `unsubscribe`, the provider's unsubscribe event when one caused it. `null` otherwise.",
});
/**
 * Provenance, beside the spec's fields of a suppression. Always in mailwarden's answers, but not
 * required by the schema: the spec's fields stay the whole contract a client may rely on.
 */
const provenanceFields = { source: suppressionSourceSchema.optional(), cause: suppressionCauseSchema.optional() };

export const suppressionRuleSchema = z
  .object({
    bounces: z.int().min(1).meta({ description: 'The soft bounces the rule counts.' }),
    days: z.number().meta({ description: "Within this many days of each other (by the events' own times)." }),
    reset_on_delivery: z.boolean().meta({ description: 'Whether a delivery to the address resets the count.' }),
    events: z.array(suppressionEventSchema).meta({
      description: 'The soft bounces of distinct messages that met the rule, oldest first; the last is the `cause`.',
    }),
  })
  .meta({
    id: 'SuppressionRule',
    description:
      'Only when the soft-bounce rule made the suppression (reason `hard_bounce`, source `webhook`): the rule as configured and the bounces that met it (docs/decisions.md, "The soft-bounce rule").',
  });
/**
 * What issue 25 added to a suppression, each only when set, so an answer without them is as it was:
 * when it stops suppressing, the soft-bounce rule that made it, and that it was added while allowlisted.
 */
const expiryFields = {
  expires_at: timestamp.optional().meta({
    description:
      'When it stops suppressing (ISO 8601 UTC, milliseconds); absent when it never does. Checks and listings skip it from then on.',
  }),
};
const ruleFields = {
  rule: suppressionRuleSchema.optional(),
  allowlisted: z.literal(true).optional().meta({
    description:
      'Only when it was added by hand or imported while the address was allowlisted: automatic rules never suppress it, an operator did.',
  }),
};

/** The stream a request names, as every suppression request takes it (`assertStreamName` checks it). */
const streamName = z.string().meta({ examples: ['marketing'] });
/** A suppression's list, shown last and only when it is a stream's: answers of the project-wide list are as they were. */
const suppressionStream = streamName
  .optional()
  .meta({ description: 'The stream whose list holds it; absent for the project-wide list (docs/decisions.md, "Streams").' });

export const suppressionSchema = z
  .object({
    hash: z.string().meta({ description: 'Hash of the normalized address; the id in the delete path.' }),
    email: z.string(),
    reason: suppressionReasonSchema,
    created_at: timestamp,
    ...provenanceFields,
    ...expiryFields,
    ...ruleFields,
    stream: suppressionStream,
  })
  .meta({ id: 'Suppression' });

export const listSuppressionsQuerySchema = z.object({
  stream: z
    .string()
    .optional()
    .meta({
      description:
        "The list: this stream's (1 to 64 lower-case letters, digits, `-` and `_`, starting with a letter or digit; `invalid_stream` otherwise); absent or empty for the project-wide list.",
      examples: ['marketing'],
    }),
  reason: suppressionReasonSchema.optional().meta({ description: 'Only suppressions with this reason.' }),
  emailPrefix: z
    .string()
    .optional()
    .meta({
      description:
        'Only suppressions whose address starts with this text, compared as addresses are stored (trimmed, lower-cased, a non-ASCII domain in IDNA form): any text is a search; empty means no filter; at most 254 characters.',
      examples: ['jane', 'Jane.Doe@Ex'],
    }),
  from: timeBound('Only suppressions created at or after this time (inclusive).'),
  to: timeBound('Only suppressions created before this time (exclusive).'),
  expiring: z
    .union([z.boolean(), z.enum(['true', 'false'])])
    .transform((value) => value === true || value === 'true')
    .pipe(z.boolean())
    .optional()
    .meta({ description: '`true`: only suppressions that expire (with an `expires_at`); `false`: only those that never do.' }),
  limit: pageLimit,
  cursor,
});
export const listSuppressionsResponseSchema = z
  .object({ items: z.array(suppressionSchema), next_cursor: nextCursor, count: z.int().min(0) })
  .meta({ id: 'SuppressionPage' });

/** What a stream named in a suppression request must be (`assertStreamName`). */
const STREAM_RULE = '1 to 64 lower-case letters, digits, `-` and `_`, starting with a letter or digit (`invalid_stream` otherwise)';
/**
 * The list a suppression request names (docs/http.md, "Streams"). As a query parameter, empty means none,
 * as for the listing filters; as a body field, `null` does.
 */
const streamParameter = (what: string) =>
  z
    .string()
    .optional()
    .meta({ description: `${what}: ${STREAM_RULE}; absent or empty for the project-wide list.`, examples: ['marketing'] });
const streamBodyField = (what: string) =>
  z
    .string()
    .nullable()
    .optional()
    .meta({ description: `${what}: ${STREAM_RULE}; absent or null for the project-wide list.`, examples: ['marketing'] });
/** The sources a request may record (`webhook` is the service's own); `unsubscribe` for a sender's own preference page. */
export const requestSourceSchema = z.enum(['api', 'import', 'unsubscribe']);

export const checkSuppressionQuerySchema = z.object({
  email: z.string().meta({ description: 'The address to check; echoed as sent. Encode `+` as `%2B`.' }),
  stream: streamParameter("Check for mail of this stream: the project-wide list, then this stream's"),
});
export const removeSuppressionQuerySchema = z.object({
  stream: streamParameter("Remove it from this stream's list only"),
});
/** Which list holds an address checked for a stream; absent when the check named none (answers as the spec's). */
const checkedStream = z.string().nullable().optional().meta({
  description:
    'Only when the check named a stream: `null` when the project-wide list holds the address (it answers when both do), else the stream.',
});
export const checkSuppressionResponseSchema = z
  .union([
    z.object({
      email: z.string(),
      suppressed: z.literal(true),
      reason: suppressionReasonSchema,
      created_at: timestamp,
      ...provenanceFields,
      ...expiryFields,
      ...ruleFields,
      stream: checkedStream,
    }),
    z.object({ email: z.string(), suppressed: z.literal(false) }),
  ])
  .meta({ id: 'SuppressionCheck' });

export const batchCheckRequestSchema = z.object({
  emails: z
    .array(z.string())
    .max(MAX_BATCH_SIZE)
    .meta({ description: `0 to ${MAX_BATCH_SIZE} addresses.` }),
  stream: streamBodyField("Check for mail of this stream: the project-wide list, then this stream's"),
});
export const bulkCheckRequestSchema = z.object({
  emails: z
    .array(z.string())
    .max(MAX_BULK_SIZE)
    .meta({ description: `0 to ${MAX_BULK_SIZE} addresses.` }),
  stream: streamBodyField("Check for mail of this stream: the project-wide list, then this stream's"),
});
export const batchCheckResultSchema = z.union([
  z.object({ email: z.string(), suppressed: z.literal(true), reason: suppressionReasonSchema, ...expiryFields, stream: checkedStream }),
  z.object({ email: z.string(), suppressed: z.literal(false) }),
]);
export const batchCheckResponseSchema = z.object({ results: z.array(batchCheckResultSchema) }).meta({ id: 'SuppressionBatchCheck' });

/** When a suppression given by hand stops: a time, or seconds from now; never both (docs/http.md, "Suppressions that expire"). */
const expiryRequestFields = {
  expires_at: timeBound(
    "When it stops suppressing: an ISO 8601 date-time with Z or an offset (at most milliseconds), or a date (midnight UTC); after now. Not with `ttl`. Default: the project's expiry rules, else never.",
  ),
  ttl: z.int().min(1).optional().meta({ description: 'Seconds from now until it stops suppressing (at least 1). Not with `expires_at`.' }),
};

export const addSuppressionRequestSchema = z.object({
  email: z.string(),
  stream: streamBodyField("Add it to this stream's list"),
  ...expiryRequestFields,
  source: requestSourceSchema.optional().meta({
    description: "Recorded as its `source`. Default `api`; `unsubscribe` when the recipient asked (a sender's own preference page).",
  }),
});
export const addSuppressionResponseSchema = suppressionSchema;

const bulkItemError = z
  .object({ code: z.enum(errorCodes), message: z.string() })
  .meta({ description: 'Why this item was not applied; the others were.' });

export const bulkAddItemSchema = z
  .object({
    email: z.string(),
    reason: suppressionReasonSchema
      .optional()
      .meta({ description: 'Default `manual`. `hard_bounce` and `complaint` carry a list over from a provider.' }),
    created_at: timeBound('When the address was suppressed (a provider export keeps it); default now. Not in the future.'),
    ...expiryRequestFields,
  })
  .meta({ id: 'BulkSuppressionItem' });
export const bulkAddRequestSchema = z
  .object({
    items: z
      .array(bulkAddItemSchema)
      .max(MAX_BULK_SIZE)
      .meta({ description: `0 to ${MAX_BULK_SIZE} items.` }),
    source: requestSourceSchema.optional().meta({
      description:
        "Recorded as each new suppression's `source`. Default `api`; the CLI sends `import`; `unsubscribe` when the recipients asked.",
    }),
    stream: streamBodyField("Every item goes to this stream's list"),
  })
  .meta({ id: 'BulkSuppressionRequest' });
export const bulkAddResultSchema = z
  .union([
    z.object({
      email: z.string(),
      status: z.enum(['created', 'upgraded', 'present']).meta({
        description:
          '`created`: it was not suppressed. `upgraded`: it was, with the weaker `previous_reason`, now this reason. `present`: it was, with this reason or a stronger one (an earlier time given moves its `created_at` back).',
      }),
      hash: z.string(),
      previous_reason: suppressionReasonSchema.optional(),
    }),
    z.object({
      email: z.string().nullable().meta({ description: "The item's email as sent; null when it was not a string." }),
      status: z.literal('invalid'),
      error: bulkItemError,
    }),
  ])
  .meta({ id: 'BulkSuppressionResult' });
export const bulkAddResponseSchema = z.object({ results: z.array(bulkAddResultSchema) }).meta({ id: 'BulkSuppressionResults' });

export const bulkRemoveItemSchema = z
  .union([z.object({ email: z.string() }), z.object({ hash: z.string() })])
  .meta({ id: 'BulkRemoveItem', description: 'An address, or the hash the API lists it by.' });
export const bulkRemoveRequestSchema = z
  .object({
    items: z
      .array(bulkRemoveItemSchema)
      .max(MAX_BULK_SIZE)
      .meta({ description: `0 to ${MAX_BULK_SIZE} items.` }),
    stream: streamBodyField("Every item is removed from this stream's list only"),
  })
  .meta({ id: 'BulkRemoveRequest' });
export const bulkRemoveResultSchema = z
  .union([
    z.object({
      hash: z.string(),
      deleted: z.boolean().meta({ description: 'false: no suppression had this hash (or an earlier item removed it).' }),
    }),
    z.object({ status: z.literal('invalid'), error: bulkItemError }),
  ])
  .meta({ id: 'BulkRemoveResult' });
export const bulkRemoveResponseSchema = z.object({ results: z.array(bulkRemoveResultSchema) }).meta({ id: 'BulkRemoveResults' });

export const removeSuppressionResponseSchema = z
  .object({
    deleted: z.literal(true),
    hash: z.string(),
    stream: streamName.optional().meta({ description: "Only when a stream's list was named: that stream." }),
  })
  .meta({ id: 'SuppressionRemoved' });

export const allowlistEntrySchema = z
  .object({
    entry: z.string().meta({
      description: "The normalized address, or `@` and the normalized domain (the recipient's domain exactly, no subdomains).",
      examples: ['seed@example.com', '@example.com'],
    }),
    kind: z.enum(['address', 'domain']),
    created_at: timestamp,
  })
  .meta({ id: 'AllowlistEntry' });
export const listAllowlistQuerySchema = z.object({ limit: pageLimit, cursor });
export const listAllowlistResponseSchema = z
  .object({ items: z.array(allowlistEntrySchema), next_cursor: nextCursor, count: z.int().min(0) })
  .meta({ id: 'AllowlistPage' });
export const addAllowlistEntryRequestSchema = z.object({
  entry: z.string().meta({
    description: 'An address (normalized as suppressions are), or `@` and a domain; `invalid_email` otherwise.',
    examples: ['seed@example.com', '@example.com'],
  }),
});

export const messageStatusSchema = z.enum(messageStatuses).meta({ id: 'MessageStatus' });
export const factNames = Object.keys(Fact) as [FactName, ...FactName[]];

/** The message's id in the API: `messageKey(provider, messageId, recipient)`, 32 lower-case hex characters. */
export const messageIdentifierSchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, 'must be a message id: 32 lower-case hex characters, the `id` of a listed message')
  .meta({ description: "The message's id: 32 lower-case hex characters, stable for its provider, provider message ID and recipient." });

export const messageSchema = z
  .object({
    id: z.string().meta({ description: 'Opens the message: `GET /projects/{projectId}/messages/{id}`. 32 lower-case hex characters.' }),
    messageId: z.string(),
    recipient: z.string(),
    status: messageStatusSchema,
    trackingId: z.string().nullable(),
    stream: z
      .string()
      .optional()
      .meta({ description: 'The stream the message was sent in; absent when it was sent in none.', examples: ['weekly-digest'] }),
    provider: providerSchema,
    facts: z.array(z.enum(factNames)).meta({ description: 'Everything known to have happened to the message.' }),
    firstEventAt: timestamp,
    lastEventAt: timestamp,
  })
  .meta({ id: 'Message' });

export const timelineEntrySchema = z
  .object({
    id: z.string().meta({ description: 'Identifies the event within the timeline; breaks ties of time. 32 hex characters.' }),
    eventKey: z.string().meta({ description: "The provider's event id, or mailwarden's hash of the event's identifying fields." }),
    type: z.enum(deliveryEventTypes),
    provider: providerSchema,
    occurredAt: timestamp,
    bounceClass: z.enum(bounceClasses).optional(),
    providerSuppression: z.enum(providerSuppressions).optional(),
    smtpStatus: z
      .string()
      .optional()
      .meta({ description: 'Enhanced SMTP status (`5.1.1`), or the reply code (`550`) when the provider gives no other.' }),
    diagnostic: z.string().optional().meta({ description: "The SMTP reply or the provider's reason, at most 500 characters." }),
    bounceClassification: z.string().optional().meta({ description: "The provider's own classification of the bounce." }),
    feedbackType: z.string().optional().meta({ description: "The complaint's feedback type (`abuse`, …)." }),
    rejectReason: z.string().optional().meta({ description: 'Why the provider refused to send.' }),
    url: z.string().optional().meta({ description: 'The clicked link; only when the service keeps personal data.' }),
    userAgent: z.string().optional().meta({ description: "The reader's user agent; only when the service keeps personal data." }),
  })
  .meta({ id: 'TimelineEntry' });

export const messageDetailSchema = messageSchema
  .extend({
    timeline: z
      .array(timelineEntrySchema)
      .meta({ description: 'The events, oldest first (then by `id`); past 50, the first 20 and the latest 30.' }),
  })
  .meta({ id: 'MessageDetail' });

export const listMessagesQuerySchema = z.object({
  trackingId: z.string().optional().meta({ description: 'Only messages with exactly this tracking ID (at most 128 characters).' }),
  status: messageStatusSchema.optional().meta({ description: 'Only messages with this status.' }),
  recipient: z.string().optional().meta({ description: 'Only messages to this address (compared normalized, as suppressions are).' }),
  recipientPrefix: z
    .string()
    .optional()
    .meta({
      description:
        'Only messages whose recipient starts with this text, compared as addresses are stored (trimmed, lower-cased, a non-ASCII domain in IDNA form): any text is a search; empty means no filter; at most 254 characters.',
      examples: ['bob', 'Bob.Smith@Ex'],
    }),
  recipientDomain: z
    .string()
    .optional()
    .meta({
      description:
        "Only messages whose recipient's domain is this domain (a leading `@` allowed), compared as addresses are stored (lower-cased, IDNA, no trailing dot); subdomains are other domains; empty means no filter; at most 254 characters.",
      examples: ['example.com', '@Bücher.example'],
    }),
  provider: providerSchema.optional().meta({ description: 'Only messages of this provider.' }),
  stream: z
    .string()
    .optional()
    .meta({
      description:
        'Only messages sent in this stream: 1 to 64 lower-case letters, digits, `-` and `_`, starting with a letter or digit (`invalid_stream` otherwise); empty means no filter.',
      examples: ['weekly-digest'],
    }),
  from: timeBound('Only messages whose last event is at or after this time (inclusive).'),
  to: timeBound('Only messages whose last event is before this time (exclusive).'),
  limit: pageLimit,
  cursor,
});
export const listMessagesResponseSchema = z
  .object({ items: z.array(messageSchema), next_cursor: nextCursor, count: z.int().min(0) })
  .meta({ id: 'MessagePage' });

export const trackingIdSummarySchema = z
  .object({
    trackingId: z.string(),
    messages: z.int().min(0),
    delivered: z.int().min(0),
    bounced: z.int().min(0),
    complained: z.int().min(0),
    lastEventAt: timestamp,
    // Beside the spec's counters, not required by the schema (the spec's fields stay the whole contract).
    opened: z.int().min(0).optional().meta({ description: 'Of the messages, how many were opened (each once).' }),
    clicked: z.int().min(0).optional().meta({ description: 'Of the messages, how many were clicked (each once).' }),
    unsubscribed: z.int().min(0).optional().meta({ description: 'Of the messages, how many were unsubscribed from (each once).' }),
  })
  .meta({ id: 'TrackingIdSummary' });

/** A required time of a stats range: the listing filters' ISO 8601 forms. */
const statsBound = (description: string) =>
  timeBound(description)
    .unwrap()
    .meta({ description, examples: ['2026-11-01T00:00:00Z', '2026-11-01'] });
export const statsQuerySchema = z.object({
  from: statsBound('Start of the range (inclusive): a whole UTC hour, or a UTC midnight for days.'),
  to: statsBound('End of the range (exclusive), likewise; at most 31 days of hours or 731 days after from.'),
  interval: z.enum(['hour', 'day']).default('day').meta({ description: 'The buckets: UTC hours or UTC days (the default).' }),
});
const statCount = (description: string) => z.int().min(0).meta({ description });
export const statsBucketSchema = z
  .object({
    start: timestamp,
    delivered: statCount('Messages delivered in this bucket (each counted once, at its earliest event establishing it).'),
    hardBounced: statCount('Messages that hard-bounced.'),
    softBounced: statCount('Messages that soft-bounced (a message that did both counts in both).'),
    complained: statCount('Messages complained about.'),
    opened: statCount('Messages opened (unique: the first open).'),
    clicked: statCount('Messages clicked (unique: the first click).'),
    unsubscribed: statCount('Messages unsubscribed from (unique).'),
  })
  .meta({ id: 'StatsBucket' });
export const statsResponseSchema = z
  .object({
    trackingId: z.string().nullable().meta({ description: 'The tracking ID counted, null for the whole project.' }),
    interval: z.enum(['hour', 'day']),
    from: timestamp,
    to: timestamp,
    buckets: z.array(statsBucketSchema).meta({ description: 'Every bucket of the range, oldest first, zeros included.' }),
  })
  .meta({ id: 'Stats' });

export const listTrackingIdsQuerySchema = z.object({
  search: z.string().optional().meta({ description: 'Case-insensitive substring of the tracking ID.' }),
  trackingId: z.string().optional().meta({ description: 'Only this exact tracking ID: a page of 0 or 1 item.' }),
  limit: pageLimit,
  cursor,
});
export const listTrackingIdsResponseSchema = z
  .object({ items: z.array(trackingIdSummarySchema), next_cursor: nextCursor, count: z.int().min(0) })
  .meta({ id: 'TrackingIdPage' });

/** A string every store keeps exactly (see `storableTextProblem`). */
const storableText = z.string().check((context) => {
  const problem = storableTextProblem(context.value);
  if (problem !== undefined)
    context.issues.push({ code: 'custom', message: `must be text every store can keep; it ${problem}`, input: context.value });
});

/** `EventDetails`, as `eventDetails` makes them: storable, non-empty, within `eventDetailLimits`. */
const detailText = (name: keyof typeof eventDetailLimits) => storableText.min(1).max(eventDetailLimits[name]);
export const eventDetailsSchema = z.strictObject({
  smtpStatus: detailText('smtpStatus').refine(isSmtpStatus, 'must be an SMTP status: 5.1.1 or 550').optional(),
  diagnostic: detailText('diagnostic').optional(),
  bounceClassification: detailText('bounceClassification').optional(),
  feedbackType: detailText('feedbackType').optional(),
  rejectReason: detailText('rejectReason').optional(),
  url: detailText('url').optional(),
  userAgent: detailText('userAgent').optional(),
});

export const deliveryEventSchema = z.object({
  provider: providerSchema,
  type: z.enum(deliveryEventTypes),
  bounceClass: z.enum(bounceClasses).nullish(),
  providerSuppression: z.enum(providerSuppressions).nullish(),
  // Text no store can keep (U+0000, a lone surrogate) makes the event skipped, not the batch poisoned.
  messageId: storableText.min(1).max(eventIdLimits.messageId).nullable(),
  recipient: z.string(),
  trackingId: z.string().nullable(),
  // Like trackingId: any text passes, and applyEvents drops one that is not a stream name with a warning.
  stream: z.string().nullish(),
  // z.date() already rejects an invalid Date.
  occurredAt: z.date(),
  eventKey: storableText.min(1).max(eventIdLimits.eventKey),
  details: eventDetailsSchema.optional(),
  description: z.string().optional(),
});

export const eventWarningSchema = z.object({
  index: z.int().min(0).meta({ description: 'Position of the event in the batch.' }),
  code: z.enum(['invalid_event', 'invalid_recipient', 'tracking_id_too_long', 'invalid_tracking_id', 'invalid_stream']),
  message: z.string(),
});

export const applyEventsResultSchema = z
  .object({
    accepted: z.int().min(0).meta({ description: 'Events stored for the first time.' }),
    duplicates: z.int().min(0).meta({ description: 'Events already stored before (provider retries).' }),
    skipped: z.int().min(0).meta({ description: 'Events that could not be used; see warnings.' }),
    warnings: z.array(eventWarningSchema),
  })
  .meta({ id: 'IngestResult' });

/** Changes per page of the feed (`changes.list`, `GET …/changes`): larger than a listing's, as readers catch up in bulk. */
export const MAX_CHANGE_PAGE_SIZE = 1000;
export const DEFAULT_CHANGE_PAGE_SIZE = 100;

/** The feed's cursor: the `seq` of the last change read, 0 for the start. */
export const changeCursorSchema = z
  .union([
    z.int().min(0),
    z
      .string()
      .regex(/^[0-9]{1,16}$/, 'after must be a whole number')
      .transform(Number),
  ])
  .pipe(z.int().min(0))
  .optional()
  .meta({ description: "Read the changes after this one: the page's `next_after` (or a change's `seq`); 0, the default, for the start." });
export const changePageLimitSchema = z
  .union([
    z.int(),
    z
      .string()
      .regex(/^[0-9]{1,9}$/, 'limit must be a whole number')
      .transform(Number),
  ])
  .pipe(z.int().min(1).max(MAX_CHANGE_PAGE_SIZE))
  .optional()
  .meta({ description: `Changes per page, 1 to ${MAX_CHANGE_PAGE_SIZE}; default ${DEFAULT_CHANGE_PAGE_SIZE}.` });
export const changeKindSchema = z.enum(changeKinds).meta({ id: 'ChangeKind' });
export const listChangesQuerySchema = z.object({
  after: changeCursorSchema,
  limit: changePageLimitSchema,
  kind: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({
      description:
        'Only changes of these kinds: a kind (`suppression.added`) or a family (`suppression`, `message`, `alert`, `allowlist`, `stream`, `endpoint`, `address`, `key`); repeated or comma-separated. Absent: every kind.',
      examples: ['suppression', 'suppression.added,message.status_changed'],
    }),
  actor: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({
      description:
        'Only changes by these actors: an actor (`key:ops`) or a prefix of whole segments (`key`, `webhook:ses`); repeated or comma-separated. Absent: any actor (changes without one included).',
      examples: ['key:ops', 'webhook:ses,rule'],
    }),
  hash: z.string().optional().meta({
    description: 'Only changes about this address hash (64 hex): its suppressions, allowlist entry and erasures. Not with `email`.',
  }),
  email: z.string().optional().meta({
    description: 'Only changes about this address, hashed by the service as `hash` would name it. Not with `hash`.',
  }),
});

const changeFields = {
  id: z.string().meta({ description: 'Unique: `<projectId>:<seq>`. An outbound webhook sends it as `webhook-id`.' }),
  seq: z.int().min(1).meta({ description: "The change's place in its project's feed: increasing in the order changes were made." }),
  project: z.string(),
};
const changeAt = {
  at: timestamp.meta({ description: "When the change was made (the writing call's clock)." }),
  actor: z.string().optional().meta({
    description:
      'Who made it (docs/decisions.md, "The audit trail"): `key:<name>`, `webhook:<provider>:<event>`, `rule:<rule>`, `import:<run>`, `unsubscribe[:<stream>]` or `config`. Absent when the writer named none.',
  }),
};
const auditedKeySchema = z
  .object({
    name: z.string().meta({ description: "The key's configured name (never the key, nor its hash)." }),
    scopes: z.array(z.string()).meta({ description: 'What it may do (`check`, `read`, `write`, `admin`), in that order.' }),
  })
  .meta({ id: 'AuditedKey' });
const pausedCauseSchema = z.enum(['alert.bounce_rate', 'alert.complaint_rate', 'operator']).meta({
  description: 'What paused it: the alert that crossed, or an operator.',
});
export const changeViewSchema = z
  .discriminatedUnion('kind', [
    z.object({
      ...changeFields,
      kind: z.enum(['suppression.added', 'suppression.upgraded', 'suppression.updated', 'suppression.removed', 'suppression.expired']),
      ...changeAt,
      // Referenced, not described here: a described copy would be inlined in the OpenAPI document.
      suppression: suppressionSchema,
      previous: suppressionSchema.optional(),
    }),
    z.object({
      ...changeFields,
      kind: z.literal('message.status_changed'),
      ...changeAt,
      message: messageSchema,
      from: messageStatusSchema.nullable().meta({ description: 'Its status before; null when the event created the message.' }),
      to: messageStatusSchema,
      event: z
        .object({ id: z.string(), type: z.enum(deliveryEventTypes), occurred_at: timestamp })
        .meta({ description: "The event that did it: its `id` in the message's timeline, its type and time." }),
    }),
    z.object({
      ...changeFields,
      kind: z.enum(['alert.bounce_rate', 'alert.complaint_rate']),
      ...changeAt,
      alert: z.object({
        tracking_id: z.string().nullable().meta({ description: "The window's tracking ID; null for the project's window." }),
        firing: z.boolean().meta({ description: 'true: the rate reached its threshold; false: it fell below the resolve level.' }),
        messages: z.int().min(0).meta({ description: 'Messages in the window.' }),
        count: z.int().min(0).meta({ description: 'Of them, how many hard-bounced (or complained).' }),
        rate: z.number().min(0).max(1).meta({ description: '`count / messages`, a fraction.' }),
        threshold: z
          .number()
          .min(0)
          .max(1)
          .meta({ description: 'The level crossed, a fraction: the threshold going up, the resolve level going down.' }),
      }),
    }),
    z.object({
      ...changeFields,
      kind: z.enum(['allowlist.added', 'allowlist.removed']),
      ...changeAt,
      entry: allowlistEntrySchema,
    }),
    z.object({
      ...changeFields,
      kind: z.enum(['stream.paused', 'stream.resumed']),
      ...changeAt,
      stream: streamName,
      cause: pausedCauseSchema,
    }),
    z.object({
      ...changeFields,
      kind: z.enum(['endpoint.paused', 'endpoint.resumed']),
      ...changeAt,
      endpoint: z.string().meta({ description: "The outbound endpoint's id, as configured." }),
      error: z.string().optional().meta({ description: '`endpoint.paused` only: the last failure (`HTTP 503`, `timeout`, …).' }),
    }),
    z.object({
      ...changeFields,
      kind: z.literal('address.erased'),
      ...changeAt,
      hash: z.string().meta({ description: "The erased address's hash: the change never carries the address." }),
      records: z.array(suppressionSchema).meta({
        description: 'What still blocks it, one per list that holds it (the project-wide one first), its email the placeholder.',
      }),
      messages: z.int().min(0).meta({ description: 'Messages deleted, with their timelines.' }),
      changes: z.int().min(0).meta({ description: "The feed's changes about the address deleted." }),
    }),
    z.object({
      ...changeFields,
      kind: z.enum(['key.added', 'key.updated', 'key.removed']),
      ...changeAt,
      key: auditedKeySchema,
      previous: auditedKeySchema.optional().meta({ description: '`key.updated` only: the key as it was.' }),
    }),
  ])
  .meta({
    id: 'Change',
    description:
      'One change of the feed (docs/http.md, "Change feed"). `suppression`: as listed (`removed`, `expired`: as it was), `previous` the one before (`upgraded`, `updated`); `message`: as the event left it.',
  });
export const changeListSchema = z
  .object({
    items: z.array(changeViewSchema),
    next_after: z.int().min(0).meta({ description: 'Pass as `after` for the next page (past changes the filters skipped).' }),
    latest: z.int().min(0).meta({ description: "The project's latest `seq` (0: none yet): `next_after === latest` means caught up." }),
  })
  .meta({ id: 'ChangeList' });

export const eraseAddressRequestSchema = z.object({
  email: z.string().meta({
    description: 'The address to erase, in any form (normalized as suppressions are); `invalid_email` otherwise.',
    examples: ['jane.doe@example.com'],
  }),
});
export const erasureSchema = z
  .object({
    hash: z.string().meta({ description: "The address's hash: what the project keeps of it." }),
    email: z.string().meta({ description: 'The placeholder its suppressions now show: the first 16 hex of the hash `@erased.invalid`.' }),
    suppressed: z.literal(true).meta({ description: 'Always true: the address stays blocked, project-wide, with no expiry.' }),
    records: z.array(suppressionSchema).meta({
      description:
        'Its suppressions after the erasure, one per list that holds it (the project-wide one first), with the placeholder email.',
    }),
    messages: z.int().min(0).meta({ description: 'Messages deleted, with their timelines.' }),
    changes: z.int().min(0).meta({ description: "The feed's changes about the address deleted." }),
  })
  .meta({
    id: 'Erasure',
    description: 'What an erasure did (docs/decisions.md, "Erasure"): every trace of the address went but a suppression of its hash.',
  });

export const pausedStreamSchema = z
  .object({ stream: streamName, paused_at: timestamp, cause: pausedCauseSchema })
  .meta({ id: 'PausedStream', description: 'A stream whose sending the send gate blocks (reason `stream_paused`) until resumed.' });
export const pausedStreamListSchema = z.object({ items: z.array(pausedStreamSchema) }).meta({ id: 'PausedStreamList' });
export const resumeStreamResponseSchema = z
  .object({ stream: streamName, resumed: z.boolean().meta({ description: 'false: the stream was not paused.' }) })
  .meta({ id: 'StreamResumed' });

const alertRateSchema = z.object({
  count: z.int().min(0).meta({ description: 'Messages of the window that hard-bounced (or complained).' }),
  rate: z.number().min(0).max(1).meta({ description: '`count / messages`, a fraction (0 for an empty window).' }),
  threshold: z.number().min(0).max(1).meta({ description: 'The alert fires at this rate (a fraction) or above.' }),
  resolve_below: z.number().min(0).max(1).meta({ description: 'A firing alert resolves below this rate.' }),
  firing: z.boolean(),
});
export const alertStatusSchema = z
  .object({
    window: z.int().min(1).meta({ description: 'Messages a window holds: the last this many, by arrival.' }),
    min_messages: z.int().min(1).meta({ description: 'No alert fires while the window holds fewer.' }),
    tracking_id: z.string().nullable().meta({ description: "The window's tracking ID; null for the project's." }),
    messages: z.int().min(0).meta({ description: 'Messages in the window now.' }),
    bounce: alertRateSchema,
    complaint: alertRateSchema,
    paused_streams: z.array(pausedStreamSchema).meta({ description: "The project's paused streams." }),
  })
  .meta({ id: 'AlertStatus' });
export const alertStatusQuerySchema = z.object({
  tracking_id: z
    .string()
    .optional()
    .meta({ description: "This tracking ID's window (when the project's alerts keep one per tracking ID); absent: the project's." }),
});

const endpointTime = (description: string) => timestamp.nullable().meta({ description });
export const endpointStatusSchema = z
  .object({
    id: z.string().meta({ description: "The endpoint's id, as configured." }),
    url: z
      .string()
      .meta({ description: 'Where its changes are POSTed, without the query or fragment (shown as `?…`), which often carry a token.' }),
    kinds: z.array(changeKindSchema).nullable().meta({ description: 'The kinds it receives; null: every kind.' }),
    state: z.enum(['delivering', 'retrying', 'paused']).meta({
      description:
        '`delivering`: caught up or sending; `retrying`: the change after `cursor` failed, retried at `next_attempt_at`; `paused`: failed past the retry schedule, until resumed.',
    }),
    cursor: z
      .int()
      .min(0)
      .meta({ description: 'The `seq` of the last change it acknowledged (or skipped by its kinds): delivery resumes after it.' }),
    latest: z.int().min(0).meta({ description: "The project's latest `seq`." }),
    lag: z.int().min(0).meta({ description: 'Changes of the feed after its cursor (of every kind): `latest - cursor`.' }),
    failures: z.int().min(0).meta({ description: 'Failed attempts in a row at the change after `cursor`.' }),
    failing_since: endpointTime('When those failures began; null while it delivers.'),
    next_attempt_at: endpointTime('While retrying: when the next attempt is due; else null.'),
    paused_at: endpointTime('When it was paused; null unless paused.'),
    last_error: z
      .string()
      .nullable()
      .meta({ description: 'The last failure (`HTTP 503`, `timeout`, `connection refused`, `cursor_expired`…); null after a success.' }),
    last_success_at: endpointTime('When it last acknowledged a change; null before the first.'),
  })
  .meta({ id: 'OutboundEndpoint', description: 'An outbound webhook endpoint and where its delivery stands (docs/outbound-webhooks.md).' });
export const endpointStatusListSchema = z.object({ items: z.array(endpointStatusSchema) }).meta({ id: 'OutboundEndpointList' });

export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(errorCodes as [string, ...string[]]),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'Error' });

export type Suppression = z.infer<typeof suppressionSchema>;
export type SuppressionPage = z.infer<typeof listSuppressionsResponseSchema>;
export type SuppressionCheck = z.infer<typeof checkSuppressionResponseSchema>;
export type BatchCheckResult = z.infer<typeof batchCheckResultSchema>;
export type Message = z.infer<typeof messageSchema>;
export type MessagePage = z.infer<typeof listMessagesResponseSchema>;
export type TimelineEntryView = z.infer<typeof timelineEntrySchema>;
export type MessageDetail = z.infer<typeof messageDetailSchema>;
export type TrackingIdSummary = z.infer<typeof trackingIdSummarySchema>;
export type TrackingIdPage = z.infer<typeof listTrackingIdsResponseSchema>;
export type EventWarning = z.infer<typeof eventWarningSchema>;
export type ApplyEventsResult = z.infer<typeof applyEventsResultSchema>;
export type ListSuppressionsQuery = z.input<typeof listSuppressionsQuerySchema>;
export type ListMessagesQuery = z.input<typeof listMessagesQuerySchema>;
export type ListTrackingIdsQuery = z.input<typeof listTrackingIdsQuerySchema>;
export type StatsRangeQuery = z.input<typeof statsQuerySchema>;
export type Stats = z.infer<typeof statsResponseSchema>;
export type StatsBucketView = z.infer<typeof statsBucketSchema>;
export type BulkAddItem = z.input<typeof bulkAddItemSchema>;
export type BulkAddResult = z.infer<typeof bulkAddResultSchema>;
export type BulkRemoveItem = z.input<typeof bulkRemoveItemSchema>;
export type BulkRemoveResult = z.infer<typeof bulkRemoveResultSchema>;
export type AllowlistItem = z.infer<typeof allowlistEntrySchema>;
export type AllowlistPage = z.infer<typeof listAllowlistResponseSchema>;
export type ListAllowlistQuery = z.input<typeof listAllowlistQuerySchema>;
export type SuppressionRuleView = z.infer<typeof suppressionRuleSchema>;
export type ChangeView = z.infer<typeof changeViewSchema>;
export type ChangeList = z.infer<typeof changeListSchema>;
export type Erasure = z.infer<typeof erasureSchema>;
export type PausedStreamView = z.infer<typeof pausedStreamSchema>;
export type PausedStreamList = z.infer<typeof pausedStreamListSchema>;
export type AlertStatus = z.infer<typeof alertStatusSchema>;
export type AlertRateView = z.infer<typeof alertRateSchema>;
export type EndpointStatus = z.infer<typeof endpointStatusSchema>;
export type EndpointStatusList = z.infer<typeof endpointStatusListSchema>;
