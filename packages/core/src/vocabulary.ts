/**
 * The persisted vocabulary, in one leaf module: the names of a message's facts, its statuses and the
 * suppression reasons, and the numbers stores persist for them (the rules over them live in
 * `messages/facts.ts` and `suppressions/reason.ts`). Each number is written to disk or to Redis by some
 * store: a message's `facts` bit set (PostgreSQL `messages.facts`, the Redis message hash's `f`), its status
 * code (PostgreSQL's generated and indexed `messages.status`), a suppression's reason rank (PostgreSQL
 * `suppressions.reason`, the first character of the Redis suppression value, a byte of the memory
 * store's rows). The Redis Lua scripts and the PostgreSQL SQL take their numbers from here.
 *
 * **Persisted, append-only.** A stored row keeps the number it was written with, so a value here can
 * never change, be removed or be reused: renumbering would make every stored row mean something else.
 * A new fact, status or reason gets a new value, after the last one. `test/vocabulary.test.ts` pins
 * every value and fails on anything else. Further rules of the stores:
 *
 * - Reason ranks are also the strength order (`complaint` > `hard_bounce` > `manual`): stores upgrade a
 *   suppression with `greatest()` / `math.max` on the rank, so a new reason appended here is the
 *   strongest. Ranks are 1–9: Redis packs the rank as one digit, the memory store keeps 0 for a free row.
 * - Fact bits fit in 31 bits: PostgreSQL stores `facts` as `integer`, Lua's `bit` library works on 32.
 * - A status code names a status; which status a message has (the precedence in `messageStatuses`)
 *   is also persisted by PostgreSQL's generated column, so changing that precedence needs a migration.
 *
 * Also persisted, as outputs of core's functions rather than numbers: `messageKey`, the email hash
 * (`createEmailHasher`) and `trackingIdSearchKey`. Their algorithms are fixed for the same reason.
 */

/** What is known about a message, as bits of its `facts` (the rules over them: `messages/facts.ts`). Persisted, append-only. */
export const Fact = {
  sent: 1 << 0,
  deferred: 1 << 1,
  delivered: 1 << 2,
  soft_bounced: 1 << 3,
  hard_bounced: 1 << 4,
  complained: 1 << 5,
  rejected: 1 << 6,
  opened: 1 << 7,
  clicked: 1 << 8,
  unsubscribed: 1 << 9,
} as const;
export type FactName = keyof typeof Fact;

export const messageStatuses = ['complained', 'bounced', 'rejected', 'delivered', 'soft_bounced', 'deferred', 'sent'] as const;
/** A message's status, derived from its facts by precedence (first match wins: `messageStatus` in `messages/facts.ts`). */
export type MessageStatus = (typeof messageStatuses)[number];

/** A message status as a number: PostgreSQL's `messages.status` column. Persisted, append-only. */
export const statusCodes = {
  complained: 0,
  bounced: 1,
  rejected: 2,
  delivered: 3,
  soft_bounced: 4,
  deferred: 5,
  sent: 6,
} as const satisfies Readonly<Record<MessageStatus, number>>;

export const suppressionReasons = ['manual', 'hard_bounce', 'complaint'] as const;

/** Why an address is suppressed. Strength: `complaint` > `hard_bounce` > `manual`. */
export type SuppressionReason = (typeof suppressionReasons)[number];

/** A suppression reason as a number, greater is stronger: what every store keeps. Persisted, append-only. */
export const reasonRanks = {
  manual: 1,
  hard_bounce: 2,
  complaint: 3,
} as const satisfies Readonly<Record<SuppressionReason, number>>;
