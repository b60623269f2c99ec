import { expect } from 'vitest';
import { MailwardenError, type ErrorCode } from '@mailwarden/core';

/** Runs `action` (sync or async) and returns the MailwardenError it throws, after checking its code. */
export async function expectMailwardenError(action: () => unknown, code: ErrorCode): Promise<MailwardenError> {
  let thrown: unknown;
  try {
    await action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a MailwardenError ${code}`).toBeInstanceOf(MailwardenError);
  const error = thrown as MailwardenError;
  expect(error.code).toBe(code);
  return error;
}
