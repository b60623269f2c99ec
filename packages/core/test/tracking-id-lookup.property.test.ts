import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMailwarden, type DeliveryEvent, type Mailwarden, type TrackingIdSummary } from '@mailwarden/core';
import { EVENT_EPOCH, eventType, pageLimit, relatedTrackingIds } from './arbitraries.js';
import { listAll } from './walk-pages.js';

// An exact lookup (`trackingIds.list({ trackingId })`, `trackingIds.get`) is the listing seen through
// one ID: for any set of tracking IDs, it gives exactly the item a full walk of the listing has for that
// ID, and nothing for an ID the walk does not have. The IDs come with their case variants, prefixes and
// longer relatives, so a lookup that folds case or matches a part shows.

const PROJECT = 'acme';

const withCursor = (limit: number, cursor: string | undefined) => ({ limit, ...(cursor === undefined ? {} : { cursor }) });

/** Every item of the tracking-ID listing, optionally searched, walked `limit` at a time. */
function walk(mailwarden: Mailwarden, limit: number, search?: string): Promise<TrackingIdSummary[]> {
  return listAll((cursor) =>
    mailwarden.trackingIds.list(PROJECT, { ...withCursor(limit, cursor), ...(search === undefined ? {} : { search }) }),
  );
}

/** Events that each make a message of their own: which ID (an index into the set) and what happened. */
const sends = fc.array(fc.record({ id: fc.nat(), type: eventType }), { minLength: 1, maxLength: 30 });

/** A search derived from the set: a run of code points of one of its IDs (`undefined`: no search). */
const searchSeed = fc.option(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { nil: undefined });

function searchOf(ids: readonly string[], seed: [number, number, number] | undefined): string | undefined {
  if (seed === undefined) return undefined;
  const codePoints = [...ids[seed[0] % ids.length]!];
  const start = seed[1] % codePoints.length;
  return codePoints.slice(start, start + 1 + (seed[2] % (codePoints.length - start))).join('');
}

describe('looking up one tracking ID', () => {
  it('list({ trackingId }) and get give exactly the item a full walk of list() has for that ID', async () => {
    await fc.assert(
      fc.asyncProperty(relatedTrackingIds, sends, pageLimit, searchSeed, async (ids, events, limit, seed) => {
        const mailwarden = createMailwarden();
        // Some IDs of the set get no message (no event picks them, or only `unknown` ones): they must be absent.
        await mailwarden.applyEvents(
          PROJECT,
          events.map(
            ({ id, type }, index): DeliveryEvent => ({
              provider: 'ses',
              type,
              ...(type === 'bounced' ? { bounceClass: 'hard' as const } : {}),
              messageId: `m-${index}`,
              recipient: 'ann@example.com',
              trackingId: ids[id % ids.length]!,
              occurredAt: new Date(EVENT_EPOCH + index),
              eventKey: `e-${index}`,
            }),
          ),
        );
        const search = searchOf(ids, seed);
        const all = await walk(mailwarden, limit);
        const searched = search === undefined ? all : await walk(mailwarden, limit, search);
        const pageOf = (items: TrackingIdSummary[], trackingId: string) => {
          const found = items.filter((item) => item.trackingId === trackingId);
          return { items: found, next_cursor: null, count: found.length };
        };

        for (const trackingId of ids) {
          expect(await mailwarden.trackingIds.list(PROJECT, { trackingId })).toStrictEqual(pageOf(all, trackingId));
          expect(await mailwarden.trackingIds.get(PROJECT, trackingId)).toStrictEqual(pageOf(all, trackingId).items[0]);
          if (search !== undefined) {
            expect(await mailwarden.trackingIds.list(PROJECT, { trackingId, search })).toStrictEqual(pageOf(searched, trackingId));
          }
        }
        // The walk lists only IDs of the set, so every listed item was looked up above.
        expect(all.every((item) => ids.includes(item.trackingId))).toBe(true);
      }),
    );
  });
});
