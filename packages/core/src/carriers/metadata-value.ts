/**
 * A tracking ID read from a provider's metadata value: a non-empty string as is, a number as its
 * decimal string (JSON-header and metadata carriers may return numbers: docs/decisions.md#carriers-the-tracking-id-comes-back-unchanged), anything else none.
 */
export function metadataTrackingId(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
