import type { ErrorBody, ErrorCode } from '@mailwarden/core';
import { errorBodySchema } from '@mailwarden/core/schemas';
import { expect } from 'vitest';
import { jsonOf, type Answer } from './http.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** ISO 8601 UTC with milliseconds and a trailing Z, as every timestamp of the API. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Headers every mailwarden answer carries, success or error. */
function expectCommonHeaders(answer: Answer): void {
  expect(answer.headers.get('cache-control'), 'cache-control').toBe('no-store');
  expect(answer.headers.get('x-content-type-options'), 'x-content-type-options').toBe('nosniff');
}

/**
 * Checks an error answer of docs/errors.md: exactly this status and code, the JSON content type, and a body
 * `{ error: { code, message, details? } }` with a non-empty message and nothing else. Returns the error.
 */
export function expectError(answer: Answer, status: number, code: ErrorCode): ErrorBody['error'] {
  const body = jsonOf(answer) as ErrorBody;
  expect({ status: answer.status, code: body?.error?.code }, answer.text).toEqual({ status, code });
  expect(answer.headers.get('content-type')).toBe(JSON_CONTENT_TYPE);
  expectCommonHeaders(answer);
  expect(Object.keys(body)).toEqual(['error']);
  expect(errorBodySchema.safeParse(body).success, answer.text).toBe(true);
  for (const key of Object.keys(body.error)) expect(['code', 'message', 'details']).toContain(key);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}

/** What `expectSuccess` needs of a zod schema. */
export interface Schema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } };
}

/** Checks a success answer (status, JSON content type, common headers, and `schema` when given); returns its body. */
export function expectSuccess<T = unknown>(answer: Answer, status: number, schema?: Schema<T>): T {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toBe(JSON_CONTENT_TYPE);
  expectCommonHeaders(answer);
  const body = jsonOf(answer);
  if (schema !== undefined) {
    const parsed = schema.safeParse(body);
    expect(parsed.success, `${answer.text}\n${parsed.success ? '' : parsed.error.message}`).toBe(true);
  }
  return body as T;
}

/** Checks an answer without a body (HEAD): status, the headers of the full answer, and zero bytes. */
export function expectEmpty(answer: Answer, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.text).toBe('');
  expectCommonHeaders(answer);
}
