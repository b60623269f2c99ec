import { isRecord } from '../json/record.js';
import { MailwardenError } from '../errors.js';
import { assertTrackingId } from '../tracking-id.js';
import { metadataTrackingId } from './metadata-value.js';
import { carriedStream, SERVICE_STREAM_KEY, streamToCarry, type StreamCarrierOptions } from './stream-carrier.js';

/**
 * SparkPost documents "10KB" of metadata per recipient, measured here on the JSON of the transmission's
 * metadata merged with the recipient's, as SparkPost merges them into `rcpt_meta`. Over it the API refuses
 * the transmission, so the helper says so first, in the same terms.
 */
export const SPARKPOST_METADATA_MAX_BYTES = 10 * 1024;

export interface SparkPostCarrierOptions extends StreamCarrierOptions {
  /**
   * `transmission` (default) writes `metadata.service_id` of the transmission; `recipient` writes it into
   * the `metadata` of every inline recipient instead (not possible with a stored recipient list).
   */
  level?: 'transmission' | 'recipient';
}

/**
 * Returns a copy of a SparkPost transmission (`POST /api/v1/transmissions` body, or the options object of
 * the `sparkpost` SDK's `transmissions.send`) carrying the tracking ID as `metadata.service_id`.
 *
 * SparkPost merges transmission and recipient metadata into each event's `rcpt_meta`, the recipient's
 * value winning. So an inline recipient that already has its own `service_id` gets ours instead, or the
 * webhook would report the caller's. A stored recipient list (`recipients: { list_id }`) cannot be
 * rewritten: a `service_id` stored in the list's recipient metadata would win there.
 *
 * With `options.stream`, the stream travels the same way as `service_stream`, beside `service_id`.
 *
 * Throws `invalid_tracking_id` for an invalid ID, `invalid_stream` for an invalid stream, `tracking_id_not_carriable` when the caller's metadata
 * plus ours exceeds 10 KB for some recipient, and `invalid_request` when `metadata` is not an object.
 *
 * @example
 * await client.transmissions.send(attachSparkPostTrackingId({
 *   recipients: [{ address: 'jane@example.com' }],
 *   content: { from: 'news@example.com', subject: 'Hello', text: 'Hi' },
 * }, 'welcome-2026'));
 */
export function attachSparkPostTrackingId<T extends object>(transmission: T, trackingId: string, options: SparkPostCarrierOptions = {}): T {
  const id = assertTrackingId(trackingId);
  const stream = streamToCarry(options);
  const ours = stream === undefined ? { service_id: id } : { service_id: id, [SERVICE_STREAM_KEY]: stream };
  const source = transmission as Record<string, unknown>;
  const level = options.level ?? 'transmission';
  const recipients = source['recipients'];
  if (level === 'recipient' && !Array.isArray(recipients)) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      'Recipient-level metadata needs inline recipients; with a stored recipient list use the transmission level.',
    );
  }

  const transmissionMetadata = metadataOf(source['metadata'], 'metadata');
  const nextTransmissionMetadata = level === 'transmission' ? { ...transmissionMetadata, ...ours } : transmissionMetadata;
  const next: Record<string, unknown> = { ...source };
  if (level === 'transmission') next['metadata'] = nextTransmissionMetadata;
  if (Array.isArray(recipients)) {
    next['recipients'] = recipients.map((recipient: unknown, index) => {
      if (!isRecord(recipient)) return recipient;
      const own = metadataOf(recipient['metadata'], `recipients[${index}].metadata`);
      const rewrite =
        level === 'recipient' || (own !== undefined && ('service_id' in own || (stream !== undefined && SERVICE_STREAM_KEY in own)));
      const nextOwn = rewrite ? { ...own, ...ours } : own;
      checkSize({ ...nextTransmissionMetadata, ...nextOwn });
      return rewrite ? { ...recipient, metadata: nextOwn } : recipient;
    });
  }
  checkSize(nextTransmissionMetadata ?? {});
  return next as T;
}

/**
 * The tracking ID of a SparkPost event (the object inside `msys.<class>`): `rcpt_meta.service_id`, a
 * number as its decimal string; `null` when absent.
 */
export function readSparkPostTrackingId(event: unknown): string | null {
  if (!isRecord(event) || !isRecord(event['rcpt_meta'])) return null;
  return metadataTrackingId(event['rcpt_meta']['service_id']);
}

/**
 * The stream of a SparkPost event: `rcpt_meta.service_stream`; `null` when absent.
 *
 * @example
 * readSparkPostStream({ type: 'delivery', rcpt_meta: { service_stream: 'weekly-digest' } }); // 'weekly-digest'
 */
export function readSparkPostStream(event: unknown): string | null {
  if (!isRecord(event) || !isRecord(event['rcpt_meta'])) return null;
  return carriedStream(event['rcpt_meta'][SERVICE_STREAM_KEY]);
}

function metadataOf(value: unknown, where: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (isRecord(value)) return value;
  throw new MailwardenError('invalid_request', `SparkPost ${where} must be an object.`);
}

function checkSize(metadata: Record<string, unknown>): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > SPARKPOST_METADATA_MAX_BYTES) {
    throw new MailwardenError(
      'tracking_id_not_carriable',
      `SparkPost metadata would be ${bytes} bytes of JSON, over its 10 KB limit per recipient; SparkPost events ` +
        'carry no other field for it, so shrink the other metadata.',
    );
  }
}
