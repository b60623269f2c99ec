// The OpenAPI document is honest: every answer the handler gives, success or error, has its status
// documented for that operation, and its body validates against the documented schema (JSON Schema
// 2020-12, checked by Ajv). A route or schema change that the document does not follow fails here.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import {
  createHttpHandler,
  createMailwarden,
  createOpenApiDocument,
  MailwardenError,
  createMemoryStore,
  type HttpRequest,
  type Store,
} from '../src/index.js';
import { brevoWebhook } from '../src/testing/brevo.js';
import { deliverPostmarkMessages } from './providers/postmark.simulator.js';

interface Operation {
  responses: Record<string, { content?: { 'application/json': { schema: object } } }>;
}
const document = createOpenApiDocument() as { paths: Record<string, Record<string, Operation>>; components: object };
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();

/** The documented schema of one answer, resolving `#/components/…` against the document. */
function validatorOf(path: string, method: string, status: number): ValidateFunction | undefined {
  const key = `${method} ${path} ${status}`;
  if (!validators.has(key)) {
    const schema = document.paths[path]?.[method.toLowerCase()]?.responses[status]?.content?.['application/json'].schema;
    if (schema === undefined) return undefined;
    validators.set(key, ajv.compile({ ...schema, components: document.components }));
  }
  return validators.get(key);
}

const credentials = { username: 'postmark', password: 'secret' };
const downStore = (): Store => {
  const store = createMemoryStore({ changes: {} });
  const down = async () => {
    throw new MailwardenError('store_unavailable', 'down');
  };
  return { ...store, getSuppression: down, getSuppressions: down, addSuppression: down, applyEvents: down };
};

function handlerOn(store: Store) {
  const mailwarden = createMailwarden({
    store,
    webhooks: { auth: { acme: { postmark: { basic: [credentials] }, brevo: { bearer: ['brevo-token'] } } } },
    alerts: (projectId) => (projectId === 'acme' ? {} : undefined),
    // An endpoint whose delivery never runs (timers that never fire): its state as listed and resumed.
    outbound: {
      endpoints: { acme: [{ id: 'crm', url: 'https://crm.example.com/hooks', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }] },
      timers: { setTimeout: () => undefined, clearTimeout: () => {} },
    },
  });
  return createHttpHandler(mailwarden, { apiKeys: { k: 'acme' }, logger: { error: () => {} } });
}

const json = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));
const api = { 'x-api-key': 'k', 'content-type': 'application/json' };
const delivery = deliverPostmarkMessages(
  { To: 'bounced@example.com', Metadata: { service_id: 'campaign-1' } },
  { record: 'Bounce', escapeNonAscii: false, credentials },
)[0]!.request;
const brevoDelivery = brevoWebhook({
  auth: { bearer: 'brevo-token' },
  events: [{ type: 'delivered', recipient: 'jane@example.com', trackingId: 'campaign-1' }],
});

