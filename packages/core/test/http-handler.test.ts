// The core handler called directly, for the rules that are easiest to pin here: API-key scopes, body
// and content-type rules, query and path parsing. The HTTP conformance suite (packages/http-test-suite)
// runs the same API over real sockets through both bindings.
import { describe, expect, test } from 'vitest';
import { createHttpHandler, createMailwarden, type ApiKeys, type HttpRequest } from '../src/index.js';

const request = (overrides: Partial<HttpRequest>): HttpRequest => ({
  method: 'GET',
  path: '/projects/acme/suppressions',
  query: '',
  headers: { 'x-api-key': 'acme-key' },
  ...overrides,
});

function handler(apiKeys: ApiKeys = { 'acme-key': 'acme' }) {
  return createHttpHandler(createMailwarden(), { apiKeys, logger: { error: () => {} } });
}

const codeOf = (body: string | Uint8Array) => (JSON.parse(Buffer.from(body).toString()) as { error?: { code: string } }).error?.code;

describe('API keys', () => {
  test.each([
    ['a single project', { k: 'acme' }, { acme: 200, beta: 403 }],
    ['a list of projects', { k: ['acme', 'beta'] }, { acme: 200, beta: 200, gamma: 403 }],
    ["'*' for every project", { k: '*' }, { acme: 200, beta: 200 }],
    ['an async resolver', async (key: string) => (key === 'k' ? ['beta'] : undefined), { acme: 403, beta: 200 }],
  ] as const)('%s', async (_name, apiKeys, expected) => {
    const http = handler(apiKeys as ApiKeys);
    for (const [project, status] of Object.entries(expected)) {
      const response = await http.handle(request({ path: `/projects/${project}/suppressions`, headers: { 'x-api-key': 'k' } }));
      expect(response.status, project).toBe(status);
    }
    const unknown = await http.handle(request({ headers: { 'x-api-key': 'other' } }));
    expect([unknown.status, codeOf(unknown.body)]).toStrictEqual([401, 'invalid_api_key']);
    const missing = await http.handle(request({ headers: {} }));
    expect([missing.status, codeOf(missing.body)]).toStrictEqual([401, 'missing_api_key']);
    const empty = await http.handle(request({ headers: { 'x-api-key': '' } }));
    expect([empty.status, codeOf(empty.body)]).toStrictEqual([401, 'missing_api_key']);
  });

  test('a key that is a prefix, or a case variant, of a configured key is unknown', async () => {
    const http = handler({ 'Secret-Key-1': 'acme' });
    for (const key of ['Secret-Key-', 'secret-key-1', 'Secret-Key-1 ', 'Secret-Key-12']) {
      expect((await http.handle(request({ headers: { 'x-api-key': key } }))).status, key).toBe(401);
    }
    expect((await http.handle(request({ headers: { 'x-api-key': 'Secret-Key-1' } }))).status).toBe(200);
  });

  test('a key named like an Object.prototype member is an ordinary key', async () => {
    const http = handler(Object.fromEntries([['__proto__', 'acme']]));
    expect((await http.handle(request({ headers: { 'x-api-key': '__proto__' } }))).status).toBe(200);
    expect((await http.handle(request({ headers: { 'x-api-key': 'constructor' } }))).status).toBe(401);
  });

  test('an empty key in the map is refused when the handler is built', () => {
    expect(() => handler({ '': 'acme' })).toThrow(/must not be empty/);
  });
});

