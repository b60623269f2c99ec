import { z } from 'zod';
import { errorCodes, errorStatus, type ErrorCode } from '../errors.js';
import { webhookRoutes } from '../webhooks/routes.js';
import { PROJECT_ID } from '../input.js';
import { STREAM_NAME } from '../stream.js';
import { errorBodySchema } from '../api-schemas.js';
import { routes, type Route, type RouteAuth } from './routes.js';
import { unsubscribeRoutes } from './unsubscribe-routes.js';

export interface OpenApiOptions {
  /** Document title; default 'mailwarden API'. */
  title?: string;
  /** Document version; default '0.0.0'. */
  version?: string;
  /** OpenAPI `servers`; default none, so paths are relative to the host serving the document. */
  servers?: readonly { url: string; description?: string }[];
}

type JsonObject = Record<string, unknown>;
type Operation = Omit<Route, 'run'>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const retryAfterHeader = { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } };

/**
 * The errors every route of a kind may answer, beyond its own `errors` (docs/http.md#errors); every
 * route is rate-limited when the handler's `rateLimits` is on (docs/http.md, "Rate limits").
 */
const errorsOfKind: Readonly<Record<RouteAuth, readonly ErrorCode[]>> = {
  api_key: ['missing_api_key', 'invalid_api_key', 'forbidden', 'rate_limited', 'store_unavailable', 'internal_error'],
  webhook: ['payload_too_large', 'rate_limited', 'store_unavailable', 'internal_error'],
  public: ['rate_limited', 'internal_error'],
};
const requestBodyErrors: readonly ErrorCode[] = ['payload_too_large', 'unsupported_media_type'];

const pathParameters: Readonly<Record<string, { description: string; schema: JsonObject }>> = {
  projectId: {
    description: 'The project: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    schema: { type: 'string', pattern: PROJECT_ID.source },
  },
  hash: { description: 'Hash of the suppressed address, as returned in `hash`.', schema: { type: 'string' } },
  id: {
    description: 'The message, by the `id` the message listing gives it: 32 lower-case hex characters.',
    schema: { type: 'string', pattern: '^[0-9a-f]{32}$' },
  },
  provider: {
    description: "The webhook route: the email provider posting the events, or a second intake of a provider's events (docs/providers/).",
    schema: { type: 'string', enum: [...webhookRoutes] },
  },
  entry: {
    description:
      'An allowlist entry as it was added: an address, or `@` and a domain; URL-encoded (`seed%40example.com`, `%40example.com`).',
    schema: { type: 'string' },
  },
  stream: {
    description: 'A stream: 1 to 64 lower-case letters, digits, `-` and `_`, starting with a letter or digit (`invalid_stream` otherwise).',
    schema: { type: 'string', pattern: STREAM_NAME.source },
  },
  endpointId: {
    description: "An outbound webhook endpoint's `id`, as the configuration names it and the endpoint listing shows it.",
    schema: { type: 'string' },
  },
  token: {
    description:
      'The sealed token of a one-click unsubscribe link, as the link made by `createUnsubscribeLink` has it (docs/unsubscribe.md).',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
  },
};

/** `/openapi.json` is answered by the handler itself, not by a route, but belongs in the document. */
const openApiOperation: Operation = {
  method: 'GET',
  path: '/openapi.json',
  auth: 'public',
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI 3.1 document',
  responses: { 200: { description: 'The OpenAPI document.', schema: z.looseObject({}) } },
  errors: [],
};

/**
 * Builds the OpenAPI 3.1 document of the HTTP API from the route table and the zod wire schemas, so the
 * document cannot drift from what the handler does. Pure: every call returns an equal, fresh document.
 *
 * @example
 * const document = createOpenApiDocument({ servers: [{ url: 'https://mail.example.com/api' }] });
 */