/** Requests of every operation, answered 2xx and with its errors; [template path, request]. */
const scenario: [string, Partial<HttpRequest>][] = [
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({ email: 'a@example.com' }) }],
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({ email: 'a@example.com' }) }],
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({ email: 'nope' }) }],
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({}) }],
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: { ...api, 'content-type': 'text/plain' }, body: json({}) }],
  [
    '/projects/{projectId}/suppressions',
    { method: 'POST', headers: { ...api, 'content-length': String(2 * 1024 * 1024) }, body: json({}) },
  ],
  ['/projects/{projectId}/suppressions', { method: 'GET', query: 'limit=1' }],
  ['/projects/{projectId}/suppressions', { method: 'GET', query: 'cursor=garbage' }],
  ['/projects/{projectId}/suppressions', { method: 'GET', headers: {} }],
  ['/projects/{projectId}/suppressions', { method: 'GET', headers: { 'x-api-key': 'wrong' } }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=a@example.com' }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=b@example.com' }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=bad' }],
  [
    '/projects/{projectId}/suppressions/check',
    { method: 'POST', headers: api, body: json({ emails: ['a@example.com', 'b@example.com'] }) },
  ],
  ['/projects/{projectId}/suppressions/check', { method: 'POST', headers: api, body: json({ emails: Array(101).fill('a@example.com') }) }],
  ['/projects/{projectId}/suppressions/check', { method: 'POST', headers: api, body: json({ emails: ['bad'] }) }],
  // Streams: answers with `stream` (a name, null), and invalid_stream.
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({ email: 'a@example.com', stream: 'marketing' }) }],
  [
    '/projects/{projectId}/suppressions',
    { method: 'POST', headers: api, body: json({ email: 'c@example.com', stream: 'marketing', source: 'unsubscribe' }) },
  ],
  ['/projects/{projectId}/suppressions', { method: 'POST', headers: api, body: json({ email: 'a@example.com', stream: 'Bad' }) }],
  ['/projects/{projectId}/suppressions', { method: 'GET', query: 'stream=marketing' }],
  ['/projects/{projectId}/suppressions', { method: 'GET', query: 'stream=Bad' }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=a@example.com&stream=marketing' }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=c@example.com&stream=marketing' }],
  ['/projects/{projectId}/suppressions/check', { method: 'GET', query: 'email=a@example.com&stream=-x' }],
  [
    '/projects/{projectId}/suppressions/check',
    { method: 'POST', headers: api, body: json({ emails: ['a@example.com', 'b@example.com', 'c@example.com'], stream: 'marketing' }) },
  ],
  [
    '/projects/{projectId}/suppressions/bulk-check',
    { method: 'POST', headers: api, body: json({ emails: ['a@example.com', 'c@example.com'], stream: 'marketing' }) },
  ],
  [
    '/projects/{projectId}/suppressions/bulk',
    { method: 'POST', headers: api, body: json({ items: [{ email: 'd@example.com' }, { email: 'nope' }], stream: 'marketing' }) },
  ],
  ['/projects/{projectId}/suppressions/bulk', { method: 'POST', headers: api, body: json({ items: [], stream: '' }) }],
  [
    '/projects/{projectId}/suppressions/bulk-delete',
    { method: 'POST', headers: api, body: json({ items: [{ email: 'd@example.com' }, { hash: 'xyz' }], stream: 'marketing' }) },
  ],
  [
    '/projects/{projectId}/suppressions/{hash}',
    { method: 'DELETE', path: `/projects/acme/suppressions/${'0'.repeat(64)}`, query: 'stream=marketing' },
  ],
  [
    '/projects/{projectId}/suppressions/{hash}',
    { method: 'DELETE', path: `/projects/acme/suppressions/${'0'.repeat(64)}`, query: 'stream=Bad' },
  ],
  ['/projects/{projectId}/webhooks/{provider}', { ...delivery, method: 'POST', body: delivery.rawBody }],
  [
    '/projects/{projectId}/webhooks/{provider}',
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: delivery.rawBody },
  ],
  ['/projects/{projectId}/webhooks/{provider}', { method: 'POST', headers: delivery.headers, body: new TextEncoder().encode('not json') }],
  // Brevo's route answers a store outage with 429 (it retries nothing else).
  [
    '/projects/{projectId}/webhooks/{provider}',
    { method: 'POST', path: '/projects/acme/webhooks/brevo', headers: brevoDelivery.headers, body: brevoDelivery.rawBody },
  ],
  ['/projects/{projectId}/messages', { method: 'GET', query: 'trackingId=campaign-1' }],
  ['/projects/{projectId}/messages', { method: 'GET', query: `trackingId=${'x'.repeat(129)}` }],
  ['/projects/{projectId}/tracking-ids', { method: 'GET', query: 'search=CAMP' }],
  ['/projects/{projectId}/tracking-ids', { method: 'GET', query: 'trackingId=campaign-1&search=CAMP' }],
  ['/projects/{projectId}/tracking-ids', { method: 'GET', query: `trackingId=${'x'.repeat(129)}` }],
  ['/projects/{projectId}/suppressions/{hash}', { method: 'DELETE', path: `/projects/acme/suppressions/${'0'.repeat(64)}` }],
  ['/projects/{projectId}/suppressions/{hash}', { method: 'DELETE', path: '/projects/acme/suppressions/xyz' }],
  ['/openapi.json', { method: 'GET', path: '/openapi.json', headers: {} }],
  // The change feed (after the writes above), alerts, paused streams and outbound endpoints.
  ['/projects/{projectId}/changes', { method: 'GET', query: 'limit=1000' }],
  ['/projects/{projectId}/changes', { method: 'GET', query: 'kind=suppression&kind=stream.paused' }],
  ['/projects/{projectId}/changes', { method: 'GET', query: 'after=x' }],
  ['/projects/{projectId}/alerts', { method: 'GET' }],
  ['/projects/{projectId}/alerts', { method: 'GET', query: 'tracking_id=campaign-1' }],
  ['/projects/{projectId}/alerts', { method: 'GET', query: `tracking_id=${'x'.repeat(129)}` }],
  ['/projects/{projectId}/streams/{stream}/pause', { method: 'POST', path: '/projects/acme/streams/marketing/pause' }],
  ['/projects/{projectId}/streams/{stream}/pause', { method: 'POST', path: '/projects/acme/streams/marketing/pause' }],
  ['/projects/{projectId}/streams/{stream}/pause', { method: 'POST', path: '/projects/acme/streams/Bad/pause' }],
  ['/projects/{projectId}/streams/paused', { method: 'GET' }],
  ['/projects/{projectId}/streams/{stream}/resume', { method: 'POST', path: '/projects/acme/streams/marketing/resume' }],
  ['/projects/{projectId}/outbound-webhooks', { method: 'GET' }],
  ['/projects/{projectId}/outbound-webhooks/{endpointId}/resume', { method: 'POST', path: '/projects/acme/outbound-webhooks/crm/resume' }],
  ['/projects/{projectId}/outbound-webhooks/{endpointId}/resume', { method: 'POST', path: '/projects/acme/outbound-webhooks/nope/resume' }],
  ['/projects/{projectId}/changes', { method: 'GET' }],
];

