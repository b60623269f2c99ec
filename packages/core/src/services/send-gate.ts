import type { MailwardenContext } from './context.js';
import { tryNormalizeEmail } from '../email/normalize.js';
import { assertProjectId } from '../input.js';
import type { SuppressionReason } from '../vocabulary.js';

/** Store round trips stay bounded however many recipients a send has. */
const CHUNK = 1000;

export interface FilterSuppressedOptions {
  /**
   * What to do when the store cannot be asked. `open` (the default, as the spec's clients do): mail
   * everyone valid not already found suppressed, and report the error. `closed`: mail no one and report
   * the error.
   */
  onError?: 'open' | 'closed';
}

export interface BlockedRecipient {
  /** The recipient exactly as given. */
  email: string;
  reason: SuppressionReason | 'invalid_email' | 'check_failed';
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
 * addresses are always blocked; on a store failure the outcome follows `onError`.
 *
 * @example
 * const { allowed, blocked } = await mailwarden.filterSuppressed('acme', ['a@example.com', 'b@example.com']);
 * await sendNewsletter(allowed);
 */
export async function filterSuppressed(
  context: MailwardenContext,
  projectId: string,
  recipients: readonly string[],
  options: FilterSuppressedOptions = {},
): Promise<FilterSuppressedResult> {
  assertProjectId(projectId);
  const onError = options.onError ?? 'open';
  const blockedAt = new Map<number, BlockedRecipient['reason']>();
  const valid: { index: number; hash: string }[] = [];
  recipients.forEach((email, index) => {
    const result = tryNormalizeEmail(email);
    if (result.ok) valid.push({ index, hash: context.hashEmail(result.email) });
    else blockedAt.set(index, 'invalid_email');
  });

  let error: unknown;
  try {
    for (let start = 0; start < valid.length; start += CHUNK) {
      const chunk = valid.slice(start, start + CHUNK);
      const records = await context.store.getSuppressions(
        projectId,
        chunk.map((entry) => entry.hash),
      );
      chunk.forEach((entry, i) => {
        const record = records[i];
        if (record !== undefined) blockedAt.set(entry.index, record.reason);
      });
    }
  } catch (caught) {
    error = caught;
    // Fail-open only treats unchecked recipients as not suppressed: suppressions already read stay blocked.
    if (onError === 'closed') {
      for (const entry of valid) if (!blockedAt.has(entry.index)) blockedAt.set(entry.index, 'check_failed');
    }
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
