import { errorCodes, MailwardenError, type ErrorCode, type ListSuppressionsQuery } from '@mailwarden/core';
import type { SuppressionTarget } from './target.js';

export interface RemoteOptions {
  /** The service's base URL, with its `basePath`: `http://127.0.0.1:3000`, `https://mail.example.com/mailwarden`. */
  url: string;
  /** A key that opens the project (`X-API-Key`). */
  apiKey: string;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/** The service at `url` could not be asked (refused, reset, not HTTP), or answered with no error body. */
export class RemoteServiceError extends Error {
  override readonly name = 'RemoteServiceError';
}

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
  const base = options.url.replace(/\/+$/, '');
  const fetcher = options.fetch ?? fetch;

  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const url = `${base}${path}`;
    let response: Response;
    try {
      response = await fetcher(url, {
        method,
        headers: { 'x-api-key': options.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new RemoteServiceError(`Cannot reach ${base}: ${cause?.code ?? cause?.message ?? String(error)}.`, { cause: error });
    }
    const text = await response.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new RemoteServiceError(`${method} ${url} answered ${response.status} with a body that is not JSON: is ${base} a mailwarden service?`);
    }
    if (response.ok) return answer as T;
    const error = (answer as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
    if (typeof error?.code === 'string' && (errorCodes as string[]).includes(error.code) && typeof error.message === 'string') {
      throw new MailwardenError(error.code as ErrorCode, error.message, error.details === undefined ? {} : { details: error.details });
    }
    throw new RemoteServiceError(`${method} ${url} answered ${response.status}.`);
  };

  const suppressions = (projectId: string) => `/projects/${encodeURIComponent(projectId)}/suppressions`;

  return {
    suppressions: {
      addMany: (projectId, items, addOptions) => call('POST', `${suppressions(projectId)}/bulk`, { items, ...(addOptions?.source === undefined ? {} : { source: addOptions.source }) }),
      checkMany: (projectId, emails) => call('POST', `${suppressions(projectId)}/check`, { emails }),
      list: (projectId, query: ListSuppressionsQuery = {}) => {
        const search = new URLSearchParams();
        for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
        const suffix = search.size > 0 ? `?${search}` : '';
        return call('GET', `${suppressions(projectId)}${suffix}`);
      },
    },
  };
}
