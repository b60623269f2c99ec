import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What an unsubscribe token names: the project, the stream (`null`: everything) and the normalized address. */
export interface UnsubscribeTokenContents {
  projectId: string;
  stream: string | null;
  email: string;
}

/** A secret is at least this many characters: a guessable secret would let anyone forge unsubscribes. */
export const MIN_UNSUBSCRIBE_SECRET_LENGTH = 32;

/** The first byte of every token: the format below. A new format takes a new byte, so old links stay readable. */
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Binds the derived key to this one use: the same secret configured elsewhere yields another key. */
const KEY_INFO = 'mailwarden unsubscribe token v1';

export interface UnsubscribeTokenCodec {
  /** A fresh token (a random nonce each time) naming `contents`, sealed with the first secret. */
  seal(contents: UnsubscribeTokenContents): string;
  /** What a token names, or `undefined` when no configured secret opens it (tampered, unknown secret, malformed). */
  open(token: string): UnsubscribeTokenContents | undefined;
}

/**
 * Stateless unsubscribe tokens (docs/unsubscribe.md#the-token): base64url of a version byte, a random
 * 96-bit nonce, and the AES-256-GCM ciphertext and tag of `[projectId, stream, email]` as JSON, the version
 * byte authenticated with it. Each secret gives its key through HKDF-SHA256; the first secret seals, every
 * one is tried to open, so a new secret can be put first while links sealed with the old one still work.
 *
 * @example
 * const codec = createUnsubscribeTokenCodec([process.env.UNSUBSCRIBE_SECRET!]);
 * const token = codec.seal({ projectId: 'acme', stream: 'marketing', email: 'ana@example.com' });
 * codec.open(token); // { projectId: 'acme', stream: 'marketing', email: 'ana@example.com' }
 */
export function createUnsubscribeTokenCodec(secrets: readonly string[]): UnsubscribeTokenCodec {
  if (secrets.length === 0) throw new TypeError('unsubscribe links need at least one secret');
  const keys = secrets.map((secret) => {
    if (typeof secret !== 'string' || secret.length < MIN_UNSUBSCRIBE_SECRET_LENGTH) {
      throw new TypeError(`each unsubscribe secret must be at least ${MIN_UNSUBSCRIBE_SECRET_LENGTH} characters`);
    }
    return Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), KEY_INFO, 32));
  });
  const header = Buffer.of(VERSION);

  return {
    seal({ projectId, stream, email }) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys[0]!, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(header);
      const sealed = Buffer.concat([cipher.update(JSON.stringify([projectId, stream, email]), 'utf8'), cipher.final()]);
      return Buffer.concat([header, nonce, sealed, cipher.getAuthTag()]).toString('base64url');
    },

    open(token) {
      if (typeof token !== 'string' || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      // base64url has one spelling per byte string here: another one (trailing bits set) is not ours.
      if (bytes.toString('base64url') !== token) return undefined;
      if (bytes.length <= 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) return undefined;
      const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
      const sealed = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
      const tag = bytes.subarray(bytes.length - TAG_BYTES);
      for (const key of keys) {
        const plain = decrypt(key, nonce, sealed, tag);
        if (plain !== undefined) return contentsOf(plain);
      }
      return undefined;
    },
  };

  function decrypt(key: Buffer, nonce: Buffer, sealed: Buffer, tag: Buffer): string | undefined {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(header);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The contents of an authentic plaintext; `undefined` if it is not what `seal` writes (a future format). */
function contentsOf(plain: string): UnsubscribeTokenContents | undefined {
  let value: unknown;
  try {
    value = JSON.parse(plain);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [projectId, stream, email] = value as unknown[];
  if (typeof projectId !== 'string' || (stream !== null && typeof stream !== 'string') || typeof email !== 'string') return undefined;
  return { projectId, stream, email };
}
