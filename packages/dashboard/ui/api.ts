import type {
  AlertStatus,
  AllowlistItem,
  AllowlistPage,
  ApiScope,
  BulkRemoveResult,
  ChangeList,
  EndpointStatus,
  EndpointStatusList,
  Erasure,
  ErrorBody,
  MessageDetail,
  MessagePage,
  MessageStatus,
  PausedStreamList,
  Provider,
  Stats,
  Suppression,
  SuppressionCheck,
  SuppressionPage,
  TrackingIdPage,
} from '@mailwarden/core';
import { apiBase } from './location.js';
import type { Session } from './session.js';

/** A failed call: the API's own code and message, or `network_error` when the service was not reached. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type BulkRemoveResults = { results: BulkRemoveResult[] };

/** An event that caused a suppression, as the API shows it (`cause`, and each bounce of a `rule`). */
export type CauseView = NonNullable<Suppression['cause']>;

/** Which list a call is about: a stream's, or the project-wide list when `stream` is `undefined`. */
export interface InList {
  stream?: string | undefined;
}

export interface SuppressionListQuery extends InList {
  emailPrefix?: string | undefined;
  /** `true`: only entries that expire; `false`: only those that never do. */
  expiring?: boolean | undefined;
  limit?: number;
  cursor?: string | undefined;
}

type Query = Record<string, string | number | boolean | undefined>;

export interface MessageQuery {
  trackingId?: string | undefined;
  status?: MessageStatus | undefined;
  recipient?: string | undefined;
  /** Messages whose recipient starts with this text (compared lower-cased). */
  recipientPrefix?: string | undefined;
  /** Messages to this domain (`example.com`, a leading `@` allowed). */
  recipientDomain?: string | undefined;
  provider?: Provider | undefined;
  /** Messages sent in this stream (exactly; the API refuses text that is no stream name). */
  stream?: string | undefined;
  limit?: number;
  cursor?: string | undefined;
}

export interface TrackingIdQuery {
  search?: string | undefined;
  trackingId?: string | undefined;
  limit?: number;
  cursor?: string | undefined;
}

/** Days of counts: `from` (inclusive) and `to` (exclusive) are UTC midnights, `2026-11-01`. */
export interface DayRange {
  from: string;
  to: string;
}

export interface ChangeQuery {
  /** The `seq` of the last change already read; 0 for the start of the feed. */
  after: number;
  limit: number;
  /** Kinds or families (`suppression`, `alert.bounce_rate`…); every kind when empty. */
  kinds?: readonly string[] | undefined;
  /** Actors or prefixes of whole segments (`key`, `key:ops`, `webhook:ses`); any actor when empty. */
  actors?: readonly string[] | undefined;
  /** Only changes about the address of this hash: its suppressions, allowlist entry and erasures. */
  hash?: string | undefined;
  /** As `hash`, by the address (hashed by the service). */
  email?: string | undefined;
}

/** The signed-in key as `GET …/api-key` names it: never the key itself. */
export interface ApiKeyInfo {
  name: string;
  scopes: ApiScope[];
}

/** The public JSON API of one project, called with the signed-in API key. */
export interface Api {
  /** The key's name and scopes; any key of the project may ask. */
  apiKey(signal?: AbortSignal): Promise<ApiKeyInfo>;
  messages(query: MessageQuery, signal?: AbortSignal): Promise<MessagePage>;
  /** One message with its timeline; `id` is a listed message's `id`. */
  message(id: string, signal?: AbortSignal): Promise<MessageDetail>;
  trackingIds(query: TrackingIdQuery, signal?: AbortSignal): Promise<TrackingIdPage>;
  /** Counts per UTC day: of one tracking ID, or of the whole project when `trackingId` is `null`. */
  stats(trackingId: string | null, range: DayRange, signal?: AbortSignal): Promise<Stats>;
  suppressions: {
    /** One list (`stream`'s, else the project-wide one); `emailPrefix`: suppressions whose address starts with this text. */
    list(query: SuppressionListQuery, signal?: AbortSignal): Promise<SuppressionPage>;
    /** Whether `email` is held back: from every mail without `stream`, from that stream's mail with one. */
    check(query: InList & { email: string }, signal?: AbortSignal): Promise<SuppressionCheck>;
    /** Adds to one list. `created` is false when that list already held the address (the API's 200 instead of 201). */
    add(email: string, list?: InList): Promise<{ suppression: Suppression; created: boolean }>;
    /** Removes from one list, never from another. */
    remove(hash: string, list?: InList): Promise<{ deleted: true; hash: string }>;
    /**
     * Removes by address from one list (the bulk route, since a hash may be keyed on the server); `false`
     * when that list did not hold it.
     */
    removeAddress(email: string, list?: InList): Promise<boolean>;
  };
  /** Addresses and `@domain`s that automatic rules never suppress. */
  allowlist: {
    list(query: { limit?: number; cursor?: string | undefined }, signal?: AbortSignal): Promise<AllowlistPage>;
    /** `created` is false when the allowlist already held it (the API's 200 instead of 201). */
    add(entry: string): Promise<{ entry: AllowlistItem; created: boolean }>;
    /** `entry` as listed: a normalized address or `@domain`. */
    remove(entry: string): Promise<void>;
  };
  /** The change feed in order after a cursor (`change_feed_not_configured` without a feed). */
  changes(query: ChangeQuery, signal?: AbortSignal): Promise<ChangeList>;
  /** Erases every trace of an address but a suppression of its hash (scope `admin`). */
  erase(email: string): Promise<Erasure>;
  /** The project's bounce and complaint rates against their thresholds (`alerts_not_configured` without rules). */
  alerts(signal?: AbortSignal): Promise<AlertStatus>;
  /** Streams whose sending the send gate blocks until resumed. */
  streams: {
    listPaused(signal?: AbortSignal): Promise<PausedStreamList>;
    /** `false` when it was no longer paused. */
    resume(stream: string): Promise<boolean>;
  };
  /** The configured outbound webhook endpoints and where each stands. */
  outbound: {
    list(signal?: AbortSignal): Promise<EndpointStatusList>;
    resume(endpointId: string): Promise<EndpointStatus>;
  };
}

