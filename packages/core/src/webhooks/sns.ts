import { X509Certificate, verify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { MailwardenError } from '../errors.js';
import { unauthorized } from './auth.js';
import { isRecord } from '../json/record.js';

export const snsMessageTypes = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const;
export type SnsMessageType = (typeof snsMessageTypes)[number];

/** The JSON document SNS posts to an HTTP/S subscription (reference §1.2). */
export interface SnsMessage {
  Type: SnsMessageType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
  SignatureVersion?: string;
  Signature?: string;
  SigningCertURL?: string;
}

/** SNS endpoints: `sns.<region>.amazonaws.com`, or `.amazonaws.com.cn` in China. */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

/** Reads an SNS message from a parsed request body, or throws `invalid_payload`. */
export function parseSnsMessage(body: unknown): SnsMessage {
  if (!isRecord(body)) throw new MailwardenError('invalid_payload', 'The webhook body is not an SNS message.');
  const type = body.Type;
  if (typeof type !== 'string' || !(snsMessageTypes as readonly string[]).includes(type)) {
    throw new MailwardenError('invalid_payload', 'The webhook body is not an SNS message: Type is missing or unknown.');
  }
  const message: Record<string, unknown> = {};
  for (const name of ['MessageId', 'TopicArn', 'Message', 'Timestamp'] as const) {
    if (typeof body[name] !== 'string') throw new MailwardenError('invalid_payload', `The SNS message has no ${name}.`);
    message[name] = body[name];
  }
  // Optional fields are kept only as strings (SNS omits absent ones; null is the same as absent).
  for (const name of ['Subject', 'SubscribeURL', 'Token', 'SignatureVersion', 'Signature', 'SigningCertURL'] as const) {
    if (typeof body[name] === 'string') message[name] = body[name];
  }
  return { ...message, Type: type } as SnsMessage;
}

/**
 * The text SNS signs: `name\nvalue\n` for each field in this fixed order, skipping absent ones; every
 * value ends with a newline, the last one included (reference §1.6).
 */
export function snsStringToSign(message: SnsMessage): string {
  const names =
    message.Type === 'Notification'
      ? (['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const)
      : (['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const);
  let text = '';
  for (const name of names) {
    const value = message[name];
    if (value !== undefined) text += `${name}\n${value}\n`;
  }
  return text;
}

/**
 * The URL when it is `https://sns.<region>.amazonaws.com[.cn]/…` with no credentials and no port
 * (fetching anything else would let a forged message make us fetch an arbitrary URL); else null.
 */
export function snsUrl(value: unknown): URL | null {
  if (typeof value !== 'string') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const ok = url.protocol === 'https:' && SNS_HOST.test(url.hostname) && url.port === '' && url.username === '' && url.password === '';
  return ok ? url : null;
}

/** The signing certificate URL when it is an SNS host serving a `.pem` file, with no query; else null. */
export function snsCertificateUrl(value: unknown): URL | null {
  const url = snsUrl(value);
  return url?.pathname.endsWith('.pem') && url.search === '' && url.hash === '' ? url : null;
}

export interface SnsVerifierOptions {
  /** Certificates kept at most; default 32 (SNS uses one per region, rotated rarely). */
  maxCertificates?: number;
  /** How long a certificate is trusted without fetching it again; default 24 hours. */
  certificateTtlMs?: number;
}

export interface SnsVerifier {
  /** Throws `webhook_unauthorized` unless SNS signed this message with the certificate it names. */
  verify(message: SnsMessage): Promise<void>;
}

/**
 * Verifies SNS signatures (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA) against the certificate
 * at `SigningCertURL`, which must be an SNS host. Certificates are cached per verifier (bounded, with
 * a TTL), and concurrent requests for one certificate share a single fetch. A fetch that fails is
 * `verification_unavailable` (a 503, so SNS retries); a certificate that does not parse is unauthorized.
 *
 * @example
 * const sns = createSnsVerifier((url) => fetch(url).then((response) => response.text()));
 * await sns.verify(parseSnsMessage(JSON.parse(body)));
 */
export function createSnsVerifier(fetchCertificate: (url: string) => Promise<string>, options: SnsVerifierOptions = {}): SnsVerifier {
  const certificates = new LRUCache<string, KeyObject>({
    max: options.maxCertificates ?? 32,
    ttl: options.certificateTtlMs ?? 24 * 60 * 60 * 1000,
    fetchMethod: async (url) => {
      let pem: string;
      try {
        pem = await fetchCertificate(url);
      } catch (error) {
        // A 503 makes SNS retry later; nothing is lost while the certificate host is unreachable.
        throw new MailwardenError('verification_unavailable', 'Could not fetch the SNS signing certificate; retry later.', {
          cause: error,
        });
      }
      try {
        return new X509Certificate(pem).publicKey;
      } catch {
        throw unauthorized('The SNS signing certificate is not a valid X.509 certificate.');
      }
    },
  });

  return {
    async verify(message) {
      const algorithm = message.SignatureVersion === '1' ? 'sha1' : message.SignatureVersion === '2' ? 'sha256' : undefined;
      if (algorithm === undefined) throw unauthorized('The SNS message has no supported SignatureVersion (1 or 2).');
      if (message.Signature === undefined || message.Signature === '') throw unauthorized('The SNS message is not signed.');
      if (message.Type !== 'Notification' && (message.SubscribeURL === undefined || message.Token === undefined)) {
        throw unauthorized('The SNS message lacks fields its signature covers.');
      }
      const url = snsCertificateUrl(message.SigningCertURL);
      if (url === null) throw unauthorized('The SNS SigningCertURL is not an https .pem URL on an SNS host.');
      const key = await certificates.fetch(url.href);
      if (key === undefined) throw unauthorized('The SNS signing certificate could not be loaded.');
      let valid = false;
      try {
        valid = verify(algorithm, Buffer.from(snsStringToSign(message), 'utf8'), key, Buffer.from(message.Signature, 'base64'));
      } catch {
        // A key of another type (not RSA) cannot verify this signature.
      }
      if (!valid) throw unauthorized('The SNS signature does not match.');
    },
  };
}
