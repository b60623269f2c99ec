import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createMailwarden,
  defaultSuppressionPolicy,
  isStreamName,
  messageStatuses,
  tryNormalizeEmail,
  type DeliveryEvent,
  type Mailwarden,
  type SuppressionReason,
} from '@mailwarden/core';
import { messageKey, reasonRank, timelineEntryId } from '@mailwarden/core/store';
import { EVENT_EPOCH, batchesOf, deliveryEventMultiset, eventRecipients, pageLimit, permutationOf, resent } from './arbitraries.js';
import { listAll } from './walk-pages.js';

const PROJECT = 'acme';
/** Manual suppressions are not made here, but a fixed clock keeps anything from reading real time. */
const NOW = EVENT_EPOCH + 1_000_000;
const newMailwarden = () => createMailwarden({ now: () => NOW });

const validRecipients = eventRecipients.filter((recipient) => tryNormalizeEmail(recipient).ok);
const searches = ['SPRING-sale', '😀', 'x', '\u0001'];

const withCursor = (limit: number, cursor: string | undefined) => ({ limit, ...(cursor === undefined ? {} : { cursor }) });

/** Everything a caller can observe about a project, every listing walked through all its pages. */
async function observe(mailwarden: Mailwarden, limit: number) {
  const trackingIds = await listAll((cursor) => mailwarden.trackingIds.list(PROJECT, withCursor(limit, cursor)));
  const byTrackingId: Record<string, unknown> = {};
  for (const { trackingId } of trackingIds) {
    byTrackingId[trackingId] = await listAll((cursor) => mailwarden.messages.list(PROJECT, { trackingId, ...withCursor(limit, cursor) }));
  }
  const byStatus: Record<string, unknown> = {};
  for (const status of messageStatuses) {
    byStatus[status] = await listAll((cursor) => mailwarden.messages.list(PROJECT, { status, ...withCursor(limit, cursor) }));
  }
  const bySearch: Record<string, unknown> = {};
  for (const search of searches) {
    bySearch[search] = await listAll((cursor) => mailwarden.trackingIds.list(PROJECT, { search, ...withCursor(limit, cursor) }));
  }
  return {
    messages: await listAll((cursor) => mailwarden.messages.list(PROJECT, withCursor(limit, cursor))),
    trackingIds,
    byTrackingId,
    byStatus,
    bySearch,
    suppressions: await listAll((cursor) => mailwarden.suppressions.list(PROJECT, withCursor(limit, cursor))),
    checks: (await mailwarden.suppressions.checkMany(PROJECT, validRecipients)).results,
    gate: await mailwarden.filterSuppressed(PROJECT, eventRecipients),
  };
}

async function applyInBatches(mailwarden: Mailwarden, batches: DeliveryEvent[][]) {
  const total = { accepted: 0, duplicates: 0, skipped: 0, warnings: 0 };
  for (const batch of batches) {
    const result = await mailwarden.applyEvents(PROJECT, batch.map(resent));
    total.accepted += result.accepted;
    total.duplicates += result.duplicates;
    total.skipped += result.skipped;
    total.warnings += result.warnings.length;
  }
  return total;
}

/** The events in their order; shuffled and cut into batches; and a random part of them to retry. */
const scenario = deliveryEventMultiset.chain((events) =>
  fc.record({
    events: fc.constant(events),
    shuffled: permutationOf(events).chain((shuffled) => batchesOf(shuffled)),
    replayed: fc.shuffledSubarray(events).chain((replay) => batchesOf(replay)),
    limitA: pageLimit,
    limitB: pageLimit,
  }),
);

