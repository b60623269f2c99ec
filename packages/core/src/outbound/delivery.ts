import type { Webhook } from 'standardwebhooks';

/** The user agent of every outbound request; `1.0` is the version of the payload's format. */
export const OUTBOUND_USER_AGENT = 'Mailwarden-Webhooks/1.0';

/** One signed request: a change's envelope for one endpoint (docs/outbound-webhooks.md#the-request). */
export interface OutboundRequest {
  url: string;
  /** `webhook-id`: the change's id, the same on every retry. */
  id: string;
  /** The JSON envelope `{ type, timestamp, data }`, exactly as signed. */
  body: string;
  signers: readonly Webhook[];
  /** The attempt's time (epoch milliseconds): `webhook-timestamp`. */
  now: number;
}

export interface DeliveryLimits {
  timeoutMs: number;
  maxResponseBytes: number;
  fetch: typeof fetch;
}

/** The Standard Webhooks headers of a request: one `v1,` signature per secret, space-separated, for rotation. */
export function signedHeaders({ id, body, signers, now }: OutboundRequest): Record<string, string> {
  const timestamp = new Date(now);
  return {
    'content-type': 'application/json',
    'user-agent': OUTBOUND_USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': signers.map((signer) => signer.sign(id, timestamp, body)).join(' '),
  };
}

/**
 * POSTs one change. Resolves with `null` when the endpoint acknowledged it (a 2xx), else with the failure
 * as `OutboundState.lastError` says it (`HTTP 503`, `timeout`, `connection refused`…), never the answer's
 * text. Redirects are not followed (a 3xx is a failure) and at most `maxResponseBytes` of an answer are read.
 */
export async function deliver(request: OutboundRequest, limits: DeliveryLimits): Promise<string | null> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await limits.fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: signedHeaders(request),
      body: request.body,
    });
  } catch (error) {
    return signal.aborted ? 'timeout' : networkFailure(error);
  }
  // The answer's body says nothing we use: read a bounded part of it so the connection can be reused.
  await drain(response.body, limits.maxResponseBytes);
  if (response.status >= 200 && response.status < 300) return null;
  // `redirect: 'manual'` answers an opaque 0 in some runtimes for a 3xx.
  return response.status === 0 ? 'HTTP redirect' : `HTTP ${response.status}`;
}

/** Reads at most `maxBytes` of a body, then cancels the rest; a body that fails or times out is let go. */
async function drain(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  let read = 0;
  try {
    while (read < maxBytes) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // A body cut short or past the timeout changes nothing: the status is the answer.
  }
}

const networkCodes: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection reset',
};

/** A network failure in a few bounded words (fetch wraps the system error as its `cause`). */
function networkFailure(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  if (code === undefined) return 'network error';
  return networkCodes[code] ?? `network error (${code.slice(0, 40)})`;
}