/**
 * The API client of a session. Every answer that is not 2xx becomes an `ApiError` carrying the API's
 * own message; a 401 also calls `onUnauthorized` (the key was revoked or changed: back to sign-in).
 */
export function createApi(session: Session, onUnauthorized: (error: ApiError) => void = () => {}): Api {
  const project = new URL(`projects/${encodeURIComponent(session.projectId)}/`, apiBase);

  async function request<T>(
    method: string,
    path: string,
    { query, body, signal }: { query?: Query; body?: unknown; signal?: AbortSignal | undefined } = {},
  ): Promise<{ status: number; data: T }> {
    const url = new URL(path, project);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { 'x-api-key': session.apiKey, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
        cache: 'no-store',
        credentials: 'same-origin',
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError(0, 'network_error', 'The mailwarden service could not be reached. Check the connection and try again.');
    }
    const text = await response.text();
    if (response.ok) return { status: response.status, data: (text === '' ? undefined : JSON.parse(text)) as T };
    const error = errorOf(response.status, text);
    if (response.status === 401) onUnauthorized(error);
    throw error;
  }

  const call = async <T>(...parameters: Parameters<typeof request>): Promise<T> => (await request<T>(...parameters)).data;

  return {
    apiKey: (signal) => call('GET', 'api-key', { signal }),
    messages: (query, signal) => call('GET', 'messages', { query: { ...query }, signal }),
    message: async (id, signal) => call('GET', `messages/${pathSegment(id)}`, { signal }),
    trackingIds: (query, signal) => call('GET', 'tracking-ids', { query: { ...query }, signal }),
    stats: async (trackingId, range, signal) =>
      call('GET', trackingId === null ? 'stats' : `tracking-ids/${pathSegment(trackingId)}/stats`, {
        query: { ...range, interval: 'day' },
        signal,
      }),
    suppressions: {
      list: (query, signal) => call('GET', 'suppressions', { query: { ...query }, signal }),
      check: ({ email, stream }, signal) => call('GET', 'suppressions/check', { query: { email, stream }, signal }),
      add: async (email, { stream } = {}) => {
        const { status, data } = await request<Suppression>('POST', 'suppressions', { body: withStream({ email }, stream) });
        return { suppression: data, created: status === 201 };
      },
      remove: (hash, { stream } = {}) => call('DELETE', `suppressions/${encodeURIComponent(hash)}`, { query: { stream } }),
      removeAddress: async (email, { stream } = {}) => {
        const { results } = await call<BulkRemoveResults>('POST', 'suppressions/bulk-delete', {
          body: withStream({ items: [{ email }] }, stream),
        });
        const [result] = results;
        if (result !== undefined && 'error' in result) throw new ApiError(400, result.error.code, result.error.message);
        return result?.deleted === true;
      },
    },
    allowlist: {
      list: (query, signal) => call('GET', 'allowlist', { query: { ...query }, signal }),
      add: async (entry) => {
        const { status, data } = await request<AllowlistItem>('POST', 'allowlist', { body: { entry } });
        return { entry: data, created: status === 201 };
      },
      remove: (entry) => call('DELETE', `allowlist/${pathSegment(entry)}`),
    },
    changes: ({ after, limit, kinds, actors, hash, email }, signal) =>
      call('GET', 'changes', { query: { after, limit, kind: listed(kinds), actor: listed(actors), hash, email }, signal }),
    erase: (email) => call('POST', 'erasures', { body: { email } }),
    alerts: (signal) => call('GET', 'alerts', { signal }),
    streams: {
      listPaused: (signal) => call('GET', 'streams/paused', { signal }),
      resume: async (stream) => (await call<{ resumed: boolean }>('POST', `streams/${pathSegment(stream)}/resume`)).resumed,
    },
    outbound: {
      list: (signal) => call('GET', 'outbound-webhooks', { signal }),
      resume: (endpointId) => call('POST', `outbound-webhooks/${pathSegment(endpointId)}/resume`),
    },
  };
}

/** A repeatable filter as one comma-separated parameter; none when empty. */
function listed(values: readonly string[] | undefined): string | undefined {
  return values === undefined || values.length === 0 ? undefined : values.join(',');
}

/** A request body with `stream` only when a stream's list is meant, so a project-wide call sends what it always did. */
function withStream<T extends object>(body: T, stream: string | undefined): T & InList {
  return stream === undefined ? body : { ...body, stream };
}

/**
 * A value as one path segment. `.` and `..` cannot be one: every URL parser resolves them (encoded or
 * not) as "here" and "up", which would ask another route, so they are refused before any request.
 */
function pathSegment(value: string): string {
  if (value === '.' || value === '..') {
    throw new ApiError(0, 'unaddressable', `“${value}” cannot be sent as one segment of a URL path, so the API cannot be asked about it.`);
  }
  return encodeURIComponent(value);
}

function errorOf(status: number, text: string): ApiError {
  try {
    const { error } = JSON.parse(text) as ErrorBody;
    if (typeof error.code === 'string' && typeof error.message === 'string') return new ApiError(status, error.code, error.message);
  } catch {
    // Not mailwarden's error body (a proxy's page, say): described below.
  }
  return new ApiError(status, 'unexpected_response', `The service answered HTTP ${status} without an error body mailwarden knows.`);
}
