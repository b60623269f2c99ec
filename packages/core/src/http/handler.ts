import { parse as parseQueryString } from 'node:querystring';
import { MailwardenError, isMailwardenError, type ErrorBody } from '../errors.js';
import type { MailwardenLogger } from '../services/hooks.js';
import type { Mailwarden } from '../mailwarden.js';
import { keyActor } from '../store/actor.js';
import { createApiKeyCheck, type ApiKeys, type ApiScope, type PresentedKey } from './api-keys.js';
import { MiB, assertJsonMediaType, parseJsonBody, readBody } from './body.js';
import { createOpenApiDocument, type OpenApiOptions } from './openapi.js';
import { createRateLimiter, rateLimitBucketOf, rateLimitedError, type RateLimitExceeded, type RateLimitOptions } from './rate-limits.js';
import { firstHeader, type HttpHeaders, type HttpRequest, type HttpResponse } from './request.js';
import { routes, type Route, type RouteInput } from './routes.js';
import { unsubscribeRoutes } from './unsubscribe-routes.js';

/** Where the handler reports what callers cannot be told: unexpected errors, an unreachable store. Pino-shaped. */
export type HttpLogger = MailwardenLogger;

export interface HttpHandlerOptions {
  /** The `X-API-Key` keys, the projects each opens and its scopes; see `ApiKeys`. */
  apiKeys: ApiKeys;
  /** Default: `console.error`. Bindings pass the framework's logger. */
  logger?: HttpLogger;
  /** Body caps in bytes. Default: 1 MiB for the API, 10 MiB for webhooks. */
  bodyLimits?: { api?: number; webhook?: number };
  /** Seconds a client should wait after a 503. Default 5. */
  retryAfterSeconds?: number;
  /** What `/openapi.json` says about where the API lives. */
  openapi?: OpenApiOptions;
  /**
   * Serves the dashboard at `/dashboard/` (`createDashboard()` of `@mailwarden/dashboard`; the bindings'
   * `dashboard: true` does this). Without it, `/dashboard/` answers 404.
   */
  dashboard?: DashboardFiles;
  /**
   * Fixed-window rate limits per client address, key, unsubscribe and webhook address (docs/http.md,
   * "Rate limits"), counted in the store when it can (shared by every instance). Off when absent or
   * `false`; `{}` is on with the defaults.
   */
  rateLimits?: RateLimitOptions | false;
}

/** The dashboard's static files: what `createDashboard()` of `@mailwarden/dashboard` returns. */
export interface DashboardFiles {
  /** The answer for a GET or HEAD of `path` (`/dashboard…`, still percent-encoded), or `undefined` when no file is there. */
  serve(request: { path: string; headers: HttpHeaders; head: boolean }): HttpResponse | undefined;
}

export interface HttpHandler {
  /** Answers one request. Never throws: every failure becomes the error body of docs/errors.md. */
  handle(request: HttpRequest): Promise<HttpResponse>;
}

interface CompiledRoute {
  route: Route;
  /** The path template's segments: a literal, or the name of a parameter. */
  parts: readonly (string | { param: string })[];
  /** How many parameters it has: of two matching routes, the one with fewer wins. */
  paramCount: number;
}

/**
 * The framework-free HTTP API: every endpoint of the spec plus webhook intake and `/openapi.json`,
 * with the auth, validation, limits and error bodies of docs/http.md. Express and Fastify bindings only
 * translate their request into an `HttpRequest` and copy the `HttpResponse` back.
 *
 * @example
 * const handler = createHttpHandler(mailwarden, { apiKeys: { [process.env.ACME_KEY!]: 'acme' } });
 * const response = await handler.handle({ method: 'GET', path: '/projects/acme/suppressions', query: '', headers: {} });
 */
