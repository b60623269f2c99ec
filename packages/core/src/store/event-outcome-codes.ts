import { reasonFromRank } from '../suppressions/reason.js';
import type { EventOutcome } from './store.js';

/**
 * Outcomes as one character each, for stores whose engine answers a batch with a string (a Redis Lua
 * script, a PostgreSQL function): `d` duplicate, `a` applied, `s` suppressed, and for an upgrade the
 * rank (`reasonRanks`, one digit) of the reason the suppression had before. Not persisted.
 */
export function eventOutcomeOfCode(code: string): EventOutcome {
  switch (code) {
    case 'a':
      return 'applied';
    case 'd':
      return 'duplicate';
    case 's':
      return 'suppressed';
    default:
      return `upgraded_from_${reasonFromRank(Number(code))}`;
  }
}
