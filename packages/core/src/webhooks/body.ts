import { MailwardenError } from '../errors.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The body as UTF-8 text, or `invalid_payload`. */
export function bodyText(rawBody: Uint8Array): string {
  try {
    return decoder.decode(rawBody);
  } catch {
    throw new MailwardenError('invalid_payload', 'The webhook body is not valid UTF-8.');
  }
}

/** The body parsed as JSON whatever the declared content type (SNS sends JSON as text/plain), or `invalid_payload`. */
export function bodyJson(rawBody: Uint8Array): unknown {
  const text = bodyText(rawBody);
  try {
    return JSON.parse(text);
  } catch {
    throw new MailwardenError('invalid_payload', 'The webhook body is not JSON.');
  }
}

/**
 * The body decoded as `application/x-www-form-urlencoded`: every field in order, repeated names kept
 * (Mailgun's legacy forms post a user variable before the real field of the same name).
 */
export function bodyForm(rawBody: Uint8Array): [name: string, value: string][] {
  return [...new URLSearchParams(bodyText(rawBody)).entries()];
}
