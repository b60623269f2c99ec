import { createHttpHandler, MailwardenError, type HttpHandlerOptions, type HttpRequest, type Mailwarden } from '@mailwarden/core';
import { dashboardFor, type DashboardOption } from '@mailwarden/dashboard';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export interface MailwardenPluginOptions extends Omit<HttpHandlerOptions, 'dashboard'> {
  mailwarden: Mailwarden;
  /** Serve the dashboard at `dashboard/` under the plugin's prefix. Default `false`: see docs/dashboard.md. */
  dashboard?: DashboardOption;
}

/**
 * A Fastify plugin serving the mailwarden API, webhook intake, `/openapi.json` and, with
 * `dashboard: true`, the dashboard at `dashboard/`, under its `prefix`.
 * It is encapsulated: its content-type handling (every body kept as the raw stream, read by the core
 * handler within its size caps) does not leak into the rest of the app. Errors are logged through the
 * app's logger unless `logger` is given.
 *
 * @example
 * await app.register(mailwardenPlugin, { prefix: '/mailwarden', mailwarden, apiKeys: { [process.env.ACME_KEY!]: 'acme' } });
 */
export const mailwardenPlugin: FastifyPluginAsync<MailwardenPluginOptions> = async (fastify, options) => {
  const handler = createHttpHandler(options.mailwarden, { logger: fastify.log, ...options, dashboard: dashboardFor(options.dashboard) });
  const prefix = fastify.prefix;

  // The core reads and parses bodies (JSON for the API; JSON, text/plain JSON and forms for webhooks),
  // so every content type reaches it as the untouched request stream.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  const toHttpRequest = (request: FastifyRequest, body: unknown): HttpRequest => {
    const url = request.url.slice(prefix.length);
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    return {
      method: request.method,
      path: path === '' ? '/' : path,
      query: queryStart === -1 ? '' : url.slice(queryStart + 1),
      headers: request.headers,
      // `request.ip` follows the app's `trustProxy`: the forwarded client only behind a trusted proxy.
      remoteAddress: request.ip,
      ...(body === undefined ? {} : { body: body as AsyncIterable<Uint8Array> }),
    };
  };
  const answer = async (request: FastifyRequest, reply: FastifyReply, body: unknown = request.body) => {
    const response = await handler.handle(toHttpRequest(request, body));
    return reply
      .code(response.status)
      .headers(response.headers)
      .send(response.body === '' ? undefined : response.body);
  };

  fastify.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    exposeHeadRoute: false,
    handler: (request, reply) => answer(request, reply),
  });
  // What Fastify would answer itself inside the prefix, the core answers instead, so both bindings agree:
  // methods Fastify has no route for (PROPFIND…), the bare prefix, and Content-Types it cannot parse.
  fastify.setNotFoundHandler((request, reply) => answer(request, reply));
  fastify.setErrorHandler((error, request, reply) => {
    if (requestRefusals.has((error as { code?: string }).code ?? '')) return answer(request, reply, request.raw);
    throw error;
  });
};

/** Refusals Fastify makes of a request before its route runs, which the core answers in its own way. */
const requestRefusals = new Set([
  'FST_ERR_CTP_INVALID_MEDIA_TYPE', // a Content-Type it cannot parse
  'FST_ERR_ROUTE_MISSING_CONTENT_TYPE', // QUERY without a Content-Type
  'FST_ERR_CTP_EMPTY_TYPE',
  'FST_ERR_CTP_INVALID_TYPE',
]);

/**
 * Fastify rejects a URL with malformed percent-encoding before any plugin runs, with its own 400 body.
 * Pass this as the app's `frameworkErrors` to answer it with mailwarden's error body instead, as the
 * Express router does. It applies to the whole app.
 *
 * @example
 * const app = Fastify({ frameworkErrors: mailwardenFrameworkErrors });
 */
export function mailwardenFrameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer =
    error.code === 'FST_ERR_BAD_URL'
      ? new MailwardenError('invalid_request', 'The path is not valid percent-encoded UTF-8.')
      : new MailwardenError('invalid_request', 'The request cannot be routed.');
  void reply.code(answer.status).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(answer.toBody());
}
