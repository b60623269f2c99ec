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

/** Runs a synchronous `action` that may succeed; if it throws, it must be a MailwardenError with `code`. */
export function expectSuccessOrMailwardenError(action: () => unknown, code: ErrorCode): void {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(MailwardenError);
    expect((error as MailwardenError).code).toBe(code);
  }
}
