import { isMailwardenError, MailwardenError } from '../errors.js';
import { firstHeader, type HttpHeaders } from './request.js';

export const MiB = 1024 * 1024;

/**
 * Reads a request body up to `limit` bytes, or throws `payload_too_large` as soon as it is clear the
 * body is bigger: from `Content-Length` before reading anything, else while reading.
 */
export async function readBody(
  headers: HttpHeaders,
  body: Uint8Array | AsyncIterable<Uint8Array> | undefined,
  limit: number,
): Promise<Uint8Array> {
  const tooLarge = () =>
    new MailwardenError('payload_too_large', `The request body is larger than ${limit} bytes.`, { details: { limit } });
  const declared = Number(firstHeader(headers, 'content-length') ?? 0);
  if (declared > limit) throw tooLarge();
  if (body === undefined) return new Uint8Array(0);
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw tooLarge();
    return body;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    if (isMailwardenError(error)) throw error;
    // The client hung up (or timed out) mid-upload: an ordinary event, answered as the client's fault
    // (nobody will read the answer) rather than logged as an unexpected error.
    throw new MailwardenError('invalid_request', 'The connection closed before the whole request body arrived.', { cause: error });
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/**
 * The JSON value of an API request body. The API speaks JSON only (docs/decisions.md#http): another content type is
 * `unsupported_media_type`, an empty body or malformed JSON is `invalid_request`.
 */
export function parseJsonBody(headers: HttpHeaders, bytes: Uint8Array): unknown {
  if (firstHeader(headers, 'content-type') === undefined && bytes.byteLength === 0) {
    throw new MailwardenError('invalid_request', 'This endpoint expects a JSON body with Content-Type: application/json.');
  }
  assertJsonMediaType(headers);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new MailwardenError('invalid_request', 'The request body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new MailwardenError('invalid_request', 'The request body is not valid JSON.');
  }
}

/** Throws `unsupported_media_type` unless the request declares a JSON body in UTF-8. */
export function assertJsonMediaType(headers: HttpHeaders): void {
  const contentType = firstHeader(headers, 'content-type');
  const [mediaType = '', ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (!JSON_MEDIA_TYPE.test(mediaType) || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new MailwardenError(
      'unsupported_media_type',
      `Send the body as Content-Type: application/json (UTF-8); got ${contentType === undefined ? 'no Content-Type' : JSON.stringify(contentType)}.`,
    );
  }
}
