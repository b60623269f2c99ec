import { hash } from 'node:crypto';

/**
 * The event key of an event whose provider gives it no stable id: the SHA-256 (hex) of the JSON array of
 * the fields a retry repeats and that tell two events apart. Keys are stored to deduplicate retries, so
 * this text is stored data: JSON.stringify's spelling (an `undefined` field is `null`) and the field order
 * each receiver passes must never change.
 *
 * @example
 * hashedEventKey([event, messageId, recipient, timestamp, url]);
 */
export function hashedEventKey(fields: readonly unknown[]): string {
  return hash('sha256', JSON.stringify(fields), 'hex');
}
