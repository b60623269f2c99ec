import { hash, timingSafeEqual } from 'node:crypto';
import { MailwardenError } from '../errors.js';
import { headerValue, type WebhookRequest } from './request.js';

/**
 * Compares secrets in constant time whatever their lengths: both sides are hashed first, so neither
 * the content nor the length of the expected value leaks through timing.
 */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(hash('sha256', given, 'buffer'), hash('sha256', expected, 'buffer'));
}

export function unauthorized(message: string): MailwardenError {
  return new MailwardenError('webhook_unauthorized', message);
}

export interface BasicAuthCredentials {
  username: string;
  password: string;
}

/**
 * The shared-secret checks of providers that do not sign their payloads (Postmark, SparkPost, and SNS
 * on top of its signature). Any configured method that matches admits the request; a list per method
 * allows rotating secrets.
 */
export interface SharedSecretAuth {
  /** HTTP basic auth, e.g. credentials embedded in the webhook URL. */
  basic?: readonly BasicAuthCredentials[];
  /** `Authorization: Bearer <token>` (SparkPost OAuth2 sends a token your token endpoint issued). */
  bearer?: readonly string[];
  /** A custom header carrying a secret, e.g. Postmark `HttpHeaders`. */
  headers?: readonly { name: string; value: string }[];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The `user:password` of a Basic credentials token, or `undefined` unless it is canonical base64 (RFC
 * 4648: padded, no stray `=`, no stray bits) of UTF-8 (RFC 7617 with `charset="UTF-8"`, which the 401
 * challenge announces). One spelling per password: a Latin-1 encoding of a non-ASCII password, or extra
 * padding, is refused rather than decoded into something that might match.
 */
export function decodeBasicCredentials(token: string): string | undefined {
  if (!BASE64.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64');
  if (bytes.toString('base64') !== token) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function hasSharedSecret(auth: SharedSecretAuth | undefined): boolean {
  return (auth?.basic?.length ?? 0) + (auth?.bearer?.length ?? 0) + (auth?.headers?.length ?? 0) > 0;
}

/** Throws `webhook_unauthorized` unless one configured shared secret matches the request. */
export function checkSharedSecret(request: WebhookRequest, auth: SharedSecretAuth): void {
  if (!hasSharedSecret(auth)) throw unauthorized('No webhook authentication is configured for this provider.');
  const authorization = headerValue(request, 'authorization') ?? '';
  const [scheme = '', credentials = ''] = authorization.split(' ', 2);
  let ok = false;
  if (scheme.toLowerCase() === 'basic' && auth.basic !== undefined) {
    const decoded = decodeBasicCredentials(credentials);
    if (decoded !== undefined) {
      for (const entry of auth.basic) ok = secretsEqual(decoded, `${entry.username}:${entry.password}`) || ok;
    }
  }
  if (scheme.toLowerCase() === 'bearer' && auth.bearer !== undefined) {
    for (const token of auth.bearer) ok = secretsEqual(credentials, token) || ok;
  }
  for (const entry of auth.headers ?? []) {
    ok = secretsEqual(headerValue(request, entry.name) ?? '', entry.value) || ok;
  }
  if (!ok) throw unauthorized('The webhook credentials do not match.');
}