describe('bodies', () => {
  const add = (headers: Record<string, string>, body?: string) =>
    handler().handle(
      request({
        method: 'POST',
        headers: { 'x-api-key': 'acme-key', ...headers },
        ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
      }),
    );

  test.each([
    ['application/json', 201],
    ['application/json; charset=utf-8', 201],
    ['Application/JSON; Charset="UTF-8"', 201],
    ['application/merge-patch+json', 201],
    ['application/json; charset=latin1', 415],
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['multipart/form-data; boundary=x', 415],
  ])('Content-Type %s → %i', async (contentType, status) => {
    expect((await add({ 'content-type': contentType }, '{"email":"a@example.com"}')).status).toBe(status);
  });

  test('no body and no Content-Type is invalid_request; a body without Content-Type is 415', async () => {
    const none = await add({});
    expect([none.status, codeOf(none.body)]).toStrictEqual([400, 'invalid_request']);
    const untyped = await add({}, '{"email":"a@example.com"}');
    expect([untyped.status, codeOf(untyped.body)]).toStrictEqual([415, 'unsupported_media_type']);
  });

  test('bytes that are not UTF-8, and JSON that is not an object with email, are invalid_request', async () => {
    const http = handler();
    const latin1 = await http.handle(
      request({
        method: 'POST',
        headers: { 'x-api-key': 'acme-key', 'content-type': 'application/json' },
        body: Uint8Array.of(0x7b, 0xe9, 0x7d),
      }),
    );
    expect(codeOf(latin1.body)).toBe('invalid_request');
    for (const body of ['[]', 'null', '"a@example.com"', '{"email":5}', '{}']) {
      expect(codeOf((await add({ 'content-type': 'application/json' }, body)).body), body).toBe('invalid_request');
    }
  });

  test('Content-Length over the cap is refused before the body is read', async () => {
    const http = createHttpHandler(createMailwarden(), { apiKeys: { k: 'acme' }, bodyLimits: { api: 10 } });
    let read = false;
    const body = (async function* () {
      read = true;
      yield new Uint8Array(5);
    })();
    const response = await http.handle(
      request({ method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json', 'content-length': '11' }, body }),
    );
    expect([response.status, codeOf(response.body), read]).toStrictEqual([413, 'payload_too_large', false]);
  });

  test('a streamed body over the cap is refused while reading', async () => {
    const http = createHttpHandler(createMailwarden(), { apiKeys: { k: 'acme' }, bodyLimits: { api: 10 } });
    const body = (async function* () {
      yield new TextEncoder().encode('{"email":');
      yield new TextEncoder().encode('"a@example.com"}');
    })();
    const response = await http.handle(
      request({ method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body }),
    );
    expect(response.status).toBe(413);
  });

  test('a value an earlier body parser made serves API routes; webhooks then answer internal_error and log why', async () => {
    const errors: string[] = [];
    const http = createHttpHandler(createMailwarden(), {
      apiKeys: { k: 'acme' },
      logger: { error: (context) => errors.push(String(context.err)) },
    });
    const added = await http.handle(
      request({
        method: 'POST',
        headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
        parsedBody: { email: 'a@example.com' },
      }),
    );
    expect(added.status).toBe(201);
    const webhook = await http.handle(request({ method: 'POST', path: '/projects/acme/webhooks/postmark', headers: {}, parsedBody: {} }));
    expect([webhook.status, codeOf(webhook.body)]).toStrictEqual([500, 'internal_error']);
    expect(errors.join()).toMatch(/body parser mounted before mailwarden/);
  });
});

describe('paths and queries', () => {
  test('percent-encoded segments are decoded; malformed encoding is invalid_request; one trailing slash is ignored', async () => {
    const http = handler();
    expect((await http.handle(request({ path: '/projects/%61cme/suppressions' }))).status).toBe(200);
    expect((await http.handle(request({ path: '/projects/acme/suppressions/' }))).status).toBe(200);
    expect(codeOf((await http.handle(request({ path: '/projects/acme/suppressions//' }))).body)).toBe('not_found');
    expect(codeOf((await http.handle(request({ path: '/projects/%E0%A4%A/suppressions' }))).body)).toBe('invalid_request');
    expect(codeOf((await http.handle(request({ path: 'projects/acme/suppressions' }))).body)).toBe('not_found');
  });

  test('a literal segment beats a parameter: DELETE …/suppressions/check is 405, not a hash', async () => {
    const response = await handler().handle(request({ method: 'DELETE', path: '/projects/acme/suppressions/check' }));
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, POST, HEAD');
  });

  test('a repeated query parameter is refused; __proto__ is an ordinary (ignored) name', async () => {
    const http = handler();
    const repeated = await http.handle(
      request({ path: '/projects/acme/suppressions/check', query: 'email=a@example.com&email=b@example.com' }),
    );
    expect([repeated.status, codeOf(repeated.body)]).toStrictEqual([400, 'invalid_request']);
    const proto = await http.handle(request({ query: '__proto__=x&constructor=y&limit=2' }));
    expect(proto.status).toBe(200);
  });

  test('HEAD answers like GET without a body; OPTIONS is 405', async () => {
    const http = handler();
    const head = await http.handle(request({ method: 'HEAD' }));
    expect([head.status, head.body, head.headers['content-type']]).toStrictEqual([200, '', 'application/json; charset=utf-8']);
    const options = await http.handle(request({ method: 'OPTIONS' }));
    expect(options.status).toBe(405);
  });
});

describe('check answers, byte for byte', () => {
  // The JSON text clients parse, key order included, so a faster way of building it cannot change it.
  async function checkingHandler() {
    const mailwarden = createMailwarden({ now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 6) });
    await mailwarden.suppressions.add('acme', 'Jane@Example.com');
    await mailwarden.applyEvents('acme', [
      {
        provider: 'sendgrid',
        type: 'bounced',
        bounceClass: 'hard',
        messageId: 'm-1',
        recipient: 'bob@example.com',
        trackingId: null,
        occurredAt: new Date(Date.UTC(2025, 11, 31, 23, 59, 59, 999)),
        eventKey: 'e-1',
        details: { diagnostic: '550 5.1.1 no such user' },
      },
    ]);
    return createHttpHandler(mailwarden, { apiKeys: { 'acme-key': 'acme' }, logger: { error: () => {} } });
  }
  const text = (body: string | Uint8Array) => Buffer.from(body).toString();
  const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-type': 'application/json; charset=utf-8' };

  test('GET …/suppressions/check: a manual suppression, a webhook one with its cause, none', async () => {
    const http = await checkingHandler();
    const check = (email: string) =>
      http.handle(request({ path: '/projects/acme/suppressions/check', query: `email=${encodeURIComponent(email)}` }));
    const manual = await check(' JANE@example.com ');
    expect(manual.status).toBe(200);
    expect(manual.headers).toStrictEqual(headers);
    expect(text(manual.body)).toBe(
      '{"email":" JANE@example.com ","suppressed":true,"reason":"manual","created_at":"2026-01-02T03:04:05.006Z","source":"api","cause":null}',
    );
    const bounced = await check('bob@example.com');
    const { cause } = JSON.parse(text(bounced.body)) as { cause: { message: string; event_id: string } };
    expect(text(bounced.body)).toBe(
      '{"email":"bob@example.com","suppressed":true,"reason":"hard_bounce","created_at":"2025-12-31T23:59:59.999Z","source":"webhook",' +
        `"cause":{"provider":"sendgrid","message_id":"m-1","message":"${cause.message}","event_id":"${cause.event_id}",` +
        '"event_at":"2025-12-31T23:59:59.999Z","diagnostic":"550 5.1.1 no such user"}}',
    );
    expect(text((await check('nobody@example.com')).body)).toBe('{"email":"nobody@example.com","suppressed":false}');
  });

  test('POST …/suppressions/check: one result per address, in order, echoed as sent', async () => {
    const http = await checkingHandler();
    const emails = ['nobody@example.com', 'JANE@EXAMPLE.COM', 'bob@example.com'];
    const response = await http.handle(
      request({
        method: 'POST',
        path: '/projects/acme/suppressions/check',
        headers: { 'x-api-key': 'acme-key', 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ emails })),
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers).toStrictEqual(headers);
    expect(text(response.body)).toBe(
      '{"results":[{"email":"nobody@example.com","suppressed":false},{"email":"JANE@EXAMPLE.COM","suppressed":true,"reason":"manual"},' +
        '{"email":"bob@example.com","suppressed":true,"reason":"hard_bounce"}]}',
    );
  });
});
