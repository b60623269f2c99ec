/** A webhook request as a framework hands it over: what verification and parsing need, nothing more. */
export interface WebhookRequest {
  method: string;
  /** Header names in lower case (as Node gives them); repeated headers as arrays. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The body exactly as received: signatures cover bytes, and re-serialized JSON never matches. */
  rawBody: Uint8Array;
  /**
   * The public URL the provider posts to, exactly as configured at the provider (scheme, host, path,
   * query). Mandrill signs it; behind a proxy the app's own view of the URL differs, so it is configured.
   */
  url?: string;
}

/** The first value of a header, by case-insensitive name. */
export function headerValue(request: WebhookRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const key of Object.keys(request.headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value = request.headers[key];
    return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}
