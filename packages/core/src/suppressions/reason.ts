export const suppressionReasons = ['manual', 'hard_bounce', 'complaint'] as const;

/** Why an address is suppressed. Strength: `complaint` > `hard_bounce` > `manual`. */
export type SuppressionReason = (typeof suppressionReasons)[number];

const strength: Record<SuppressionReason, number> = { manual: 1, hard_bounce: 2, complaint: 3 };

/** The stronger of two reasons: a suppression is only ever upgraded, never downgraded. */
export function strongerReason(a: SuppressionReason, b: SuppressionReason): SuppressionReason {
  return strength[b] > strength[a] ? b : a;
}

/** Reasons as small integers, for stores that pack them (1 = manual, 2 = hard_bounce, 3 = complaint). */
export function reasonRank(reason: SuppressionReason): number {
  return strength[reason];
}

export function reasonFromRank(rank: number): SuppressionReason {
  const reason = suppressionReasons[rank - 1];
  if (reason === undefined) throw new RangeError(`no suppression reason has rank ${rank}`);
  return reason;
}
