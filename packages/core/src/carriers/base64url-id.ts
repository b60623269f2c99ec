/**
 * The value of a carrier's encoding marker (`service_id_enc`) when `service_id` holds base64url, without
 * padding (RFC 4648 §5), of the tracking ID's UTF-8 instead of the ID itself.
 */
export const BASE64URL_ID_ENCODING = 'b64u';

/** Base64url without padding of a tracking ID's UTF-8: only `[A-Za-z0-9_-]`, which every carrier keeps as is. */
export function encodeBase64urlId(trackingId: string): string {
  return Buffer.from(trackingId, 'utf8').toString('base64url');
}

/** The tracking ID a base64url value encodes; `null` when it is not base64url of well-formed UTF-8, or is empty. */
export function decodeBase64urlId(value: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(value) || value.length % 4 === 1) return null;
  try {
    // ignoreBOM keeps a leading U+FEFF: it is part of the ID, not a byte-order mark.
    const id = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(value, 'base64url'));
    return id === '' ? null : id;
  } catch {
    return null;
  }
}
