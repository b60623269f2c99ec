import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
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
    // The token is compared as sent with the one token of `user:password`: canonical base64 (RFC 4648:
    // padded, no stray bits) of its UTF-8 (RFC 7617 with `charset="UTF-8"`, which the 401 challenge
    // announces). One spelling per password: a Latin-1 encoding or extra padding matches nothing.
    const given = digestOf(credentials);
    for (const entry of auth.basic) ok = timingSafeEqual(given, basicTokenDigests.of(`${entry.username}:${entry.password}`)) || ok;
  }
  if (scheme.toLowerCase() === 'bearer' && auth.bearer !== undefined) {
    const given = digestOf(credentials);
    for (const token of auth.bearer) ok = timingSafeEqual(given, secretDigests.of(token)) || ok;
  }
  for (const entry of auth.headers ?? []) {
    ok = timingSafeEqual(digestOf(headerValue(request, entry.name) ?? ''), secretDigests.of(entry.value)) || ok;
  }
  if (!ok) throw unauthorized('The webhook credentials do not match.');
}

const digestOf = (secret: string): Buffer => hash('sha256', secret, 'buffer');

/**
 * The digests of the configured secrets, each computed once: a request hashes only what it brings. Keyed
 * by the secret itself, so a secret changed in the configuration is simply a new key; bounded, as
 * configurations are (cleared whole past the bound).
 */
class SecretDigests {
  readonly #digests = new Map<string, Buffer>();
  constructor(private readonly encode: (secret: string) => string | undefined) {}
  of(secret: string): Buffer {
    let digest = this.#digests.get(secret);
    if (digest === undefined) {
      if (this.#digests.size >= 1024) this.#digests.clear();
      const encoded = this.encode(secret);
      // No input hashes to random bytes: a secret that cannot be sent matches nothing.
      digest = encoded === undefined ? randomBytes(32) : digestOf(encoded);
      this.#digests.set(secret, digest);
    }
    return digest;
  }
}
const secretDigests = new SecretDigests((secret) => secret);
/** `user:password` → the digest of its Basic token (RFC 7617 with `charset="UTF-8"`). */
const basicTokenDigests = new SecretDigests((credentials) => {
  const bytes = Buffer.from(credentials, 'utf8');
  // A lone surrogate has no UTF-8 spelling (Buffer would write U+FFFD): no token may match it.
  return bytes.toString('utf8') === credentials ? bytes.toString('base64') : undefined;
});
