import { describe, expect, it } from 'vitest';
import {
  createHttpHandler,
  createMailwarden,
  createMemoryStore,
  MailwardenError,
  errorCodes,
  errorDocsUrl,
  errorStatus,
  isMailwardenError,
  type ErrorCode,
} from '@mailwarden/core';
import { errorBodySchema } from '@mailwarden/core/schemas';

// docs/http.md#errors and docs/errors.md: the API's conventions, webhook intake (401 on failed
// authentication, 400 on a body that can never be parsed), tracking_id_not_carriable a caller error.
const documentedStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_email: 400,
  invalid_cursor: 400,
  batch_too_large: 400,
  invalid_tracking_id: 400,
  invalid_stream: 400,
  invalid_payload: 400,
  // One-click unsubscribe (docs/unsubscribe.md): a link that is not ours; links not configured here.
  invalid_unsubscribe_token: 400,
  tracking_id_not_carriable: 400,
  // The send side: a request whose messages cannot each carry their recipient's own unsubscribe link.
  unsubscribe_not_carriable: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  webhook_unauthorized: 401,
  forbidden: 403,
  // Scoped keys (docs/http.md, "Scopes"): a key of the project without the route's scope.
  insufficient_scope: 403,
  not_found: 404,
  suppression_not_found: 404,
  // The allowlist (docs/core.md, "Allowlist"): removing an entry that is not there.
  allowlist_entry_not_found: 404,
  unsubscribe_links_not_configured: 404,
  // Issue 26's features, when off for the project or the store: the feature is not there, as for unsubscribe links.
  change_feed_not_configured: 404,
  alerts_not_configured: 404,
  endpoint_not_found: 404,
  method_not_allowed: 405,
  // Beyond the API's own: what Node's HTTP server refuses before a framework sees the request (answerClientError).
  request_timeout: 408,
  // A feed cursor older than what retention keeps: gone for good, unlike a malformed cursor (400).
  change_cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // Rate limits (docs/http.md, "Rate limits"): over a bucket's limit for its window.
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  store_unavailable: 503,
  // Beyond the API's own: an SNS certificate or subscription URL that cannot be fetched; SNS retries a 503.
  verification_unavailable: 503,
};

describe('errorStatus', () => {
  it('maps every code to the status docs/errors.md gives it, and has no other code', () => {
    expect(errorStatus).toEqual(documentedStatus);
  });

  it('lists every code in errorCodes', () => {
    expect([...errorCodes].sort()).toEqual(Object.keys(documentedStatus).sort());
  });

  it.each(errorCodes)('%s is a snake_case code with an error status', (code) => {
    expect(code).toMatch(/^[a-z]+(?:_[a-z]+)*$/);
    expect(errorStatus[code]).toBeGreaterThanOrEqual(400);
    expect(errorStatus[code]).toBeLessThan(600);
    expect(new MailwardenError(code, 'Something failed.').status).toBe(errorStatus[code]);
  });

  it('gives each code its own documentation anchor', () => {
    const urls = errorCodes.map(errorDocsUrl);
    expect(new Set(urls).size).toBe(errorCodes.length);
    for (const code of errorCodes) expect(errorDocsUrl(code)).toMatch(new RegExp(`^https://.+#${code}$`));
  });
});

describe('MailwardenError', () => {
  it('is an Error with a stable code, a message and a name', () => {
    const error = new MailwardenError('suppression_not_found', 'No suppression has this hash in this project.');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('MailwardenError');
    expect(error.code).toBe('suppression_not_found');
    expect(error.message).toBe('No suppression has this hash in this project.');
    expect(error.status).toBe(404);
    expect(error.details).toBeUndefined();
  });

  it('carries its cause', () => {
    const cause = new Error('ECONNREFUSED');
    const error = new MailwardenError('store_unavailable', 'The store cannot be reached.', { cause });
    expect(error.cause).toBe(cause);
    expect(error.status).toBe(503);
  });

  it('carries a cause that is not an Error', () => {
    const error = new MailwardenError('internal_error', 'Something broke.', { cause: 'a string' });
    expect(error.cause).toBe('a string');
  });

  it('has no cause when none is given', () => {
    const error = new MailwardenError('internal_error', 'Something broke.');
    expect('cause' in error).toBe(false);
  });

  it('keeps the cause out of the HTTP body', () => {
    const error = new MailwardenError('store_unavailable', 'The store cannot be reached.', {
      cause: new Error('password=hunter2'),
    });
    expect(JSON.stringify(error.toBody())).not.toContain('hunter2');
  });

  it('turns into the error body { error: { code, message, details } }', () => {
    const details = [{ index: 1, email: 'bad', reason: 'missing @' }];
    const error = new MailwardenError('invalid_email', '1 of 2 addresses are invalid; see details.', { details });
    expect(error.toBody()).toStrictEqual({
      error: { code: 'invalid_email', message: '1 of 2 addresses are invalid; see details.', details },
    });
    expect(errorBodySchema.parse(error.toBody())).toEqual(error.toBody());
  });

  it('leaves details out of the body when there are none', () => {
    const body = new MailwardenError('not_found', 'No such route.').toBody();
    expect(body).toStrictEqual({ error: { code: 'not_found', message: 'No such route.' } });
    expect(Object.keys(body.error)).toEqual(['code', 'message']);
    expect(errorBodySchema.safeParse(body).success).toBe(true);
  });

  it('gives a body that survives JSON', () => {
    const body = new MailwardenError('batch_too_large', 'Too many.', { details: { max: 100, received: 101 } }).toBody();
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });
});

describe('isMailwardenError', () => {
  it('recognizes MailwardenError and nothing else', () => {
    expect(isMailwardenError(new MailwardenError('forbidden', 'No.'))).toBe(true);
    const lookalike = Object.assign(new Error('No.'), { code: 'forbidden', name: 'MailwardenError' });
    expect(isMailwardenError(lookalike)).toBe(false);
    expect(isMailwardenError({ code: 'forbidden', message: 'No.' })).toBe(false);
    expect(isMailwardenError(undefined)).toBe(false);
    expect(isMailwardenError('forbidden')).toBe(false);
  });

  it('recognizes an error made by another copy of the package, and the handler answers it as its code says', async () => {
    // A second instance of the module, as CommonJS loaded beside ESM (or two versions) gives an app.
    const path = '../src/errors.js?another-copy';
    const other = (await import(/* @vite-ignore */ path)) as typeof import('../src/errors.js');
    expect(other.MailwardenError).not.toBe(MailwardenError);
    const error = new other.MailwardenError('store_unavailable', 'The store is away.');
    expect(error instanceof MailwardenError).toBe(false);
    expect(isMailwardenError(error)).toBe(true);
    expect(other.isMailwardenError(new MailwardenError('forbidden', 'No.'))).toBe(true);

    const store = { ...createMemoryStore(), getSuppression: async () => Promise.reject(error) };
    const handler = createHttpHandler(createMailwarden({ store }), { apiKeys: { k: 'acme' }, logger: { error: () => {} } });
    const answer = await handler.handle({
      method: 'GET',
      path: '/projects/acme/suppressions/check',
      query: 'email=a%40example.com',
      headers: { 'x-api-key': 'k' },
    });
    expect([answer.status, answer.headers['retry-after'], JSON.parse(String(answer.body))]).toStrictEqual([
      503,
      '5',
      { error: { code: 'store_unavailable', message: 'The store is away.' } },
    ]);
  });
});
