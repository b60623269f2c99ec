import { z } from 'zod';
import { MailwardenError, type ErrorCode } from '../errors.js';
import { parseInput } from '../input.js';
import type { Mailwarden } from '../mailwarden.js';
import {
  MAX_BATCH_SIZE,
  addAllowlistEntryRequestSchema,
  addSuppressionRequestSchema,
  addSuppressionResponseSchema,
  eraseAddressRequestSchema,
  erasureSchema,
  allowlistEntrySchema,
  applyEventsResultSchema,
  batchCheckRequestSchema,
  batchCheckResponseSchema,
  bulkAddRequestSchema,
  bulkAddResponseSchema,
  bulkCheckRequestSchema,
  bulkRemoveRequestSchema,
  bulkRemoveResponseSchema,
  type BulkAddItem,
  type BulkRemoveItem,
  checkSuppressionQuerySchema,
  checkSuppressionResponseSchema,
  listAllowlistQuerySchema,
  listAllowlistResponseSchema,
  listMessagesQuerySchema,
  listMessagesResponseSchema,
  listSuppressionsQuerySchema,
  listSuppressionsResponseSchema,
  listTrackingIdsQuerySchema,
  listTrackingIdsResponseSchema,
  messageDetailSchema,
  removeSuppressionQuerySchema,
  removeSuppressionResponseSchema,
  requestSourceSchema,
  statsQuerySchema,
  statsResponseSchema,
  type StatsRangeQuery,
  alertStatusQuerySchema,
  alertStatusSchema,
  changeListSchema,
  endpointStatusListSchema,
  endpointStatusSchema,
  listChangesQuerySchema,
  pausedStreamListSchema,
  pausedStreamSchema,
  resumeStreamResponseSchema,
} from '../api-schemas.js';
import { assertCheckSize } from '../services/suppression-service.js';
import { assertStreamName } from '../stream.js';
import { webhookChallenge, webhookRoute, webhookUnavailableStatus } from '../webhooks/providers.js';
import { apiKeyInfoSchema, type ApiScope } from './api-keys.js';
import type { HttpRequest, HttpResponse } from './request.js';

export type RouteMethod = 'GET' | 'POST' | 'DELETE' | 'HEAD';

const STATS_DESCRIPTION =
  'Each message counts once per fact, in the bucket of its earliest event establishing it (an open, a click or an unsubscribe also establishes delivered), ' +
  "so retried, duplicated or late events never count twice. `from` (inclusive) and `to` (exclusive) are ISO 8601 on the interval's boundaries: whole UTC hours, or UTC midnights for days; " +
  'at most 31 days of hours or 731 days. Counts outlive message retention.';

/** Who may call a route: API-key holders of the project, the project's provider, or anyone. */
export type RouteAuth = 'api_key' | 'webhook' | 'public';

export interface RouteInput {
  /** Path parameters, percent-decoded. */
  params: Readonly<Record<string, string>>;
  /** Query parameters, each given at most once. */
  query: Readonly<Record<string, string>>;
  /** The parsed JSON body (API routes). */
  json(): Promise<unknown>;
  /** The body bytes exactly as received (webhooks). */
  bytes(): Promise<Uint8Array>;
  request: HttpRequest;
  /** API-key routes: who calls, for the audit trail (`keyActor` of the key's name), and what its key may do. */
  actor?: string;
  scopes?: readonly ApiScope[];
}

export interface RouteResult {
  status: number;
  body?: unknown;
  /** An answer that is not JSON (the unsubscribe page), sent as it is instead of `body`. */
  response?: HttpResponse;
}

/**
 * One endpoint: how it is matched, who may call it, what it does, and what the OpenAPI document says of
 * it. The handler and the OpenAPI document both read this table, so they cannot drift apart.
 */
