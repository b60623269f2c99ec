import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { errorCodes, errorStatus, type ErrorCode } from '../src/errors.js';
import { providers } from '../src/events/delivery-event.js';
import { webhookRoutes } from '../src/webhooks/routes.js';
import { createOpenApiDocument } from '../src/http/openapi.js';
import { routes as apiRoutes, type Route, type RouteAuth } from '../src/http/routes.js';
import { unsubscribeRoutes } from '../src/http/unsubscribe-routes.js';

/** Every route the handler answers: the API's and one-click unsubscribe's. */
const routes: readonly Route[] = [...apiRoutes, ...unsubscribeRoutes];

interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: { 'application/json': { schema: Record<string, unknown> } };
}
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: unknown;
  responses: Record<string, Response>;
  security: unknown[];
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  servers?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

const document = () => createOpenApiDocument() as unknown as Document;
const operationOf = (doc: Document, route: Pick<Route, 'path' | 'method'>): Operation => {
  const operation = doc.paths[route.path]?.[route.method.toLowerCase()];
  if (operation === undefined) throw new Error(`No ${route.method} ${route.path} in the document.`);
  return operation;
};

/** Every `$ref` in the document. */
function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => (key === '$ref' && typeof item === 'string' ? [item] : refsOf(item)));
}

// docs/http.md#errors: the errors every route of a kind may answer, stated again here so the test checks the code.
// docs/http.md, "Rate limits": with `rateLimits` on, every route may answer `rate_limited`.
const errorsOfKind: Record<RouteAuth, ErrorCode[]> = {
  api_key: ['missing_api_key', 'invalid_api_key', 'forbidden', 'rate_limited', 'store_unavailable', 'internal_error'],
  webhook: ['payload_too_large', 'rate_limited', 'store_unavailable', 'internal_error'],
  public: ['rate_limited', 'internal_error'],
};
const codesOf = (route: Route): ErrorCode[] => [
  ...route.errors,
  ...errorsOfKind[route.auth],
  ...(route.requestBody === undefined ? [] : (['payload_too_large', 'unsupported_media_type'] as const)),
  // docs/http.md, "Scopes": a route that needs a scope refuses a key without it.
  ...(route.scope === undefined ? [] : (['insufficient_scope'] as const)),
];