export function createHttpHandler(mailwarden: Mailwarden, options: HttpHandlerOptions): HttpHandler {
  const checkApiKey = createApiKeyCheck(options.apiKeys);
  const logger = options.logger ?? { error: (context, message) => console.error(message, context) };
  const apiLimit = options.bodyLimits?.api ?? MiB;
  const webhookLimit = options.bodyLimits?.webhook ?? 10 * MiB;
  const retryAfter = String(options.retryAfterSeconds ?? 5);
  const compiled: CompiledRoute[] = [...routes, ...unsubscribeRoutes].map(compileRoute);
  const limiter =
    options.rateLimits === undefined || options.rateLimits === false
      ? undefined
      : createRateLimiter(mailwarden.store, options.rateLimits, { now: mailwarden.now, logger });
  let openApiText: string | undefined;

  /** `routed.template` learns the route's template once the path is matched (for the metrics' `route` label). */
  async function dispatch(request: HttpRequest, routed?: { template: string }): Promise<HttpResponse> {
    const method = request.method.toUpperCase();
    const segments = pathSegments(request.path);
    if (segments.length === 1 && segments[0] === 'openapi.json') {
      if (routed !== undefined) routed.template = '/openapi.json';
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(['GET', 'HEAD']);
      openApiText ??= JSON.stringify(createOpenApiDocument(options.openapi));
      return json(200, openApiText, method === 'HEAD');
    }
    if (segments[0] === 'dashboard') {
      if (routed !== undefined && options.dashboard !== undefined) routed.template = '/dashboard';
      return serveDashboard(request, method);
    }
    const matches = matchRoutes(compiled, segments);
    if (matches.length === 0) throw new MailwardenError('not_found', `No endpoint at ${request.path}.`);
    if (routed !== undefined) routed.template = matches[0]!.route.path;
    // HEAD reads like GET unless a route answers HEAD itself (webhook probes).
    const match =
      matches.find((candidate) => candidate.route.method === method) ??
      (method === 'HEAD' ? matches.find((candidate) => candidate.route.method === 'GET') : undefined);
    if (match === undefined) throw methodNotAllowed(allowedMethods(matches.map((candidate) => candidate.route.method)));
    const { route } = match;
    const params = paramsOf(match, segments);
    // Once a route is known, its failures are its own: a 401 carries the route's challenge, and a store
    // outage the status its provider retries (its webhook definition's `storeUnavailableStatus`).
    return runRoute(request, method, route, params).catch((error: unknown) =>
      failure(error, request, route.challenge?.(params), route.storeUnavailableStatus?.(params)),
    );
  }

  async function runRoute(request: HttpRequest, method: string, route: Route, params: Record<string, string>): Promise<HttpResponse> {
    const presented = route.auth === 'api_key' ? checkApiKey(firstHeader(request.headers, 'x-api-key'), params.projectId!) : undefined;
    let key: PresentedKey | undefined;
    let limited: RateLimitExceeded | undefined;
    if (limiter === undefined) key = await presented;
    else {
      // The request's buckets counted together (docs/http.md, "Rate limits"), answered at once, in order:
      // the address's limit before the key's refusal (a flood of bad keys gets 429s), the key's after its scope.
      let refused: { error: unknown } | undefined;
      try {
        key = await presented;
      } catch (error) {
        refused = { error };
      }
      const [byAddress, byKey] = limiter.hit([
        [rateLimitBucketOf(route), request.remoteAddress ?? 'unknown'],
        ...(key === undefined ? [] : [['key', key.name] as const]),
      ]);
      if (byAddress !== undefined) return rateLimited(byAddress, method === 'HEAD');
      if (refused !== undefined) throw refused.error;
      limited = byKey;
    }
    if (key !== undefined && route.scope !== undefined && !key.scopes.includes(route.scope)) throw insufficientScope(route.scope, key);
    if (limited !== undefined) return rateLimited(limited, method === 'HEAD');
    const limit = route.auth === 'webhook' ? webhookLimit : apiLimit;
    const input: RouteInput = {
      params,
      query: queryParameters(request.query, route.repeatableQuery),
      json: async () => {
        if (request.parsedBody !== undefined && request.body === undefined) {
          // Another parser read the body: its declared size and type still have to pass ours.
          await readBody(request.headers, undefined, limit);
          assertJsonMediaType(request.headers);
          return request.parsedBody;
        }
        return parseJsonBody(request.headers, await readBody(request.headers, request.body, limit));
      },
      bytes: async () => {
        if (request.body === undefined && request.parsedBody !== undefined) {
          throw new Error('The request body was consumed by a body parser mounted before mailwarden: webhooks need the raw bytes.');
        }
        return readBody(request.headers, request.body, limit);
      },
      request,
      ...(key === undefined ? {} : { actor: keyActor(key.name), scopes: key.scopes }),
    };
    const result = await route.run(mailwarden, input);
    if (result.response !== undefined) return method === 'HEAD' ? { ...result.response, body: '' } : result.response;
    return json(result.status, result.body === undefined ? '' : JSON.stringify(result.body), method === 'HEAD');
  }

  /** The dashboard's files: public, like `/openapi.json`; every read of data goes through the API and its keys. */
  function serveDashboard(request: HttpRequest, method: string): HttpResponse {
    if (options.dashboard === undefined) {
      throw new MailwardenError('not_found', 'The dashboard is not enabled here: mount mailwarden with `dashboard: true`.');
    }
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(['GET', 'HEAD']);
    const answer = options.dashboard.serve({ path: request.path, headers: request.headers, head: method === 'HEAD' });
    if (answer === undefined) throw new MailwardenError('not_found', `No dashboard file at ${request.path}.`);
    return answer;
  }

  function failure(error: unknown, request: HttpRequest, challenge?: string, unavailableStatus?: number): HttpResponse {
    const known = isMailwardenError(error) && error.code !== 'internal_error' ? error : undefined;
    if (known === undefined || known.status >= 500) {
      logger.error(
        { err: error, method: request.method, path: request.path },
        known === undefined ? 'mailwarden: unexpected error while answering a request' : `mailwarden: ${known.code}`,
      );
    }
    const answer = known ?? new MailwardenError('internal_error', 'Something went wrong on our side; the error is logged.');
    const status = answer.code === 'store_unavailable' && unavailableStatus !== undefined ? unavailableStatus : answer.status;
    const response = json(status, errorText(answer), request.method.toUpperCase() === 'HEAD');
    if (answer.status === 503) response.headers['retry-after'] = retryAfter;
    if (answer.code === 'method_not_allowed') response.headers.allow = (answer.details as { allow: string[] }).allow.join(', ');
    if (answer.status === 401 && challenge !== undefined) response.headers['www-authenticate'] = challenge;
    return response;
  }

  const handle = async (request: HttpRequest, routed?: { template: string }): Promise<HttpResponse> => {
    try {
      return await dispatch(request, routed);
    } catch (error) {
      return failure(error, request);
    }
  };
  const { metrics } = mailwarden;
  if (metrics === undefined) return { handle };
  return {
    async handle(request) {
      const started = performance.now();
      const routed = { template: UNMATCHED_ROUTE };
      const response = await handle(request, routed);
      metrics.httpRequest(routed.template, methodLabel(request.method), response.status, (performance.now() - started) / 1000);
      return response;
    },
  };
}

