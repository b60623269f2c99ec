import type { MailwardenContext } from './context.js';
import { tryNormalizeEmail } from '../email/normalize.js';
import { assertProjectId } from '../input.js';
import type { SuppressionReason } from '../vocabulary.js';
import { assertStreamName } from '../stream.js';

/** Store round trips stay bounded however many recipients a send has. */
const CHUNK = 1000;

export interface FilterSuppressedOptions {
  /**
   * What to do when the store cannot be asked. `open` (the default, as the spec's clients do): mail
   * everyone valid not already found suppressed, and report the error. `closed`: mail no one and report
   * the error.
   */
  onError?: 'open' | 'closed';
  /**
   * The stream the mail is sent in: a recipient is blocked when the project-wide list or this stream's
   * holds it (`invalid_stream` for a name that cannot be one), and every recipient while the stream is
   * paused (`stream_paused`; docs/core.md, "Paused streams"). Absent: the project-wide list only.
   */
  stream?: string;
}

export interface BlockedRecipient {
  /** The recipient exactly as given. */
  email: string;
  reason: SuppressionReason | 'invalid_email' | 'check_failed' | 'stream_paused';
}

export interface FilterSuppressedResult {
  /** Recipients that may be mailed, as given, in input order. */
  allowed: string[];
  /** Recipients that may not, with why, in input order. */
  blocked: BlockedRecipient[];
  /** The store error, when the check could not be made (then `allowed`/`blocked` follow `onError`). */
  error?: unknown;
}

/**
 * The send gate: splits recipients into those that may be mailed and those that may not. Invalid
 * addresses are always blocked; on a store failure the outcome follows `onError`. With a `stream`, the
 * project-wide list and that stream's block (one store round trip per chunk either way), and a paused
 * stream blocks every valid recipient (`stream_paused`; one more round trip, in parallel).
 *
 * @example
 * const { allowed, blocked } = await mailwarden.filterSuppressed('acme', ['a@example.com', 'b@example.com']);
 * await sendNewsletter(allowed);
 * const digest = await mailwarden.filterSuppressed('acme', subscribers, { stream: 'weekly-digest' });
 */
export async function filterSuppressed(
  context: MailwardenContext,
  projectId: string,
  recipients: readonly string[],
  options: FilterSuppressedOptions = {},
): Promise<FilterSuppressedResult> {
  assertProjectId(projectId);
  const onError = options.onError ?? 'open';
  const stream = options.stream === undefined ? undefined : assertStreamName(options.stream);
  const blockedAt = new Map<number, BlockedRecipient['reason']>();
  const valid: { index: number; hash: string }[] = [];
  recipients.forEach((email, index) => {
    const result = tryNormalizeEmail(email);
    if (result.ok) valid.push({ index, hash: context.hashEmail(result.email) });
    else blockedAt.set(index, 'invalid_email');
  });

  // In parallel with the suppressions, so a send in a stream waits no longer; settled, so neither read's failure goes unheard.
  const pausedRead = stream === undefined || valid.length === 0 ? undefined : isPaused(context, projectId, stream);
  let error: unknown;
  const now = Math.trunc(context.now());
  try {
    for (let start = 0; start < valid.length; start += CHUNK) {
      const chunk = valid.slice(start, start + CHUNK);
      const hashes = chunk.map((entry) => entry.hash);
      // With the clock: an expired suppression blocks no one (docs/core.md, "Expiry").
      const records = await context.store.getSuppressions(projectId, hashes, stream, now);
      chunk.forEach((entry, i) => {
        const record = records[i];
        if (record !== undefined) blockedAt.set(entry.index, record.reason);
      });
    }
  } catch (caught) {
    error = caught;
  }
  const paused = pausedRead === undefined ? undefined : await pausedRead;
  if (paused === true) for (const entry of valid) blockedAt.set(entry.index, 'stream_paused');
  else if (paused !== undefined && paused !== false && error === undefined) error = paused.error;
  // Fail-open only treats unchecked recipients as not suppressed: suppressions already read stay blocked.
  if (error !== undefined && onError === 'closed') {
    for (const entry of valid) if (!blockedAt.has(entry.index)) blockedAt.set(entry.index, 'check_failed');
  }

  const allowed: string[] = [];
  const blocked: BlockedRecipient[] = [];
  recipients.forEach((email, index) => {
    const reason = blockedAt.get(index);
    if (reason === undefined) allowed.push(email);
    else blocked.push({ email, reason });
  });
  return error === undefined ? { allowed, blocked } : { allowed, blocked, error };
}

/** Whether the project's `stream` is paused, or the read's error. */
function isPaused(context: MailwardenContext, projectId: string, stream: string): Promise<boolean | { error: unknown }> {
  return context.store.listPausedStreams(projectId).then(
    (paused) => paused.some((entry) => entry.stream === stream),
    (error: unknown) => ({ error }),
  );
}
