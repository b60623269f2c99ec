/** A request as the suite sends it: everything fetch needs, nothing framework-specific. */
export interface HttpCall {
  method?: string;
  headers?: Record<string, string>;
  /** A value sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Raw bytes or text, sent as given (fetch adds `text/plain;charset=UTF-8` to a string body unless told otherwise). */
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** A response, read to its end. */
export interface Answer {
  status: number;
  headers: Headers;
  /** The body text exactly as received (`''` for HEAD). */
  text: string;
}

/** Sends one request over the network with the global fetch and reads the whole answer. */
export async function send(url: string, call: HttpCall = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...call.headers };
  let body: RequestInit['body'];
  if (call.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(call.json);
  } else if (call.body !== undefined) {
    body = call.body;
  }
  const init: RequestInit & { duplex?: 'half' } = { method: call.method ?? 'GET', headers, redirect: 'manual' };
  if (body !== undefined) init.body = body;
  // A stream body has no Content-Length: it goes out chunked, and fetch requires half duplex for it.
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The parsed JSON body of an answer; fails with the text when it is not JSON. */
export function jsonOf(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new Error(`expected a JSON body, got ${answer.status} ${JSON.stringify(answer.text.slice(0, 300))}`);
  }
}

/** A body of `size` bytes that arrives in 64 KiB chunks without a Content-Length. */
export function chunkedBody(size: number, fill = 0x20): ReadableStream<Uint8Array> {
  const chunk = 64 * 1024;
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const length = Math.min(chunk, size - sent);
      sent += length;
      controller.enqueue(new Uint8Array(length).fill(fill));
    },
  });
}
