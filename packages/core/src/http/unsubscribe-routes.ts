import { z } from 'zod';
import { parseInput } from '../input.js';
import type { Route } from './routes.js';
import { confirmationPage, unsubscribedPage } from './unsubscribe-page.js';

const createLinkRequestSchema = z
  .object({
    email: z.string().describe('The recipient the link unsubscribes.'),
    stream: z.string().optional().describe('The stream it unsubscribes from; without it, every mail of the project.'),
  })
  .meta({ id: 'UnsubscribeLinkRequest' });

const unsubscribeLinkSchema = z
  .object({
    url: z.url().describe('The link: GET shows a page with a button, POST unsubscribes.'),
    headers: z
      .object({ 'List-Unsubscribe': z.string(), 'List-Unsubscribe-Post': z.literal('List-Unsubscribe=One-Click') })
      .describe('The two headers of RFC 8058 to put in the message.'),
  })
  .meta({ id: 'UnsubscribeLink' });

/**
 * One-click unsubscribe (RFC 8058; docs/unsubscribe.md): links made with the project's API key, and the
 * link itself, which answers anyone who has it, since it is what a mail client or a recipient follows.
 */
export const unsubscribeRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/projects/{projectId}/unsubscribe-links',
    auth: 'api_key',
    scope: 'check',
    operationId: 'createUnsubscribeLink',
    summary: 'Make a one-click unsubscribe link (RFC 8058) for one recipient, from one stream or from everything',
    description:
      'Stateless: the link holds an encrypted token naming the project, the stream and the address; nothing is stored until it is used. ' +
      'Put `headers` into the message as they are.',
    requestBody: createLinkRequestSchema,
    responses: { 200: { description: 'The link and its headers.', schema: unsubscribeLinkSchema } },
    errors: ['invalid_request', 'invalid_email', 'invalid_stream', 'unsubscribe_links_not_configured'],
    run: async (mailwarden, { params, json }) => {
      const { email, stream } = parseInput(createLinkRequestSchema, await json(), 'request body');
      return {
        status: 200,
        body: mailwarden.unsubscribeLinks.create(params.projectId!, stream === undefined ? { email } : { email, stream }),
      };
    },
  },
  {
    method: 'GET',
    path: '/projects/{projectId}/unsubscribe/{token}',
    auth: 'public',
    rateLimitBucket: 'unsubscribe',
    operationId: 'showUnsubscribePage',
    summary: 'The page of an unsubscribe link: what it will do, and a button that POSTs; never unsubscribes',
    description: 'An HTML page (mail scanners follow links, so a GET writes nothing). Needs no API key: the token is the authority.',
    responses: { 200: { description: 'The HTML page with the button.' } },
    errors: ['invalid_unsubscribe_token', 'unsubscribe_links_not_configured'],
    run: async (mailwarden, { params }) => ({
      status: 200,
      response: confirmationPage(mailwarden.unsubscribeLinks.read(params.projectId!, params.token!)),
    }),
  },
  {
    method: 'POST',
    path: '/projects/{projectId}/unsubscribe/{token}',
    auth: 'public',
    rateLimitBucket: 'unsubscribe',
    operationId: 'unsubscribe',
    summary: 'Use an unsubscribe link: one-click (body List-Unsubscribe=One-Click) or the page button',
    description:
      'Suppresses the address in the link’s stream (or project-wide) with reason `manual` and source `unsubscribe`, then answers an HTML page. ' +
      'Idempotent: a second POST changes nothing and answers the same. Needs no API key; the body is not required.',
    responses: { 200: { description: 'Unsubscribed (now or before): an HTML page saying so.' } },
    errors: ['invalid_request', 'payload_too_large', 'invalid_unsubscribe_token', 'unsubscribe_links_not_configured', 'store_unavailable'],
    run: async (mailwarden, { params, bytes, request }) => {
      // Read within the size cap, not parsed: RFC 8058's body (`List-Unsubscribe=One-Click`) carries nothing
      // the token does not, and some clients send it as multipart or not at all. A form parser of the host
      // app (`express.urlencoded()`) may have read it already: then there is nothing left to read.
      if (request.parsedBody === undefined) await bytes();
      const target = await mailwarden.unsubscribeLinks.unsubscribe(params.projectId!, params.token!);
      return { status: 200, response: unsubscribedPage(target) };
    },
  },
];
