import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { errorCodes, MailwardenError, type ErrorCode, type ListSuppressionsQuery } from '@mailwarden/core';
import type { SuppressionTarget } from './target.js';

export interface RemoteOptions {
  /** The service's base URL, with its `basePath`: `http://127.0.0.1:3000`, `https://mail.example.com/mailwarden`. */
  url: string;
  /** A key that opens the project (`X-API-Key`). */
  apiKey: string;
  /** Default: Node's own HTTP client, over kept-alive connections. */
  fetch?: typeof fetch;
}

/** The service at `url` could not be asked (refused, reset, not HTTP), or answered with no error body. */
export class RemoteServiceError extends Error {
  override readonly name = 'RemoteServiceError';
}

type Method = 'GET' | 'POST' | 'DELETE';

/** One request and its answer, as text. */
type Exchange = (
  method: Method,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
) => Promise<{ status: number; text: string }>;

/**
 * The suppression endpoints of a running service as a `SuppressionTarget`, so the CLI imports into
 * and exports from any store, the memory store of a running process included. An error answer is
 * thrown as the `MailwardenError` the service sent (`store_unavailable`, `invalid_api_key`, …).
 *
 * @example
 * const remote = remoteSuppressions({ url: 'http://127.0.0.1:3000', apiKey: process.env.MAILWARDEN_API_KEY! });
 * await importSuppressions(remote, { projectId: 'acme', file: 'bounces.csv' });
 */
export function remoteSuppressions(options: RemoteOptions): { suppressions: SuppressionTarget } {
  const send = remoteCaller(options);
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => (await send<T>(method, path, body)).answer;

  const suppressions = (projectId: string) => `/projects/${encodeURIComponent(projectId)}/suppressions`;

  return {
    suppressions: {
      addMany: (projectId, items, addOptions) =>
        call('POST', `${suppressions(projectId)}/bulk`, {
          items,
          ...(addOptions?.source === undefined ? {} : { source: addOptions.source }),
          ...(addOptions?.stream === undefined ? {} : { stream: addOptions.stream }),
        }),
      checkMany: (projectId, emails, checkOptions) =>
        call('POST', `${suppressions(projectId)}/bulk-check`, {
          emails,
          ...(checkOptions?.stream === undefined ? {} : { stream: checkOptions.stream }),
        }),
      list: (projectId, query: ListSuppressionsQuery = {}) => {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
        const suffix = search.size > 0 ? `?${search}` : '';
        return call('GET', `${suppressions(projectId)}${suffix}`);
      },
    },
  };
}

/**
 * Sends requests to the service at `options.url` with its API key: the JSON answer of a 2xx and its
 * status (a 204 answers `undefined`); an error answer is thrown as the `MailwardenError` the service
 * sent, anything else as a `RemoteServiceError`.
 */
export function remoteCaller(
  options: RemoteOptions,
): <T>(method: Method, path: string, body?: unknown) => Promise<{ status: number; answer: T }> {
  const base = options.url.replace(/\/+$/, '');
  const exchange = options.fetch === undefined ? nodeExchange() : fetchExchange(options.fetch);

  return async <T>(method: Method, path: string, body?: unknown) => {
    const url = `${base}${path}`;
    const headers: Record<string, string> = {
      'x-api-key': options.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    let response: { status: number; text: string };
    try {
      response = await exchange(method, url, headers, body === undefined ? undefined : JSON.stringify(body));
    } catch (error) {
      // fetch wraps the system error (ECONNREFUSED…) in a `cause`; Node's client throws it as it is.
      const reason = ((error as { cause?: unknown }).cause ?? error) as { code?: string; message?: string };
      throw new RemoteServiceError(`Cannot reach ${base}: ${reason.code ?? reason.message ?? String(error)}.`, { cause: error });
    }
    if (response.status === 204) return { status: 204, answer: undefined as T };
    let answer: unknown;
    try {
      answer = JSON.parse(response.text);
    } catch {
      throw new RemoteServiceError(
        `${method} ${url} answered ${response.status} with a body that is not JSON: is ${base} a mailwarden service?`,
      );
    }
    if (response.status >= 200 && response.status < 300) return { status: response.status, answer: answer as T };
    const error = (answer as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
    if (typeof error?.code === 'string' && (errorCodes as string[]).includes(error.code) && typeof error.message === 'string') {
      throw new MailwardenError(error.code as ErrorCode, error.message, error.details === undefined ? {} : { details: error.details });
    }
    throw new RemoteServiceError(`${method} ${url} answered ${response.status}.`);
  };
}

function fetchExchange(fetcher: typeof fetch): Exchange {
  return async (method, url, headers, body) => {
    const response = await fetcher(url, { method, headers, ...(body === undefined ? {} : { body }) });
    return { status: response.status, text: await response.text() };
  };
}

/**
 * Requests with `node:http` and `node:https`: an import of a million rows makes about eleven thousand,
 * and with the global `fetch` (undici) the CLI took half again as much CPU for it and 80 MB more memory.
 * Connections are kept alive between requests; an idle one does not keep the process running.
 */
function nodeExchange(): Exchange {
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return (method, url, headers, body) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const options = {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents.https : agents.http,
      };
      const request = (secure ? httpsRequest : httpRequest)(target, options, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
}
