import { reasonRanks, suppressionReasons, type SuppressionReason } from '../vocabulary.js';

/** The stronger of two reasons: a suppression is only ever upgraded, never downgraded. */
export function strongerReason(a: SuppressionReason, b: SuppressionReason): SuppressionReason {
  return reasonRanks[b] > reasonRanks[a] ? b : a;
}

/** Reasons as small integers, for stores that pack them; greater is stronger. Persisted: `vocabulary.ts`. */
export function reasonRank(reason: SuppressionReason): number {
  return reasonRanks[reason];
}

// Indexed by rank (an array, not a Map: the memory store reads a rank on every check).
const reasonsByRank: (SuppressionReason | undefined)[] = [];
for (const reason of suppressionReasons) reasonsByRank[reasonRanks[reason]] = reason;

export function reasonFromRank(rank: number): SuppressionReason {
  const reason = reasonsByRank[rank];
  if (reason === undefined) throw new RangeError(`no suppression reason has rank ${rank}`);
  return reason;
}
