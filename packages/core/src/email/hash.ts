import { createHmac, hash } from 'node:crypto';

/** Turns a normalized address into the suppression hash: 64 lower-case hex characters. */
export type EmailHasher = (normalizedEmail: string) => string;

/**
 * SHA-256 of the normalized address by default, so a client can compute the hash itself; with a
 * `hashKey`, HMAC-SHA256 under that key, so leaked hashes cannot be reversed with a dictionary.
 *
 * @example
 * const hash = createEmailHasher()(normalizeEmail('Jane@Example.com'));
 */
export function createEmailHasher(hashKey?: string | Uint8Array): EmailHasher {
  // The one-shot `hash` (Node 20.12+) is about 1.5× faster than createHash for short inputs.
  if (hashKey === undefined) return (email) => hash('sha256', email, 'hex');
  if (hashKey.length === 0) throw new TypeError('hashKey must not be empty');
  return (email) => createHmac('sha256', hashKey).update(email).digest('hex');
}

const HASH = /^[0-9a-f]{64}$/;

/** Whether a string has the shape of a suppression hash (the hash of some address). */
export function isEmailHash(value: string): boolean {
  return HASH.test(value);
}