export function createOpenApiDocument(options: OpenApiOptions = {}): Record<string, unknown> {
  const components: Record<string, unknown> = {};

  /** The JSON Schema of `schema`; schemas with a meta `id` move to `components.schemas` and are referenced. */
  const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonObject => {
    // Responses may gain fields in later versions: their objects stay open (zod's output side closes
    // them with `additionalProperties: false`), so strict clients do not break on an addition.
    const { $defs = {}, ...root } = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      override: ({ jsonSchema }) => {
        if (io === 'output' && jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
      },
    });
    delete root.$schema;
    for (const [id, definition] of Object.entries($defs)) {
      const relocated = relocateRefs(definition);
      if (id in components && JSON.stringify(components[id]) !== JSON.stringify(relocated)) {
        throw new Error(`The schema id "${id}" names two different shapes (input and output?); give one its own id.`);
      }
      components[id] = relocated;
    }
    return relocateRefs(root) as JsonObject;
  };
  const content = (schema: JsonObject) => ({ 'application/json': { schema } });

  // Query values arrive as strings the schema coerces, and OpenAPI describes a parameter's value after
  // deserialization: that is the schema's output (`limit` → integer 1..100). Its input side would be
  // `int | digit string` without the range.
  const queryParameters = (query: z.ZodObject) =>
    Object.entries(query.shape).map(([name, property]) => {
      const { description, ...schema } = jsonSchema(property, 'output');
      const required = !z.safeParse(property, undefined).success;
      return { name, in: 'query', required, ...(description === undefined ? {} : { description }), schema };
    });

  const errorResponses = (route: Operation): JsonObject => {
    const codes = new Set([
      ...route.errors,
      ...errorsOfKind[route.auth],
      ...(route.requestBody ? requestBodyErrors : []),
      ...(route.scope === undefined ? [] : (['insufficient_scope'] as const)),
    ]);
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errorCodes.filter((candidate) => codes.has(candidate))) {
      byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
    }
    const responses: JsonObject = {};
    for (const [status, statusCodes] of byStatus) {
      responses[status] = {
        description: `Error codes: ${statusCodes.map((code) => `\`${code}\``).join(', ')}.`,
        ...(status === 503 || status === 429 ? { headers: { 'Retry-After': retryAfterHeader } } : {}),
        content: content(ERROR_REF),
      };
    }
    // A route whose provider retries only 429 answers a store outage so (its webhook definition's `storeUnavailableStatus`).
    if (route.storeUnavailableStatus !== undefined && codes.has('store_unavailable')) {
      const limited = byStatus.has(429) ? `${(responses[429] as { description: string }).description} ` : '';
      responses[429] = {
        description: `${limited}Error code \`store_unavailable\`, on the route of a provider that retries only a 429.`,
        headers: { 'Retry-After': retryAfterHeader },
        content: content(ERROR_REF),
      };
    }
    return responses;
  };

  const operation = (route: Operation): JsonObject => {
    const parameters = [
      ...[...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name = '']) => ({
        name,
        in: 'path',
        required: true,
        ...(pathParameters[name] ?? { schema: { type: 'string' } }),
      })),
      ...(route.query === undefined ? [] : queryParameters(route.query)),
    ];
    const responses: JsonObject = {};
    for (const [status, { description, schema }] of Object.entries(route.responses)) {
      responses[status] = { description, ...(schema === undefined ? {} : { content: content(jsonSchema(schema, 'output')) }) };
    }
    const description = [route.description, scopeSentence(route)].filter((text) => text !== undefined).join(' ');
    return {
      operationId: route.operationId,
      summary: route.summary,
      ...(description === '' ? {} : { description }),
      ...(route.scope === undefined ? {} : { 'x-mailwarden-scope': route.scope }),
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(route.requestBody === undefined
        ? {}
        : { requestBody: { required: true, content: content(jsonSchema(route.requestBody, 'input')) } }),
      responses: { ...responses, ...errorResponses(route) },
      security: route.auth === 'api_key' ? [{ apiKey: [] }] : [],
    };
  };

  jsonSchema(errorBodySchema, 'output'); // puts `Error`, which every error response references, in the components
  const paths: Record<string, JsonObject> = {};
  for (const route of [...routes, ...unsubscribeRoutes, openApiOperation]) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  // A deep copy, so a caller editing its document cannot reach the next one through shared constants.
  return structuredClone({
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'mailwarden API',
      version: options.version ?? '0.0.0',
      description: 'Email delivery tracking and per-project suppression lists.',
    },
    ...(options.servers === undefined ? {} : { servers: options.servers }),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => (a < b ? -1 : 1))),
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
  });
}

/** What key an API-key route needs, as its description says it (docs/http.md, "Scopes"). */
function scopeSentence(route: Operation): string | undefined {
  if (route.auth !== 'api_key') return undefined;
  return route.scope === undefined
    ? 'Any key of the project may call it, whatever its scopes.'
    : `Needs a key with the \`${route.scope}\` scope (\`insufficient_scope\` otherwise).`;
}

/** Points zod's `#/$defs/<Id>` references at `#/components/schemas/<Id>`. */
function relocateRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relocateRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' ? item.replace(/^#\/\$defs\//, '#/components/schemas/') : relocateRefs(item),
    ]),
  );
}