/** The `route` label of a request no route matched: its path is the caller's text, never a label (docs/metrics.md). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The methods the API and the dashboard answer or refuse by name; any other is `other`, so the label stays bounded. */
const methodLabels = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

function methodLabel(method: string): string {
  const upper = method.toUpperCase();
  return methodLabels.has(upper) ? upper : 'other';
}

function json(status: number, body: string, head: boolean): HttpResponse {
  const headers: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  if (body !== '') headers['content-type'] = 'application/json; charset=utf-8';
  return { status, headers, body: head ? '' : body };
}

/** A 429 with `Retry-After` and the `RateLimit-*` fields; those are never on a success, whose bytes stay as they were. */
function rateLimited(exceeded: RateLimitExceeded, head: boolean): HttpResponse {
  const response = json(429, errorText(rateLimitedError(exceeded)), head);
  response.headers['retry-after'] = String(exceeded.retryAfterSeconds);
  response.headers['ratelimit-limit'] = String(exceeded.limit);
  response.headers['ratelimit-remaining'] = '0';
  response.headers['ratelimit-reset'] = String(exceeded.retryAfterSeconds);
  return response;
}

/** The error body as JSON; without its details if they cannot be serialized, so an answer is always sent. */
function errorText(error: MailwardenError): string {
  try {
    return JSON.stringify(error.toBody() satisfies ErrorBody);
  } catch {
    return JSON.stringify({ error: { code: error.code, message: error.message } } satisfies ErrorBody);
  }
}

