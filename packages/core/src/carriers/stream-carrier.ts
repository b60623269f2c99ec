import { assertStreamName } from '../stream.js';

/** The key the stream travels under in every carrier, beside `service_id` (metadata, custom args, SES tag). */
export const SERVICE_STREAM_KEY = 'service_stream';
/** The header that carries the stream where a header carries the tracking ID, beside `X-Service-Id`. */
export const SERVICE_STREAM_HEADER = 'X-Service-Stream';

/** What every attach helper takes beside the tracking ID. */
export interface StreamCarrierOptions {
  /** The stream the message is sent in (`weekly-digest`); absent or `null` for none. */
  stream?: string | null | undefined;
}

/**
 * The stream an attach helper writes: the validated name, or `undefined` for none (the caller's own
 * `service_stream`, if any, is then left as it is). Throws `invalid_stream` for an invalid name.
 */
export function streamToCarry(options: StreamCarrierOptions | undefined): string | undefined {
  const stream = options?.stream;
  return stream == null ? undefined : assertStreamName(stream);
}

/**
 * The stream read back from a carrier: any non-empty string exactly as it came, else `null`. It is not
 * judged here: `applyEvents` records an event whose stream is no stream name without it, with a warning.
 */
export function carriedStream(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