async function play(store: Store): Promise<{ operation: string; status: number }[]> {
  const handler = handlerOn(store);
  const seen: { operation: string; status: number }[] = [];
  // Then remove what the scenario suppressed, for the 200 of DELETE (the project-wide list's, then a stream's).
  const remove = async () => {
    const removals: [string, Partial<HttpRequest>][] = [];
    for (const query of ['', 'stream=marketing']) {
      const page = JSON.parse(
        String((await handler.handle({ method: 'GET', path: '/projects/acme/suppressions', query, headers: api })).body),
      ) as { items: { hash: string }[] };
      for (const item of page.items) {
        removals.push([
          '/projects/{projectId}/suppressions/{hash}',
          { method: 'DELETE', path: `/projects/acme/suppressions/${item.hash}`, query },
        ]);
      }
    }
    return removals;
  };
  for (const [template, overrides] of [...scenario, ...(await remove())]) {
    const method = overrides.method!;
    const request: HttpRequest = {
      method,
      path: template.replace('{projectId}', 'acme').replace('{provider}', 'postmark'),
      query: '',
      headers: { 'x-api-key': 'k' },
      ...overrides,
    };
    const response = await handler.handle(request);
    const validate = validatorOf(template, method, response.status);
    expect(validate, `${method} ${template} answered ${response.status}, which the document does not list: ${response.body}`).toBeDefined();
    expect(
      validate!(JSON.parse(String(response.body))),
      `${method} ${template} ${response.status}: ${ajv.errorsText(validate!.errors)}\n${response.body}`,
    ).toBe(true);
    seen.push({ operation: `${method} ${template}`, status: response.status });
  }
  return seen;
}

describe('every answer is documented in /openapi.json', () => {
  test('on a working store: successes and client errors', async () => {
    const seen = await play(createMemoryStore({ changes: {} }));
    const statuses = new Set(seen.map(({ status }) => status));
    for (const status of [200, 201, 400, 401, 404, 413, 415]) expect(statuses, `status ${status} was exercised`).toContain(status);
  });

  test('on a store that is down: 503 answers', async () => {
    const seen = await play(downStore());
    expect(seen.some(({ status }) => status === 503)).toBe(true);
    expect(seen).toContainEqual({ operation: 'POST /projects/{projectId}/webhooks/{provider}', status: 429 });
  });

  test('the validators are not vacuous: a body missing a required field fails', () => {
    const validate = validatorOf('/projects/{projectId}/suppressions', 'POST', 201)!;
    expect(validate({ hash: 'h', email: 'e', reason: 'manual' })).toBe(false);
    expect(validate({ hash: 'h', email: 'e', reason: 'manual', created_at: '2026-11-22T09:00:00.000Z' })).toBe(true);
  });
});