/** A key of the project without the route's scope (docs/http.md, "Scopes"): the message names the scope needed. */
function insufficientScope(required: ApiScope, key: PresentedKey): MailwardenError {
  return new MailwardenError('insufficient_scope', `This API key lacks the "${required}" scope this request needs.`, {
    details: { required, scopes: key.scopes },
  });
}

function methodNotAllowed(allow: string[]): MailwardenError {
  return new MailwardenError('method_not_allowed', `This endpoint answers ${allow.join(', ')}.`, { details: { allow } });
}

function allowedMethods(methods: string[]): string[] {
  const allow = new Set(methods);
  if (allow.has('GET')) allow.add('HEAD');
  return [...allow];
}

/** The path's segments, percent-decoded; one trailing slash is ignored. Malformed encoding is `invalid_request`. */
function pathSegments(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (!trimmed.startsWith('/')) return [];
  const segments = trimmed.slice(1).split('/');
  if (!trimmed.includes('%')) return segments;
  try {
    return segments.map(decodeURIComponent);
  } catch {
    throw new MailwardenError('invalid_request', 'The path is not valid percent-encoded UTF-8.');
  }
}

function compileRoute(route: Route): CompiledRoute {
  const parts = route.path
    .split('/')
    .slice(1)
    .map((part) => (part.startsWith('{') ? { param: part.slice(1, -1) } : part));
  return { route, parts, paramCount: parts.filter((part) => typeof part !== 'string').length };
}

/**
 * The routes whose template matches the segments (one per method). A literal segment beats a
 * parameter: `/suppressions/check` is the check, not a hash named "check".
 */
function matchRoutes(compiled: readonly CompiledRoute[], segments: readonly string[]): CompiledRoute[] {
  let matches: CompiledRoute[] = [];
  let fewest = Infinity;
  for (const candidate of compiled) {
    if (candidate.parts.length !== segments.length || candidate.paramCount > fewest) continue;
    const matched = candidate.parts.every((part, i) => (typeof part === 'string' ? part === segments[i] : segments[i] !== ''));
    if (!matched) continue;
    if (candidate.paramCount < fewest) {
      fewest = candidate.paramCount;
      matches = [];
    }
    matches.push(candidate);
  }
  return matches;
}

function paramsOf({ parts }: CompiledRoute, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  parts.forEach((part, i) => {
    if (typeof part !== 'string') params[part.param] = segments[i]!;
  });
  return params;
}

/**
 * Query parameters, each at most once: a repeated one is ambiguous, so it is refused, unless the route
 * takes a list there (`repeatableQuery`): then its values are joined with commas, as if sent so.
 */
function queryParameters(query: string, repeatable: readonly string[] = []): Record<string, string> {
  // `querystring` decodes as URLSearchParams does (`+` is a space, bad escapes kept) at a fraction of
  // the cost, into an object without a prototype; a repeated name comes back as an array.
  const parsed = parseQueryString(query);
  for (const name in parsed) {
    const value = parsed[name];
    if (typeof value === 'string') continue;
    if (value === undefined || !repeatable.includes(name)) {
      throw new MailwardenError('invalid_request', `The query parameter "${name}" is given more than once.`);
    }
    parsed[name] = value.join(',');
  }
  return parsed as Record<string, string>;
}
