import { providers } from '@mailwarden/core';
import fc from 'fast-check';
import type { HttpCall } from './http.js';
import { API_KEYS, type Projects } from './test-app.js';

/** One request of any shape: the path is relative to the mount point and already URL-safe. */
export interface ArbitraryRequest {
  method: string;
  path: string;
  query: string;
  call: HttpCall;
}

/**
 * Methods every binding routes to mailwarden. Methods beyond these (PROPFIND, PURGE…), paths with
 * malformed percent-encoding and malformed Content-Types are left out on purpose: Fastify answers them
 * itself, before the plugin, with its own body shape. They are pinned as explicit examples in the
 * suite, so the property keeps looking for new counterexamples instead of finding these again.
 */
const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Printable ASCII, what an HTTP header value can carry through fetch. */
const headerText = fc.stringMatching(/^[\x21-\x7e]{0,40}$/);

const anyText = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 10 }), headerText);

function segment(projects: Projects): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'projects',
        projects.acme,
        projects.globex,
        'suppressions',
        'check',
        'bulk',
        'bulk-check',
        'bulk-delete',
        'messages',
        'tracking-ids',
        'allowlist',
        '%40example.com',
        'webhooks',
        'changes',
        'alerts',
        'streams',
        'paused',
        'pause',
        'resume',
        'marketing',
        'outbound-webhooks',
        'crm',
        ...providers,
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('openapi.json', '', '.', '%2F', '%41', '%C3%A9', '%00', 'a'.repeat(300), '0'.repeat(64), 'A'.repeat(64)),
    },
    { weight: 2, arbitrary: anyText.map(encodeURIComponent) },
  );
}

function queryValue(projects: Projects): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '1',
      '50',
      '100',
      '101',
      '-1',
      'abc',
      'ana@example.com',
      'ANA@Example.com',
      'delivered',
      'bounced',
      projects.acme,
      'x'.repeat(129),
    ),
    // Partial searches: the start of an address, a domain, pattern characters, NUL, one over the longest.
    fc.constantFrom('ANA', 'ana@', '@example.com', 'Bücher.example', '%', '_', 'a\u0000', 'x'.repeat(255)),
    // Streams: names, and what no name is (case, a leading `-`, 65 characters).
    fc.constantFrom('marketing', 'weekly-digest', 'Marketing', '-x', 'a'.repeat(65)),
    fc.constantFrom('true', 'false', 'TRUE'),
    // Change kinds and families, lists of them, and what none is.
    fc.constantFrom('suppression', 'suppression.added', 'alert,stream', 'message.status_changed,', 'suppression.', ',', 'Alert'),
    fc.integer().map(String),
    anyText,
  );
}

function query(projects: Projects): fc.Arbitrary<string> {
  const name = fc.oneof(
    fc.constantFrom(
      'limit',
      'cursor',
      'email',
      'trackingId',
      'status',
      'search',
      'recipientPrefix',
      'recipientDomain',
      'emailPrefix',
      'stream',
      'expiring',
      'after',
      'kind',
      'tracking_id',
    ),
    anyText,
  );
  const pair = fc.tuple(name, queryValue(projects)).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return fc.oneof(
    { weight: 4, arbitrary: fc.array(pair, { maxLength: 4 }).map((pairs) => pairs.join('&')) },
    // Raw query text, malformed escapes included: URLSearchParams decodes leniently, every binding passes it on.
    { weight: 1, arbitrary: fc.constantFrom('&&', '==', 'limit', '%', '%zz=1', 'limit=%E0%A4%A', 'email=a%40b.c;email=d', '?', '#') },
  );
}

/** An RFC 9110 token, as media types are made of. */
const token = fc.stringMatching(/^[a-z0-9!#$&^_.+-]{1,12}$/);

/**
 * Syntactically valid media types only: Fastify refuses an empty or malformed Content-Type itself,
 * before the plugin (pinned as an explicit example in the suite).
 */
const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/vnd.api+json',
    'text/plain',
    'text/plain; charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
  ),
  fc.tuple(token, token).map(([type, subtype]) => `${type}/${subtype}`),
);

function body(): fc.Arbitrary<string | Uint8Array> {
  const email = fc.oneof(fc.emailAddress(), anyText, fc.constant('ana@example.com'));
  const stream = fc.option(fc.oneof(fc.constantFrom('marketing', '', 'Marketing'), anyText, fc.integer()), { nil: undefined });
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null'),
    fc
      .record({ email, stream, source: fc.option(fc.constantFrom('api', 'unsubscribe', 'webhook'), { nil: undefined }) })
      .map((value) => JSON.stringify(value)),
    // Expiry (any time, any number) and allowlist entries (an address, a domain, anything).
    fc
      .record({
        email,
        expires_at: fc.option(
          fc.oneof(
            fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
            anyText,
          ),
          { nil: undefined },
        ),
        ttl: fc.option(fc.double(), { nil: undefined }),
      })
      .map((value) => JSON.stringify(value)),
    fc.record({ entry: fc.oneof(email, fc.constantFrom('@example.com', '@', '@@x'), fc.integer()) }).map((value) => JSON.stringify(value)),
    fc
      .record({ emails: fc.array(fc.oneof(email, fc.integer(), fc.constant(null)), { maxLength: 105 }), stream })
      .map((value) => JSON.stringify(value)),
    fc.record({ items: fc.array(fc.record({ email }), { maxLength: 3 }), stream }).map((value) => JSON.stringify(value)),
    anyText,
    fc.uint8Array({ maxLength: 64 }),
    fc.constantFrom('', '{', '[]', '{"emails":[]}', 'mandrill_events=%5B%5D', '\ufeff{}'),
  );
}

/** Any method, path, query, headers and body, biased towards mailwarden's own vocabulary. */
export function arbitraryRequest(projects: Projects): fc.Arbitrary<ArbitraryRequest> {
  return fc
    .record({
      method: fc.constantFrom(...methods),
      segments: fc.array(segment(projects), { maxLength: 6 }),
      trailingSlash: fc.boolean(),
      query: query(projects),
      key: fc.option(fc.oneof(fc.constantFrom(...Object.values(API_KEYS)), headerText), { nil: undefined }),
      contentType: fc.option(contentType, { nil: undefined }),
      extraHeader: fc.option(
        fc.tuple(
          fc.constantFrom(
            'authorization',
            'x-mandrill-signature',
            'svix-signature',
            'signature',
            'x-amz-sns-message-type',
            'x-twilio-email-event-webhook-timestamp',
            'accept',
          ),
          headerText,
        ),
        { nil: undefined },
      ),
      body: fc.option(body(), { nil: undefined }),
    })
    .map(({ method, segments, trailingSlash, query: q, key, contentType: type, extraHeader, body: payload }) => {
      const headers: Record<string, string> = {};
      if (key !== undefined) headers['x-api-key'] = key;
      if (type !== undefined) headers['content-type'] = type;
      if (extraHeader !== undefined) headers[extraHeader[0]] = extraHeader[1];
      const call: HttpCall = { method, headers };
      // fetch sends no body with GET or HEAD.
      if (payload !== undefined && method !== 'GET' && method !== 'HEAD') call.body = payload;
      // A `..` segment would climb out of the mount point, to the host app's own 404.
      const inside = segments.filter((part) => part !== '..');
      return { method, path: `/${inside.join('/')}${trailingSlash ? '/' : ''}`, query: q, call };
    });
}
