import { createHttpHandler, type HttpHandlerOptions, type HttpRequest, type HttpResponse, type Mailwarden } from '@mailwarden/core';
import { dashboardFor, type DashboardOption } from '@mailwarden/dashboard';
import express, { type Request, type Response, type Router } from 'express';

export interface MailwardenRouterOptions extends Omit<HttpHandlerOptions, 'dashboard'> {
  mailwarden: Mailwarden;
  /** Serve the dashboard at `dashboard/` under the router's mount point. Default `false`: see docs/dashboard.md. */
  dashboard?: DashboardOption;
}

/**
 * An Express router (Express 4 and 5) serving the mailwarden API, webhook intake, `/openapi.json` and,
 * with `dashboard: true`, the dashboard at `dashboard/`.
 * Every route, status and error comes from the core handler; this only translates requests and responses.
 *
 * Mount it before any body parser of the app (or at a path they skip): it reads bodies itself, because
 * webhook signatures cover the exact bytes. API routes still work behind `express.json()`.
 *
 * @example
 * app.use('/mailwarden', createMailwardenRouter({ mailwarden, apiKeys: { [process.env.ACME_KEY!]: 'acme' } }));
 */
export function createMailwardenRouter(options: MailwardenRouterOptions): Router {
  const handler = createHttpHandler(options.mailwarden, { ...options, dashboard: dashboardFor(options.dashboard) });
  const router = express.Router();
  router.use((request, response, next) => {
    // `catch` after `then`: an error while sending (headers already sent by the app, say) reaches `next` too.
    handler
      .handle(toHttpRequest(request))
      .then((answer) => send(response, answer))
      .catch(next);
  });
  return router;
}

function toHttpRequest(request: Request): HttpRequest {
  // `request.url` is relative to the mount point and still percent-encoded; the core parses it once.
  const url = request.url;
  const queryStart = url.indexOf('?');
  const consumed = request.readableEnded || (request as { _body?: boolean })._body === true;
  const base = {
    method: request.method,
    path: queryStart === -1 ? url : url.slice(0, queryStart),
    query: queryStart === -1 ? '' : url.slice(queryStart + 1),
    headers: request.headers,
    // `req.ip` follows the app's `trust proxy` setting: the forwarded client only behind a trusted proxy.
    ...(request.ip === undefined ? {} : { remoteAddress: request.ip }),
  };
  if (!consumed) return { ...base, body: request };
  // An earlier body parser read the stream: its raw bytes (express.raw) are the body; a parsed value
  // serves API routes only.
  const parsed: unknown = request.body;
  return Buffer.isBuffer(parsed) ? { ...base, body: parsed } : { ...base, parsedBody: parsed };
}

function send(response: Response, answer: HttpResponse): void {
  response.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  response.end(answer.body);
}
