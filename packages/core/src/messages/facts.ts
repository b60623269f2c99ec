import type { DeliveryEvent } from '../events/delivery-event.js';
import { Fact, messageStatuses, type FactName, type MessageStatus } from '../vocabulary.js';

/**
 * What is known about a message, as bits. A message's state is the OR of its events' facts, so merging
 * is a join: any order of the same events, with any duplicates, gives the same state. The bits are
 * persisted by every store: their names and values live in `vocabulary.ts` (append-only).
 */

const factNames = Object.keys(Fact) as FactName[];

export function factNamesOf(facts: number): FactName[] {
  return factNames.filter((name) => (facts & Fact[name]) !== 0);
}

/**
 * The facts one event establishes. An open, a click or an unsubscribe can only come from a delivered
 * message, so they establish `delivered` too. `unknown` events establish nothing.
 */
export function factsOf(event: Pick<DeliveryEvent, 'type' | 'bounceClass'>): number {
  switch (event.type) {
    case 'sent':
      return Fact.sent;
    case 'deferred':
      return Fact.deferred;
    case 'delivered':
      return Fact.delivered;
    case 'bounced':
      return event.bounceClass === 'hard' ? Fact.hard_bounced : Fact.soft_bounced;
    case 'complained':
      return Fact.complained;
    case 'rejected':
      return Fact.rejected;
    case 'opened':
      return Fact.opened | Fact.delivered;
    case 'clicked':
      return Fact.clicked | Fact.delivered;
    case 'unsubscribed':
      return Fact.unsubscribed | Fact.delivered;
    case 'unknown':
      return 0;
  }
}

/** The fact each status stands for, in precedence order: stores that filter by status use this table. */
export const statusFacts: Readonly<Record<MessageStatus, number>> = {
  complained: Fact.complained,
  bounced: Fact.hard_bounced,
  rejected: Fact.rejected,
  delivered: Fact.delivered,
  soft_bounced: Fact.soft_bounced,
  deferred: Fact.deferred,
  sent: Fact.sent,
};

export function messageStatus(facts: number): MessageStatus {
  for (const status of messageStatuses) if ((facts & statusFacts[status]) !== 0) return status;
  return 'sent';
}

/** The per-tracking-ID counters, each counting messages that have the fact. */
export interface Counters {
  delivered: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

/** The facts each counter counts: a message counts 1 when it has any of them. Stores that count in their own language use this table. */
export const counterFacts: Readonly<Record<keyof Counters, number>> = {
  delivered: Fact.delivered,
  bounced: Fact.hard_bounced | Fact.soft_bounced,
  complained: Fact.complained,
  opened: Fact.opened,
  clicked: Fact.clicked,
  unsubscribed: Fact.unsubscribed,
};

/** Which counters a message with these facts contributes 1 to. */
export function countersOf(facts: number): Counters {
  return {
    delivered: facts & counterFacts.delivered ? 1 : 0,
    bounced: facts & counterFacts.bounced ? 1 : 0,
    complained: facts & counterFacts.complained ? 1 : 0,
    opened: facts & counterFacts.opened ? 1 : 0,
    clicked: facts & counterFacts.clicked ? 1 : 0,
    unsubscribed: facts & counterFacts.unsubscribed ? 1 : 0,
  };
}
