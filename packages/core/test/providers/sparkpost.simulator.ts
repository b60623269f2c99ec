import { randomBytes, randomInt } from 'node:crypto';
import type { WebhookRequest } from '../../src/webhooks/request.js';
import { sparkPostRequest } from '../../src/testing/sparkpost.js';

/** What SparkPost's transmissions API answers with an error instead of sending. */
export class SparkPostRefusal extends Error {}

/** "10KB" of metadata: transmission, recipient, and the two merged into `rcpt_meta`. */
const METADATA_MAX_BYTES = 10 * 1024;

export interface SparkPostDelivery {
  /** The webhook request SparkPost would POST for the transmission's delivery events. */
  request: WebhookRequest;
  transmissionId: string;
}

/**
 * Plays SparkPost: accepts a transmission the way `POST /api/v1/transmissions` validates it, and produces
 * the webhook batch reporting one `delivery` per inline recipient, with `rcpt_meta` = transmission
 * metadata merged with the recipient's (the recipient's keys winning), authenticated with basic auth.
 */
export function deliverSparkPostTransmission(
  transmission: unknown,
  credentials: { username: string; password: string },
): SparkPostDelivery {
  if (!isPlainObject(transmission)) throw new SparkPostRefusal('the transmission is not a JSON object');
  const recipients = transmission['recipients'];
  if (!Array.isArray(recipients) || recipients.length === 0) throw new SparkPostRefusal('recipients must be a non-empty array');
  const transmissionMetadata = metadataOf(transmission['metadata'], 'metadata');
  const transmissionId = String(randomInt(1, 2 ** 47));
  const batch = recipients.map((recipient: unknown, index) => {
    if (!isPlainObject(recipient)) throw new SparkPostRefusal(`recipients[${index}] is not an object`);
    const address = recipient['address'];
    const email = typeof address === 'string' ? address : isPlainObject(address) ? address['email'] : undefined;
    if (typeof email !== 'string' || !email.includes('@')) throw new SparkPostRefusal(`recipients[${index}].address is invalid`);
    const rcptMeta = { ...transmissionMetadata, ...metadataOf(recipient['metadata'], `recipients[${index}].metadata`) };
    checkSize(rcptMeta, `recipients[${index}] merged metadata`);
    return {
      msys: {
        message_event: {
          type: 'delivery',
          event_id: String(randomInt(1, 2 ** 47)),
          transmission_id: transmissionId,
          message_id: randomBytes(10).toString('hex'),
          rcpt_to: email.toLowerCase(),
          raw_rcpt_to: email,
          rcpt_meta: rcptMeta,
          timestamp: String(1_760_000_000 + index),
          customer_id: '1',
        },
      },
      cust: { id: '1' },
    };
  });
  return { transmissionId, request: sparkPostRequest(JSON.stringify(batch), [], { basic: credentials }) };
}

function metadataOf(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new SparkPostRefusal(`${where} must be a JSON object`);
  checkSize(value, where);
  // SparkPost stores JSON: what comes back is the JSON round trip of what was sent.
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

function checkSize(metadata: Record<string, unknown>, where: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > METADATA_MAX_BYTES) throw new SparkPostRefusal(`${where} is ${bytes} bytes, over 10KB`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