export interface Route {
  method: RouteMethod;
  /** OpenAPI-style template: `/projects/{projectId}/suppressions/{hash}`. */
  path: string;
  auth: RouteAuth;
  /**
   * API-key routes: the scope a key needs (docs/http.md, "Scopes"); a key without it gets
   * `insufficient_scope`. Absent on an API-key route: any key of the project (`GET …/api-key`).
   * This table is the one place that says who may do what: the handler, OpenAPI and the docs read it.
   */
  scope?: ApiScope;
  /**
   * Routes without a key: the per-address rate-limit bucket they count in before anything is verified
   * (docs/http.md, "Rate limits"); absent, webhook intake's.
   */
  rateLimitBucket?: 'unsubscribe' | 'webhook';
  operationId: string;
  summary: string;
  description?: string;
  query?: z.ZodObject;
  requestBody?: z.ZodType;
  responses: Readonly<Record<number, { description: string; schema?: z.ZodType }>>;
  /** Query parameters that may be repeated (`?kind=a&kind=b`): the route reads them joined with commas. */
  repeatableQuery?: readonly string[];
  /** The error codes the route itself may answer with, beyond those every route of its kind may. */
  errors: readonly ErrorCode[];
  /** The `WWW-Authenticate` challenge its 401 answers carry, for these path parameters, if any. */
  challenge?(params: Readonly<Record<string, string>>): string | undefined;
  /** The status of a `store_unavailable` answer for these path parameters, when not 503 (a provider that retries only 429). */
  storeUnavailableStatus?(params: Readonly<Record<string, string>>): number | undefined;
  run(mailwarden: Mailwarden, input: RouteInput): Promise<RouteResult>;
}

// A batch is checked for size before its entries, so 101 addresses answer `batch_too_large`, and an
// entry that is no string answers `invalid_email` with its index, like an invalid address.
const batchCheckBody = z.object({ emails: z.array(z.unknown()), stream: z.string().nullable().optional() });
// Likewise a bulk body: its size first (batch_too_large), then each item in its own result.
const bulkBody = z.object({
  items: z.array(z.unknown()),
  source: requestSourceSchema.optional(),
  stream: z.string().nullable().optional(),
});

/**
 * The list a suppression request names, as the service takes it (docs/http.md, "Streams"): none (the
 * project-wide list) for an absent or empty query parameter, as for the listing filters, and for an
 * absent or null body field; any other text must be a stream name (`""` in a body too). Checked
 * before a batch's size and entries, so a request naming an invalid stream is refused whole
 * (`invalid_stream`) and nothing is written.
 */
function queryStream(stream: string | undefined): { stream?: string } {
  return stream === undefined || stream === '' ? {} : { stream: assertStreamName(stream) };
}
function bodyStream(stream: string | null | undefined): { stream?: string } {
  return stream === undefined || stream === null ? {} : { stream: assertStreamName(stream) };
}
/** The calling key's actor as a service's option (docs/core.md, "Actors"); none when the handler named none. */
function by(actor: string | undefined): { actor?: string } {
  return actor === undefined ? {} : { actor };
}

/**
 * The body of a request that has one names its stream; a `?stream=` there is refused rather than ignored
 * as unknown parameters are, since ignoring it would check or write the project-wide list in its place.
 */
function refuseQueryStream(query: Readonly<Record<string, string>>): void {
  if (query.stream !== undefined) {
    throw new MailwardenError('invalid_request', 'This request takes its stream in the JSON body ("stream": "…"), not in the query.', {
      details: [{ path: 'stream', message: 'goes in the request body' }],
    });
  }
}

const STREAM_PAUSE_DESCRIPTION =
  'A paused stream is blocked by the send gate (`filterSuppressed` with that `stream`: reason `stream_paused`) until resumed. ' +
  'Alerts may pause streams too (`pauseStreams`); resuming is always an operator’s call.';