describe('applyEvents laws', () => {
  it('is order independent and idempotent: any order, any batching, any retries give the same state', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ events, shuffled, replayed, limitA, limitB }) => {
        const inOrder = newMailwarden();
        const totalA = await applyInBatches(inOrder, [events]);
        const reordered = newMailwarden();
        const totalB = await applyInBatches(reordered, shuffled);

        expect(totalB).toEqual(totalA);
        expect(totalA.accepted + totalA.duplicates + totalA.skipped).toBe(events.length);
        const stateA = await observe(inOrder, limitA);
        expect(await observe(reordered, limitB)).toEqual(stateA);

        // Retries of events already applied change nothing and count as duplicates.
        const retried = await applyInBatches(reordered, replayed);
        expect(retried.accepted).toBe(0);
        expect(await observe(reordered, limitA)).toEqual(stateA);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps tracking-ID counters equal to what their messages say', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryEventMultiset, pageLimit, async (events, limit) => {
        const mailwarden = newMailwarden();
        await mailwarden.applyEvents(PROJECT, events);
        const messages = await listAll((cursor) => mailwarden.messages.list(PROJECT, withCursor(limit, cursor)));
        const rows = await listAll((cursor) => mailwarden.trackingIds.list(PROJECT, withCursor(limit, cursor)));

        const expected = new Map<
          string,
          {
            messages: number;
            delivered: number;
            bounced: number;
            complained: number;
            lastEventAt: string;
            opened: number;
            clicked: number;
            unsubscribed: number;
          }
        >();
        for (const message of messages) {
          if (message.trackingId === null) continue;
          const row = expected.get(message.trackingId) ?? {
            messages: 0,
            delivered: 0,
            bounced: 0,
            complained: 0,
            lastEventAt: '',
            opened: 0,
            clicked: 0,
            unsubscribed: 0,
          };
          row.messages++;
          if (message.facts.includes('delivered')) row.delivered++;
          if (message.facts.includes('hard_bounced') || message.facts.includes('soft_bounced')) row.bounced++;
          if (message.facts.includes('complained')) row.complained++;
          if (message.facts.includes('opened')) row.opened++;
          if (message.facts.includes('clicked')) row.clicked++;
          if (message.facts.includes('unsubscribed')) row.unsubscribed++;
          if (message.lastEventAt > row.lastEventAt) row.lastEventAt = message.lastEventAt;
          expected.set(message.trackingId, row);
        }
        expect(Object.fromEntries(rows.map(({ trackingId, ...row }) => [trackingId, row]))).toEqual(Object.fromEntries(expected));
      }),
      { numRuns: 150 },
    );
  });

  it('suppresses each address with its strongest reason at the time of its first suppressing event, caused by that reason’s earliest event', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryEventMultiset, pageLimit, async (events, limit) => {
        const mailwarden = newMailwarden();
        await mailwarden.applyEvents(PROJECT, events);

        // The model: the default policy over the valid events (the first of each key), strongest reason,
        // earliest time; the cause is the strongest reason's earliest event, then the smaller event ID.
        type Cause = { provider: string; message_id: string | null; message: string | null; event_id: string; event_at: string };
        // An unsubscribe is `manual` from source `unsubscribe`, on this list only when its event has no stream.
        type Row = {
          hash: string;
          email: string;
          reason: SuppressionReason;
          created_at: string;
          source: 'webhook' | 'unsubscribe';
          cause: Cause;
        };
        const model = new Map<string, Row>();
        const keys = new Set<string>();
        for (const event of events) {
          const normalized = tryNormalizeEmail(event.recipient);
          const decision = defaultSuppressionPolicy(event);
          if (!normalized.ok || decision === null) continue;
          const key = `${event.provider}:${event.eventKey}`;
          if (keys.has(key)) continue;
          keys.add(key);
          if (decision === 'unsubscribe' && isStreamName(event.stream)) continue;
          const reason = decision === 'unsubscribe' ? 'manual' : decision;
          const source = decision === 'unsubscribe' ? 'unsubscribe' : 'webhook';
          const hash = mailwarden.suppressions.hashOf(normalized.email);
          const at = event.occurredAt.toISOString();
          // The message it opens is the one the event merged into.
          const message = event.messageId === null ? null : messageKey(event.provider, event.messageId, normalized.email);
          const cause = { provider: event.provider, message_id: event.messageId, message, event_id: timelineEntryId(key), event_at: at };
          const known = model.get(hash);
          const rank = known === undefined ? 1 : reasonRank(reason) - reasonRank(known.reason);
          const wins =
            known === undefined ||
            rank > 0 ||
            (rank === 0 && (at !== known.cause.event_at ? at < known.cause.event_at : cause.event_id < known.cause.event_id));
          model.set(hash, {
            hash,
            email: normalized.email,
            reason: known === undefined || reasonRank(reason) > reasonRank(known.reason) ? reason : known.reason,
            created_at: known === undefined || at < known.created_at ? at : known.created_at,
            source: wins ? source : known.source,
            cause: wins ? cause : known.cause,
          });
        }
        const expected = [...model.values()].sort((a, b) =>
          a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.hash < b.hash ? -1 : 1,
        );
        const listed = await listAll((cursor) => mailwarden.suppressions.list(PROJECT, withCursor(limit, cursor)));
        // The diagnostic's rules per event type are core.md's and messages.test.ts's; here, which event.
        const withoutDiagnostic = listed.map(({ cause, ...item }) => {
          const { diagnostic: _, ...rest } = cause ?? { diagnostic: null };
          return { ...item, cause: rest };
        });
        expect(withoutDiagnostic).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});