describe('createOpenApiDocument', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    for (const options of [undefined, { title: 'Acme mail', version: '1.2.3', servers: [{ url: 'https://mail.example.com/api' }] }]) {
      const validator = new Validator();
      const result = await validator.validate(createOpenApiDocument(options));
      expect(result.valid, JSON.stringify(result.errors, null, 2)).toBe(true);
      expect(validator.version).toBe('3.1');
    }
  });

  it.each([
    ['without info', (doc: Document) => delete (doc as Partial<Document>).info],
    ['with a dangling $ref', (doc: Document) => delete doc.components.schemas.Suppression],
    [
      'with a response lacking its description',
      (doc: Document) => delete (doc.paths['/openapi.json']!.get!.responses['200'] as Partial<Response>).description,
    ],
  ])('is rejected by the validator when broken: %s', async (_name, breakIt) => {
    const broken = document();
    breakIt(broken);
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('has every route under its method and operationId, plus /openapi.json', () => {
    const doc = document();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) expect(operationOf(doc, route).operationId).toBe(route.operationId);
    expect(operationOf(doc, { method: 'GET', path: '/openapi.json' }).responses['200']?.content?.['application/json'].schema).toMatchObject(
      {
        type: 'object',
      },
    );
    const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(operationIds).toHaveLength(routes.length + 1);
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it('resolves every $ref to a component, and every component is used', () => {
    const doc = document();
    const refs = refsOf(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(doc.components.schemas).toHaveProperty([ref.slice('#/components/schemas/'.length)]);
    }
    expect(new Set(refs)).toEqual(new Set(Object.keys(doc.components.schemas).map((id) => `#/components/schemas/${id}`)));
    expect(JSON.stringify(doc)).not.toContain('$defs');
  });

  it('documents every error a route can answer under its status, as an Error body', () => {
    const doc = document();
    const documented = new Set<string>();
    for (const route of routes) {
      const { responses } = operationOf(doc, route);
      for (const code of codesOf(route)) {
        const response = responses[errorStatus[code]];
        expect(response?.description, `${route.operationId} ${code}`).toContain(`\`${code}\``);
        expect(response?.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
        if (errorStatus[code] === 503 || errorStatus[code] === 429) expect(response?.headers).toHaveProperty('Retry-After');
        documented.add(code);
      }
    }
    // The rest are not answered by a route: 405 comes from the router, 408 and 431 from Node's HTTP
    // server (answerClientError), the last two from the send side.
    expect(errorCodes.filter((code) => !documented.has(code)).sort()).toEqual([
      'headers_too_large',
      'method_not_allowed',
      'request_timeout',
      'tracking_id_not_carriable',
      'unsubscribe_not_carriable',
    ]);
  });

  it('applies the X-API-Key scheme exactly to api_key routes', () => {
    const doc = document();
    expect(doc.components.securitySchemes).toEqual({ apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } });
    for (const route of routes) {
      expect(operationOf(doc, route).security, route.operationId).toEqual(route.auth === 'api_key' ? [{ apiKey: [] }] : []);
    }
    expect(operationOf(doc, { method: 'GET', path: '/openapi.json' }).security).toEqual([]);
    expect(operationOf(doc, { method: 'POST', path: '/projects/{projectId}/webhooks/{provider}' }).description).toMatch(
      /provider's own mechanism/,
    );
  });

  it('says each API-key route\'s scope, as x-mailwarden-scope and in its description (docs/http.md, "Scopes")', () => {
    const doc = document();
    for (const route of routes) {
      const operation = operationOf(doc, route) as Operation & { 'x-mailwarden-scope'?: string };
      expect(operation['x-mailwarden-scope'], route.operationId).toBe(route.scope);
      if (route.scope !== undefined) {
        expect(operation.description).toContain(`Needs a key with the \`${route.scope}\` scope`);
        expect(operation.responses['403']?.description).toContain('`insufficient_scope`');
      } else if (route.auth === 'api_key') {
        expect(operation.description).toContain('Any key of the project may call it');
        expect(operation.responses['403']?.description).not.toContain('insufficient_scope');
      }
    }
    // Every API-key route but the one that says what a key may do needs a scope.
    expect(routes.filter((route) => route.auth === 'api_key' && route.scope === undefined).map((route) => route.operationId)).toEqual([
      'getApiKey',
    ]);
    const apiKey = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/api-key' });
    expect(apiKey.responses['200']?.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/ApiKeyInfo' });
    expect(doc.components.schemas.ApiKeyInfo).toMatchObject({ required: ['name', 'scopes'] });
  });

  it('describes parameters, bodies and both success statuses of addSuppression', () => {
    const doc = document();
    const add = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/suppressions' });
    for (const status of ['200', '201']) {
      expect(add.responses[status]?.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/Suppression' });
    }
    expect(add.requestBody).toMatchObject({ required: true, content: { 'application/json': { schema: { required: ['email'] } } } });

    const list = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/suppressions' });
    expect(list.parameters).toEqual([
      expect.objectContaining({
        name: 'projectId',
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' },
      }),
      expect.objectContaining({ name: 'stream', in: 'query', required: false, schema: expect.objectContaining({ type: 'string' }) }),
      expect.objectContaining({ name: 'reason', in: 'query', required: false, schema: { $ref: '#/components/schemas/SuppressionReason' } }),
      expect.objectContaining({ name: 'emailPrefix', in: 'query', required: false, schema: expect.objectContaining({ type: 'string' }) }),
      expect.objectContaining({ name: 'from', in: 'query', required: false, schema: expect.objectContaining({ type: 'string' }) }),
      expect.objectContaining({ name: 'to', in: 'query', required: false, schema: expect.objectContaining({ type: 'string' }) }),
      expect.objectContaining({ name: 'expiring', in: 'query', required: false, schema: { type: 'boolean' } }),
      expect.objectContaining({ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } }),
      expect.objectContaining({ name: 'cursor', in: 'query', required: false, schema: { type: 'string' } }),
    ]);
    expect(list.parameters?.find((parameter) => parameter.name === 'limit')?.description).toMatch(/1 to 100/);
    expect(list.parameters?.find((parameter) => parameter.name === 'from')?.description).toMatch(/inclusive/);
    expect(list.parameters?.find((parameter) => parameter.name === 'to')?.description).toMatch(/exclusive/);

    const messages = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/messages' });
    expect(messages.parameters?.map((parameter) => parameter.name)).toEqual([
      'projectId',
      'trackingId',
      'status',
      'recipient',
      'recipientPrefix',
      'recipientDomain',
      'provider',
      'stream',
      'from',
      'to',
      'limit',
      'cursor',
    ]);
    // The partial searches: documented as searches (never an error for partial text), with examples.
    const searches = [...(messages.parameters ?? []), ...(list.parameters ?? [])].filter((parameter) =>
      /Prefix|Domain/.test(parameter.name),
    );
    expect(searches.map((parameter) => parameter.name)).toEqual(['recipientPrefix', 'recipientDomain', 'emailPrefix']);
    for (const parameter of searches) {
      expect(parameter, parameter.name).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
      expect(parameter.description, parameter.name).toMatch(/empty means no filter.*at most 254 characters/);
      expect(JSON.stringify(parameter), parameter.name).toMatch(/"examples?"/);
    }
    expect(searches[0]!.description).toMatch(/starts with this text.*any text is a search/);
    expect(searches[1]!.description).toMatch(/domain is this domain \(a leading `@` allowed\)/);
    expect(messages.parameters?.find((parameter) => parameter.name === 'provider')?.schema).toEqual({
      $ref: '#/components/schemas/Provider',
    });

    const check = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/suppressions/check' });
    expect(check.parameters).toContainEqual(expect.objectContaining({ name: 'email', in: 'query', required: true }));
    const webhook = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/webhooks/{provider}' });
    expect(webhook.parameters).toContainEqual(
      expect.objectContaining({ name: 'provider', in: 'path', required: true, schema: { type: 'string', enum: [...webhookRoutes] } }),
    );
    // A webhook route: every provider, then ses-eventbridge (SES's second intake); the listings filter by provider.
    expect(webhookRoutes).toEqual([...providers, 'ses-eventbridge']);
  });

  it('takes title, version and servers from the options', () => {
    const servers = [{ url: 'https://mail.example.com/api', description: 'Production' }];
    const doc = createOpenApiDocument({ title: 'Acme mail', version: '1.2.3', servers }) as unknown as Document;
    expect(doc.info).toMatchObject({ title: 'Acme mail', version: '1.2.3' });
    expect(doc.servers).toEqual(servers);
    expect(document().info).toMatchObject({ title: 'mailwarden API', version: '0.0.0' });
    expect(document()).not.toHaveProperty('servers');
  });

  it('is JSON-serializable and the same on every call', () => {
    const first = document();
    expect(JSON.parse(JSON.stringify(first))).toEqual(first);
    first.components.schemas.Error = 'edited by a caller';
    expect(JSON.stringify(document())).toBe(JSON.stringify(document()));
    expect(document().components.schemas.Error).toMatchObject({ type: 'object' });
  });
});

describe('streams (docs/http.md, "Streams")', () => {
  const suppressionRoutes = routes.filter((route) => route.path.startsWith('/projects/{projectId}/suppressions'));

  it('every suppression endpoint takes an optional stream: a query parameter without a body, a body field with one', () => {
    const doc = document();
    expect(suppressionRoutes.map((route) => route.operationId).sort()).toEqual([
      'addSuppression',
      'addSuppressions',
      'checkSuppression',
      'checkSuppressions',
      'checkSuppressionsInBulk',
      'listSuppressions',
      'removeSuppression',
      'removeSuppressions',
    ]);
    for (const route of suppressionRoutes) {
      const operation = operationOf(doc, route);
      if (route.requestBody === undefined) {
        const parameter = operation.parameters?.find((candidate) => candidate.name === 'stream');
        expect(parameter, route.operationId).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
        expect(parameter?.description, route.operationId).toMatch(/1 to 64 lower-case letters.*`invalid_stream`.*absent or empty/);
      } else {
        const body = (operation.requestBody as { content: { 'application/json': { schema: Record<string, unknown> } } }).content[
          'application/json'
        ].schema;
        const resolved = ('$ref' in body ? doc.components.schemas[String(body.$ref).slice('#/components/schemas/'.length)] : body) as {
          properties: Record<string, { description?: string }>;
          required?: string[];
        };
        expect(resolved.properties.stream, route.operationId).toMatchObject({ description: expect.stringMatching(/absent or null/) });
        expect(resolved.required ?? [], route.operationId).not.toContain('stream');
      }
      expect(route.errors, route.operationId).toContain('invalid_stream');
      expect(operation.responses['400']?.description, route.operationId).toContain('`invalid_stream`');
    }
  });

  it('add and bulk add take source api, import or unsubscribe', () => {
    const doc = document();
    const add = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/suppressions' }).requestBody as {
      content: { 'application/json': { schema: { properties: Record<string, unknown> } } };
    };
    expect(add.content['application/json'].schema.properties.source).toMatchObject({ enum: ['api', 'import', 'unsubscribe'] });
    const bulk = doc.components.schemas.BulkSuppressionRequest as { properties: Record<string, unknown> };
    expect(bulk.properties.source).toMatchObject({ enum: ['api', 'import', 'unsubscribe'] });
  });
});

describe('response schemas stay open for additions', () => {
  it('no schema of the document closes its objects with additionalProperties: false', () => {
    expect(JSON.stringify(document())).not.toContain('"additionalProperties":false');
  });

  it('a response schema still lists its fields and which are required', () => {
    const suppression = document().components.schemas.Suppression as { properties: Record<string, unknown>; required: string[] };
    // Provenance (source, cause) and a stream's name are added beside the spec's fields, which stay the only required ones.
    // So are expiry, the soft-bounce rule and the allowlisted mark (issue 25), each only when set.
    expect(Object.keys(suppression.properties).sort()).toEqual([
      'allowlisted',
      'cause',
      'created_at',
      'email',
      'expires_at',
      'hash',
      'reason',
      'rule',
      'source',
      'stream',
    ]);
    expect([...suppression.required].sort()).toEqual(['created_at', 'email', 'hash', 'reason']);
  });
});

describe('expiry and the allowlist (docs/http.md, "Suppressions that expire", "Allowlist")', () => {
  const bodyOf = (doc: Document, path: string): { properties: Record<string, Record<string, unknown>>; required?: string[] } => {
    const body = (
      operationOf(doc, { method: 'POST', path }).requestBody as { content: { 'application/json': { schema: Record<string, unknown> } } }
    ).content['application/json'].schema;
    return ('$ref' in body ? doc.components.schemas[String(body.$ref).slice('#/components/schemas/'.length)] : body) as never;
  };

  it('add and each bulk item take an optional expires_at (a time) or ttl (whole seconds, at least 1)', () => {
    const doc = document();
    const add = bodyOf(doc, '/projects/{projectId}/suppressions');
    const item = doc.components.schemas.BulkSuppressionItem as { properties: Record<string, Record<string, unknown>>; required: string[] };
    for (const body of [add, item]) {
      expect(body.properties.expires_at).toMatchObject({ type: 'string', description: expect.stringMatching(/after now.*Not with `ttl`/) });
      expect(body.properties.ttl).toMatchObject({ type: 'integer', minimum: 1 });
      expect(body.required).not.toContain('expires_at');
      expect(body.required).not.toContain('ttl');
    }
  });

  it('check answers and the rule show expires_at, rule and allowlisted as optional fields', () => {
    const doc = document();
    const rule = doc.components.schemas.SuppressionRule as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(rule.properties)).toEqual(['bounces', 'days', 'reset_on_delivery', 'events']);
    expect(rule.required.sort()).toEqual(['bounces', 'days', 'events', 'reset_on_delivery']);
    const check = doc.components.schemas.SuppressionCheck as { anyOf: { properties: Record<string, unknown>; required: string[] }[] };
    const suppressed = check.anyOf[0]!;
    for (const field of ['expires_at', 'rule', 'allowlisted']) {
      expect(suppressed.properties, field).toHaveProperty(field);
      expect(suppressed.required, field).not.toContain(field);
    }
  });

  it('documents the allowlist routes: list, add (201 or 200) and remove (204, or 404 allowlist_entry_not_found)', () => {
    const doc = document();
    const list = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/allowlist' });
    expect(list.responses['200']?.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/AllowlistPage' });
    expect(list.parameters?.map((parameter) => parameter.name)).toEqual(['projectId', 'limit', 'cursor']);
    const add = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/allowlist' });
    for (const status of ['200', '201']) {
      expect(add.responses[status]?.content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/AllowlistEntry' });
    }
    expect(add.responses['400']?.description).toContain('`invalid_email`');
    const remove = operationOf(doc, { method: 'DELETE', path: '/projects/{projectId}/allowlist/{entry}' });
    expect(remove.responses['204']).toEqual({ description: 'Removed.' });
    expect(remove.responses['404']?.description).toContain('`allowlist_entry_not_found`');
    expect(remove.parameters?.[1]).toMatchObject({
      name: 'entry',
      in: 'path',
      required: true,
      description: expect.stringMatching(/URL-encoded/),
    });
    expect(doc.components.schemas.AllowlistEntry).toMatchObject({
      properties: { kind: { enum: ['address', 'domain'] } },
      required: ['entry', 'kind', 'created_at'],
    });
  });
});

describe('the feed, alerts, paused streams and outbound endpoints (docs/http.md)', () => {
  const schemaOf = (operation: Operation, status: string) => operation.responses[status]?.content?.['application/json'].schema;

  it('documents the change feed: after, limit, kind and actor lists, hash or email; 404 without a feed, 410 past retention', () => {
    const doc = document();
    const list = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/changes' });
    expect(schemaOf(list, '200')).toEqual({ $ref: '#/components/schemas/ChangeList' });
    expect(list.parameters?.map((parameter) => parameter.name)).toEqual(['projectId', 'after', 'limit', 'kind', 'actor', 'hash', 'email']);
    expect(list.parameters?.find((parameter) => parameter.name === 'kind')?.description).toMatch(/repeated or comma-separated/);
    expect(list.parameters?.find((parameter) => parameter.name === 'actor')?.description).toMatch(/repeated or comma-separated/);
    expect(list.parameters?.find((parameter) => parameter.name === 'limit')?.schema).toMatchObject({ minimum: 1, maximum: 1000 });
    expect(list.responses['404']?.description).toContain('`change_feed_not_configured`');
    expect(list.responses['410']?.description).toContain('`change_cursor_expired`');
  });

  it('documents alerts, paused streams (pause 201 or 200) and outbound endpoints (404 endpoint_not_found)', () => {
    const doc = document();
    const alerts = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/alerts' });
    expect(schemaOf(alerts, '200')).toEqual({ $ref: '#/components/schemas/AlertStatus' });
    expect(alerts.parameters?.map((parameter) => parameter.name)).toEqual(['projectId', 'tracking_id']);
    expect(alerts.responses['404']?.description).toContain('`alerts_not_configured`');

    const pause = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/streams/{stream}/pause' });
    for (const status of ['200', '201']) expect(schemaOf(pause, status)).toEqual({ $ref: '#/components/schemas/PausedStream' });
    expect(pause.requestBody).toBeUndefined();
    expect(pause.parameters?.[1]).toMatchObject({ name: 'stream', in: 'path', schema: { pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' } });
    expect(pause.responses['400']?.description).toContain('`invalid_stream`');
    const resume = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/streams/{stream}/resume' });
    expect(schemaOf(resume, '200')).toEqual({ $ref: '#/components/schemas/StreamResumed' });
    const paused = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/streams/paused' });
    expect(schemaOf(paused, '200')).toEqual({ $ref: '#/components/schemas/PausedStreamList' });

    const endpoints = operationOf(doc, { method: 'GET', path: '/projects/{projectId}/outbound-webhooks' });
    expect(schemaOf(endpoints, '200')).toEqual({ $ref: '#/components/schemas/OutboundEndpointList' });
    const resumeEndpoint = operationOf(doc, { method: 'POST', path: '/projects/{projectId}/outbound-webhooks/{endpointId}/resume' });
    expect(schemaOf(resumeEndpoint, '200')).toEqual({ $ref: '#/components/schemas/OutboundEndpoint' });
    expect(resumeEndpoint.responses['404']?.description).toContain('`endpoint_not_found`');
    // The secrets of an endpoint are configuration, never an answer.
    expect(JSON.stringify(doc.components.schemas.OutboundEndpoint)).not.toContain('secret');
  });
});