export const routes: readonly Route[] = [
  {
    method: 'GET',
    path: '/projects/{projectId}/suppressions',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listSuppressions',
    summary: "List the project-wide list or a stream's, newest first, optionally by reason, the start of the address and creation time",
    query: listSuppressionsQuerySchema,
    responses: { 200: { description: 'A page of suppressions.', schema: listSuppressionsResponseSchema } },
    errors: ['invalid_request', 'invalid_cursor', 'invalid_stream'],
    // The service reads `stream` as it reads the other filters (empty: none, the project-wide list).
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      body: await mailwarden.suppressions.list(params.projectId!, query),
    }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/suppressions',
    auth: 'api_key',
    scope: 'write',
    operationId: 'addSuppression',
    summary: "Suppress an address by hand (reason manual), in the project-wide list or a stream's",
    description:
      'Answers 201 when the address was added, 200 with the stored record unchanged when that list already held it. `source: unsubscribe` records that the recipient asked (reason `manual` still). ' +
      "`expires_at` or `ttl` (not both, after now) sets when it stops suppressing; else the project's expiry rules do.",
    requestBody: addSuppressionRequestSchema,
    responses: {
      201: { description: 'Added.', schema: addSuppressionResponseSchema },
      200: { description: 'Already suppressed; the stored record, unchanged.', schema: addSuppressionResponseSchema },
    },
    errors: ['invalid_request', 'invalid_email', 'invalid_stream'],
    run: async (mailwarden, { params, query, json, actor }) => {
      refuseQueryStream(query);
      const { email, source, stream, expires_at, ttl } = parseInput(addSuppressionRequestSchema, await json(), 'request body');
      const { suppression, created } = await mailwarden.suppressions.add(params.projectId!, email, {
        ...(source === undefined ? {} : { source }),
        ...bodyStream(stream),
        ...by(actor),
        // The service refuses both together, and a time not after now (docs/http.md, "Suppressions that expire").
        ...(expires_at === undefined ? {} : { expiresAt: expires_at }),
        ...(ttl === undefined ? {} : { ttl }),
      });
      return { status: created ? 201 : 200, body: suppression };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/suppressions/check',
    auth: 'api_key',
    scope: 'check',
    operationId: 'checkSuppression',
    summary: 'Check one address, for any mail or for mail of one stream',
    description:
      'With a `stream`, the address is suppressed when the project-wide list or that stream holds it; `stream` in the answer says which (`null`: the project-wide list, which answers when both do).',
    query: checkSuppressionQuerySchema,
    responses: { 200: { description: 'Whether the address is suppressed.', schema: checkSuppressionResponseSchema } },
    errors: ['invalid_request', 'invalid_email', 'invalid_stream'],
    run: async (mailwarden, { params, query }) => {
      const { email, stream } = parseInput(checkSuppressionQuerySchema, query, 'query');
      return { status: 200, body: await mailwarden.suppressions.check(params.projectId!, email, queryStream(stream)) };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/suppressions/check',
    auth: 'api_key',
    scope: 'check',
    operationId: 'checkSuppressions',
    summary: 'Check up to 100 addresses',
    description:
      'One result per input entry, in input order, each echoing the address as sent. With a `stream`, each result is checked as the single check does for it.',
    requestBody: batchCheckRequestSchema,
    responses: { 200: { description: 'One result per address.', schema: batchCheckResponseSchema } },
    errors: ['invalid_request', 'invalid_email', 'batch_too_large', 'invalid_stream'],
    run: async (mailwarden, { params, query, json }) => {
      refuseQueryStream(query);
      const { emails, stream } = parseInput(batchCheckBody, await json(), 'request body');
      const options = bodyStream(stream);
      assertCheckSize(emails, MAX_BATCH_SIZE);
      return { status: 200, body: await mailwarden.suppressions.checkMany(params.projectId!, emails as string[], options) };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/suppressions/bulk-check',
    auth: 'api_key',
    scope: 'check',
    operationId: 'checkSuppressionsInBulk',
    summary: 'Check up to 1 000 addresses',
    description:
      'The batch check, bulk-sized: for gating a large send, or for an import that records what it is about to change. One result per input entry, in input order, each echoing the address as sent.',
    requestBody: bulkCheckRequestSchema,
    responses: { 200: { description: 'One result per address.', schema: batchCheckResponseSchema } },
    errors: ['invalid_request', 'invalid_email', 'batch_too_large', 'invalid_stream'],
    run: async (mailwarden, { params, query, json }) => {
      refuseQueryStream(query);
      const { emails, stream } = parseInput(batchCheckBody, await json(), 'request body');
      return { status: 200, body: await mailwarden.suppressions.checkMany(params.projectId!, emails as string[], bodyStream(stream)) };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/suppressions/bulk',
    auth: 'api_key',
    scope: 'write',
    operationId: 'addSuppressions',
    summary: 'Suppress up to 1 000 addresses, each with its reason and time',
    description:
      'For moving a list from a provider or another tool: each item joins as provider events do (a stronger reason upgrades an existing suppression, the earliest time stays; nothing is ever downgraded). One result per item, in request order; an invalid item is reported in its result and the others are applied. Any key of the project may set `hard_bounce` or `complaint` (docs/http.md explains why).',
    requestBody: bulkAddRequestSchema,
    responses: { 200: { description: 'One result per item.', schema: bulkAddResponseSchema } },
    errors: ['invalid_request', 'batch_too_large', 'invalid_stream'],
    run: async (mailwarden, { params, query, json, actor }) => {
      refuseQueryStream(query);
      const { items, source, stream } = parseInput(bulkBody, await json(), 'request body');
      return {
        status: 200,
        body: await mailwarden.suppressions.addMany(params.projectId!, items as BulkAddItem[], {
          ...(source === undefined ? {} : { source }),
          ...bodyStream(stream),
          ...by(actor),
        }),
      };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/suppressions/bulk-delete',
    auth: 'api_key',
    scope: 'write',
    operationId: 'removeSuppressions',
    summary: 'Remove up to 1 000 suppressions, by address or hash',
    description:
      'One result per item, in request order: `deleted: false` when no suppression had it; an invalid item is reported and the others removed.',
    requestBody: bulkRemoveRequestSchema,
    responses: { 200: { description: 'One result per item.', schema: bulkRemoveResponseSchema } },
    errors: ['invalid_request', 'batch_too_large', 'invalid_stream'],
    run: async (mailwarden, { params, query, json, actor }) => {
      refuseQueryStream(query);
      const { items, stream } = parseInput(bulkBody, await json(), 'request body');
      return {
        status: 200,
        body: await mailwarden.suppressions.removeMany(params.projectId!, items as BulkRemoveItem[], {
          ...bodyStream(stream),
          ...by(actor),
        }),
      };
    },
  },
  {
    method: 'DELETE',
    path: '/projects/{projectId}/suppressions/{hash}',
    auth: 'api_key',
    scope: 'write',
    operationId: 'removeSuppression',
    summary: "Remove a suppression by its hash, from the project-wide list or a stream's",
    query: removeSuppressionQuerySchema,
    responses: { 200: { description: 'Removed.', schema: removeSuppressionResponseSchema } },
    errors: ['invalid_request', 'suppression_not_found', 'invalid_stream'],
    run: async (mailwarden, { params, query, actor }) => {
      const { stream } = parseInput(removeSuppressionQuerySchema, query, 'query');
      return {
        status: 200,
        body: await mailwarden.suppressions.remove(params.projectId!, params.hash!, { ...queryStream(stream), ...by(actor) }),
      };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/erasures',
    auth: 'api_key',
    scope: 'admin',
    operationId: 'eraseAddress',
    summary: 'Erase an address on request, keeping it blocked by hash only',
    description:
      "Every stored trace of the address goes (its messages and timelines, allowlist entry, dedup keys, the feed's changes about it, the email text of its suppressions), " +
      'while the project-wide list keeps a suppression of its hash with the placeholder email `<hash16>@erased.invalid` and no expiry, so checks still answer suppressed. ' +
      'Idempotent: again, it erases nothing more and records another `address.erased` (docs/decisions.md, "Erasure").',
    requestBody: eraseAddressRequestSchema,
    responses: { 200: { description: 'Erased; what remains.', schema: erasureSchema } },
    errors: ['invalid_request', 'invalid_email'],
    run: async (mailwarden, { params, json, actor }) => {
      const { email } = parseInput(eraseAddressRequestSchema, await json(), 'request body');
      return { status: 200, body: await mailwarden.erasures.erase(params.projectId!, email, by(actor)) };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/allowlist',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listAllowlist',
    summary: 'List the addresses and domains that automatic rules never suppress, by entry in code-point order',
    query: listAllowlistQuerySchema,
    responses: { 200: { description: 'A page of allowlist entries.', schema: listAllowlistResponseSchema } },
    errors: ['invalid_request', 'invalid_cursor'],
    run: async (mailwarden, { params, query }) => ({ status: 200, body: await mailwarden.allowlist.list(params.projectId!, query) }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/allowlist',
    auth: 'api_key',
    scope: 'write',
    operationId: 'addAllowlistEntry',
    summary: 'Allowlist an address or a domain (`@example.com`): bounces, complaints and the soft-bounce rule never suppress it',
    description:
      'Answers 201 when the entry was added, 200 with the stored entry unchanged when the allowlist already held it. Events for it are still recorded; unsubscribes, adds and imports still suppress it (docs/decisions.md, "The allowlist").',
    requestBody: addAllowlistEntryRequestSchema,
    responses: {
      201: { description: 'Added.', schema: allowlistEntrySchema },
      200: { description: 'Already allowlisted; the stored entry, unchanged.', schema: allowlistEntrySchema },
    },
    errors: ['invalid_request', 'invalid_email'],
    run: async (mailwarden, { params, json, actor }) => {
      const { entry: text } = parseInput(addAllowlistEntryRequestSchema, await json(), 'request body');
      const { entry, created } = await mailwarden.allowlist.add(params.projectId!, text, by(actor));
      return { status: created ? 201 : 200, body: entry };
    },
  },
  {
    method: 'DELETE',
    path: '/projects/{projectId}/allowlist/{entry}',
    auth: 'api_key',
    scope: 'write',
    operationId: 'removeAllowlistEntry',
    summary: 'Remove an address or a domain from the allowlist',
    description: 'The entry as it was added, URL-encoded (`%40example.com` or `@example.com` for a domain); normalized as on add.',
    responses: { 204: { description: 'Removed.' } },
    errors: ['invalid_request', 'invalid_email', 'allowlist_entry_not_found'],
    run: async (mailwarden, { params, actor }) => {
      await mailwarden.allowlist.remove(params.projectId!, params.entry!, by(actor));
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/messages',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listMessages',
    summary:
      'List messages, newest first, optionally by tracking ID, status, recipient (whole, its start or its domain), provider, stream and time of the last event',
    query: listMessagesQuerySchema,
    responses: { 200: { description: 'A page of messages.', schema: listMessagesResponseSchema } },
    errors: ['invalid_request', 'invalid_cursor', 'invalid_tracking_id', 'invalid_email', 'invalid_stream'],
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      body: await mailwarden.messages.list(params.projectId!, query),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/messages/{id}',
    auth: 'api_key',
    scope: 'read',
    operationId: 'getMessage',
    summary: 'One message with its timeline',
    description:
      'The `id` is the `id` of a listed message: 32 lower-case hex characters, stable for its provider, provider message ID and recipient. ' +
      'The timeline lists the events oldest first (ties by entry `id`), each once however often the provider sent it; past 50 events, the first 20 and the latest 30.',
    responses: { 200: { description: 'The message and its timeline.', schema: messageDetailSchema } },
    errors: ['invalid_request', 'not_found'],
    run: async (mailwarden, { params }) => {
      const message = await mailwarden.messages.get(params.projectId!, params.id!);
      if (message === undefined) {
        throw new MailwardenError('not_found', 'No message with this id in the project: never recorded, or removed by retention.');
      }
      return { status: 200, body: message };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/tracking-ids',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listTrackingIds',
    summary: 'List tracking IDs with their counters, or look up one exactly',
    query: listTrackingIdsQuerySchema,
    responses: { 200: { description: 'A page of tracking IDs.', schema: listTrackingIdsResponseSchema } },
    errors: ['invalid_request', 'invalid_cursor', 'invalid_tracking_id'],
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      body: await mailwarden.trackingIds.list(params.projectId!, query),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/tracking-ids/{trackingId}/stats',
    auth: 'api_key',
    scope: 'read',
    operationId: 'getTrackingIdStats',
    summary: "One tracking ID's counts over time, per UTC hour or day",
    description: STATS_DESCRIPTION,
    query: statsQuerySchema,
    responses: { 200: { description: 'Every bucket of the range, oldest first.', schema: statsResponseSchema } },
    errors: ['invalid_request', 'invalid_tracking_id'],
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      // The schema checks the query: a missing from or to is invalid_request there.
      body: await mailwarden.trackingIds.stats(params.projectId!, params.trackingId!, query as StatsRangeQuery),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/stats',
    auth: 'api_key',
    scope: 'read',
    operationId: 'getProjectStats',
    summary: "The project's counts over time, per UTC hour or day",
    description: STATS_DESCRIPTION,
    query: statsQuerySchema,
    responses: { 200: { description: 'Every bucket of the range, oldest first.', schema: statsResponseSchema } },
    errors: ['invalid_request'],
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      body: await mailwarden.stats(params.projectId!, query as StatsRangeQuery),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/changes',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listChanges',
    summary: "Read the project's change feed in order, after a cursor, optionally by kind, actor and address: the audit trail",
    description:
      'Every change the store made, in the order it made them, each numbered by `seq` (per project, from 1). Pass `next_after` back as `after` to read on; ' +
      '`next_after === latest` means caught up. With `kind`, `actor`, `hash` or `email` (all must match), a page may be empty yet move `next_after` past changes the filters skip. ' +
      'Each change names its `actor` when the writer gave one (`key:<name>` for a request with that key). ' +
      'An `after` older than what retention keeps is 410 `change_cursor_expired`. Needs a store with a feed (`change_feed_not_configured` otherwise).',
    query: listChangesQuerySchema,
    repeatableQuery: ['kind', 'actor'],
    responses: { 200: { description: 'A page of changes.', schema: changeListSchema } },
    errors: ['invalid_request', 'invalid_email', 'change_feed_not_configured', 'change_cursor_expired'],
    // The service checks each parameter and names it in `details`, as the listings' do.
    run: async (mailwarden, { params, query }) => ({
      status: 200,
      body: await mailwarden.changes.list(params.projectId!, {
        after: query.after,
        limit: query.limit,
        kinds: query.kind,
        actors: query.actor,
        hash: query.hash,
        email: query.email,
      }),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/alerts',
    auth: 'api_key',
    scope: 'read',
    operationId: 'getAlertStatus',
    summary: 'The bounce and complaint rates of the recent messages, against their thresholds, and the paused streams',
    description:
      "The project's window (or a tracking ID's) of its last `window` messages: how many hard-bounced and complained, the rates (fractions 0–1), " +
      'the thresholds an alert fires at and resolves below, and whether each is firing. Needs alert rules for the project (`alerts_not_configured` otherwise).',
    query: alertStatusQuerySchema,
    responses: { 200: { description: 'The alert status.', schema: alertStatusSchema } },
    errors: ['invalid_request', 'invalid_tracking_id', 'alerts_not_configured'],
    run: async (mailwarden, { params, query }) => {
      const { tracking_id } = parseInput(alertStatusQuerySchema, query, 'alert status query');
      return {
        status: 200,
        body: await mailwarden.alerts.status(params.projectId!, tracking_id === undefined ? {} : { trackingId: tracking_id }),
      };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/streams/paused',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listPausedStreams',
    summary: "The project's paused streams, by name",
    description: STREAM_PAUSE_DESCRIPTION,
    responses: { 200: { description: 'The paused streams.', schema: pausedStreamListSchema } },
    errors: ['invalid_request'],
    run: async (mailwarden, { params }) => ({ status: 200, body: await mailwarden.streams.listPaused(params.projectId!) }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/streams/{stream}/pause',
    auth: 'api_key',
    scope: 'admin',
    operationId: 'pauseStream',
    summary: "Pause a stream's sending",
    description: `Answers 201 when this call paused it, 200 with the paused stream unchanged when it already was. ${STREAM_PAUSE_DESCRIPTION}`,
    responses: {
      201: { description: 'Paused.', schema: pausedStreamSchema },
      200: { description: 'Already paused; as it was paused.', schema: pausedStreamSchema },
    },
    errors: ['invalid_request', 'invalid_stream'],
    run: async (mailwarden, { params, actor }) => {
      const { paused, created } = await mailwarden.streams.pause(params.projectId!, params.stream!, by(actor));
      return { status: created ? 201 : 200, body: paused };
    },
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/streams/{stream}/resume',
    auth: 'api_key',
    scope: 'admin',
    operationId: 'resumeStream',
    summary: "Resume a stream's sending",
    description: '`resumed: false` when it was not paused (a retried resume is harmless).',
    responses: { 200: { description: 'Whether it was paused.', schema: resumeStreamResponseSchema } },
    errors: ['invalid_request', 'invalid_stream'],
    run: async (mailwarden, { params, actor }) => ({
      status: 200,
      body: await mailwarden.streams.resume(params.projectId!, params.stream!, by(actor)),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/outbound-webhooks',
    auth: 'api_key',
    scope: 'read',
    operationId: 'listOutboundWebhooks',
    summary: "The project's outbound webhook endpoints and where each stands",
    description:
      'The endpoints of the configuration (their secrets never shown), each with its delivery state: `delivering`, `retrying` (failing; `next_attempt_at` says when it tries again) or `paused` (after failing too long), ' +
      'its cursor and how many changes it is behind (`lag`).',
    responses: { 200: { description: 'The endpoints.', schema: endpointStatusListSchema } },
    errors: ['invalid_request'],
    run: async (mailwarden, { params }) => ({ status: 200, body: { items: await mailwarden.outbound.list(params.projectId!) } }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/outbound-webhooks/{endpointId}/resume',
    auth: 'api_key',
    scope: 'admin',
    operationId: 'resumeOutboundWebhook',
    summary: 'Resume a paused endpoint from its cursor: nothing is lost',
    description: 'Clears its failures and tries the next change at once. An endpoint that is not paused is answered as it is.',
    responses: { 200: { description: 'The endpoint now.', schema: endpointStatusSchema } },
    errors: ['invalid_request', 'endpoint_not_found'],
    run: async (mailwarden, { params, actor }) => ({
      status: 200,
      body: await mailwarden.outbound.resume(params.projectId!, params.endpointId!, by(actor)),
    }),
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/api-key',
    auth: 'api_key',
    operationId: 'getApiKey',
    summary: 'The name and scopes of the key this request presents',
    description: 'So a client (the dashboard) learns what its key may do before it tries. Never answers the key or its hash.',
    responses: { 200: { description: "The key's name and scopes.", schema: apiKeyInfoSchema } },
    errors: [],
    // `actor` is `key:<name>` on every API-key route (the handler's keyActor).
    run: async (_mailwarden, { actor, scopes }) => ({ status: 200, body: { name: actor!.slice('key:'.length), scopes } }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/webhooks/{provider}',
    auth: 'webhook',
    operationId: 'receiveWebhook',
    summary: "Receive a provider's delivery events",
    description:
      "Authenticated by the provider's own mechanism configured for the project, not by X-API-Key. " +
      'Answers 200 only once every event is stored; 503 when the store is unavailable, so the provider retries (429 on a route whose provider retries nothing else: `storeUnavailableStatus`).',
    responses: { 200: { description: 'Stored (or a ping / subscription handshake).', schema: applyEventsResultSchema } },
    errors: ['invalid_request', 'invalid_payload', 'webhook_unauthorized', 'not_found', 'verification_unavailable'],
    challenge: (params) => webhookChallenge(params.provider!),
    storeUnavailableStatus: (params) => webhookUnavailableStatus(params.provider!),
    run: async (mailwarden, { params, bytes, request }) => {
      const result = await mailwarden.ingestWebhook(webhookRoute(params.provider!), params.projectId!, {
        method: request.method,
        headers: request.headers,
        rawBody: await bytes(),
      });
      return { status: 200, body: result };
    },
  },
  {
    method: 'HEAD',
    path: '/projects/{projectId}/webhooks/{provider}',
    auth: 'public',
    operationId: 'probeWebhook',
    summary: 'Answer a provider probe (a provider may check the URL with HEAD before it posts)',
    responses: { 200: { description: 'The webhook URL exists.' } },
    errors: ['not_found'],
    run: async (_mailwarden, { params }) => {
      webhookRoute(params.provider!);
      return { status: 200 };
    },
  },
];
