/** Request headers as Node gives them: lower-case names, repeated headers as arrays. */
export type HttpHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * A request as a binding hands it to the core handler: nothing framework-specific, so every route,
 * status and error is decided once, in core.
 */
export interface HttpRequest {
  method: string;
  /** The path below the mount point, still percent-encoded, starting with `/` (no query). */
  path: string;
  /** The raw query string without `?`, or `''`. */
  query: string;
  headers: HttpHeaders;
  /**
   * The body as received: its bytes, or the request stream itself, which the handler reads within the
   * route's size cap. Absent when the request has none.
   */
  body?: Uint8Array | AsyncIterable<Uint8Array>;
  /**
   * A value an earlier body parser of the host app already made of a JSON body (Express apps that run
   * `express.json()` before mounting mailwarden). API routes accept it; webhooks cannot, since their
   * signatures cover the original bytes.
   */
  parsedBody?: unknown;
  /**
   * The client's address as the binding sees it (Express's `req.ip`, Fastify's `request.ip`: behind a
   * trusted proxy, the forwarded one), for per-client rate limits. Absent: limited as one unknown client.
   */
  remoteAddress?: string;
}

/** A response as the handler decides it; bindings copy it onto the framework's reply unchanged. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text, the bytes of a dashboard file, or `''` when the response has no body (HEAD, 304). */
  body: string | Uint8Array;
}

/** The first value of a header, by lower-case name. */
export function firstHeader(headers: HttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : value?.[0];
}
