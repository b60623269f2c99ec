import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { MailwardenError } from '../errors.js';

const reasonPhrases: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Answers what Node's HTTP server refuses before any framework sees a request (bytes that are not
 * HTTP/1.1, a bad URL, two Content-Lengths, headers over the limit, a request that stalled) with
 * mailwarden's error body, then closes the connection. Give it to a Node server as its `clientError`
 * listener, or to Fastify as `clientErrorHandler`.
 *
 * @example
 * const app = Fastify({ clientErrorHandler: answerClientError });
 * // or, for Express: createServer(app).on('clientError', answerClientError)
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A client that went away needs no answer, and one whose response has begun cannot get another.
  if (
    error.code === 'ECONNRESET' ||
    !socket.writable ||
    (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
  ) {
    socket.destroy();
    return;
  }
  writeError(socket, clientErrorOf(error));
}

/**
 * Answers `CONNECT` (which Node hands to a `connect` listener instead of the app, and otherwise drops)
 * with 405: mailwarden is no proxy.
 *
 * @example
 * server.on('connect', answerConnect);
 */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  const error = new MailwardenError('method_not_allowed', 'CONNECT is not answered here: this is no proxy.', { details: { allow: [] } });
  writeError(socket, error);
}

function clientErrorOf(error: Error & { code?: string }): MailwardenError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new MailwardenError('headers_too_large', 'The request headers are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new MailwardenError('request_timeout', 'The request did not arrive in time; the connection is closed.');
    default:
      return new MailwardenError('invalid_request', `The request is not valid HTTP/1.1 (${error.code ?? error.message}).`);
  }
}

function writeError(socket: Duplex, error: MailwardenError): void {
  const body = JSON.stringify(error.toBody());
  socket.end(
    [
      `HTTP/1.1 ${error.status} ${reasonPhrases[error.status] ?? 'Error'}`,
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
      'cache-control: no-store',
      'x-content-type-options: nosniff',
      'connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
