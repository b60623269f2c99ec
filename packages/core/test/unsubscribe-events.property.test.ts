// Laws of unsubscribe events (docs/decisions.md, "Who suppresses on an unsubscribe"), against a model:
// whatever events arrive, in any order and batches, an unsubscribe is in the list of its kept stream,
// else the default stream, else the project-wide one; a check with a stream answers from the
// project-wide list first, then that stream's; a check without a stream sees the project-wide list only.
import fc from 'fast-check';
import { createMailwarden, isStreamName, tryNormalizeEmail, type DeliveryEvent } from '@mailwarden/core';
import { describe, expect, it } from 'vitest';
import { EVENT_EPOCH, batchesOf, eventProvider, eventRecipient, eventRecipients, permutationOf } from './arbitraries.js';

const PROJECT = 'acme';
/** Streams an event may carry: none, dropped (`null`), two names, and one that is no name (dropped with a warning). */
const carriedStreams = [undefined, null, 'marketing', 'news', 'Not A Stream'] as const;
const checkedStreams = ['marketing', 'news', 'digest'] as const;

/** Unsubscribes, hard bounces and complaints of a few recipients, each with a distinct key. */
const events = fc
  .array(
    fc.record({
      provider: eventProvider,
      type: fc.constantFrom<'unsubscribed' | 'bounced' | 'complained'>('unsubscribed', 'unsubscribed', 'bounced', 'complained'),
      recipient: eventRecipient,
      stream: fc.constantFrom(...carriedStreams),
      at: fc.integer({ min: 0, max: 5 }),
    }),
    { maxLength: 25 },
  )
  .map((drawn) =>
    drawn.map(
      ({ provider, type, recipient, stream, at }, index): DeliveryEvent => ({
        provider,
        type,
        ...(type === 'bounced' ? { bounceClass: 'hard' as const } : {}),
        messageId: `m-${index}`,
        recipient,
        trackingId: null,
        ...(stream === undefined ? {} : { stream }),
        occurredAt: new Date(EVENT_EPOCH + at),
        eventKey: `e-${index}`,
      }),
    ),
  );

/** Which lists hold each normalized address: `''` for the project-wide one, else the stream. */
function model(applied: readonly DeliveryEvent[], defaultStream: string | undefined): Map<string, Set<string>> {
  const lists = new Map<string, Set<string>>();
  for (const event of applied) {
    const normalized = tryNormalizeEmail(event.recipient);
    if (!normalized.ok) continue;
    const kept = isStreamName(event.stream) ? event.stream : undefined;
    const list = event.type === 'unsubscribed' ? (kept ?? defaultStream ?? '') : '';
    lists.set(normalized.email, (lists.get(normalized.email) ?? new Set()).add(list));
  }
  return lists;
}

describe('unsubscribe events (property)', () => {
  it('land in their stream, else the default, else project-wide; checks answer project-wide first', async () => {
    await fc.assert(
      fc.asyncProperty(
        events.chain((all) =>
          fc.tuple(
            fc.constant(all),
            permutationOf(all).chain((order) => batchesOf(order)),
          ),
        ),
        fc.constantFrom(undefined, 'digest', 'marketing'),
        async ([all, batches], defaultStream) => {
          const mailwarden = createMailwarden(defaultStream === undefined ? {} : { defaultStream: { [PROJECT]: defaultStream } });
          for (const batch of batches) await mailwarden.applyEvents(PROJECT, batch);
          const lists = model(all, defaultStream);
          const addresses = [
            ...new Set(eventRecipients.map((recipient) => tryNormalizeEmail(recipient)).flatMap((r) => (r.ok ? [r.email] : []))),
          ];
          for (const email of addresses) {
            const held = lists.get(email) ?? new Set<string>();
            const projectWide = await mailwarden.suppressions.check(PROJECT, email);
            expect(projectWide.suppressed, `${email} without a stream`).toBe(held.has(''));
            expect('stream' in projectWide).toBe(false);
            for (const stream of checkedStreams) {
              const answer = await mailwarden.suppressions.check(PROJECT, email, { stream });
              const expected = held.has('') ? null : held.has(stream) ? stream : undefined;
              if (expected === undefined) expect(answer, `${email} in ${stream}`).toStrictEqual({ email, suppressed: false });
              else expect(answer, `${email} in ${stream}`).toMatchObject({ suppressed: true, stream: expected });
              // A stream's entry is always the recipient's unsubscribe.
              if (expected === stream) expect(answer).toMatchObject({ reason: 'manual', source: 'unsubscribe' });
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
