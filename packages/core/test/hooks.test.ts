// Hooks: called after the change is committed, once per new event or suppression change, never for a
// duplicate, never awaited by the answer; a hook that throws, rejects or hangs is logged and bounded.
import {
  createHttpHandler,
  createMailwarden,
  type DeliveryEvent,
  type EventNotice,
  type MailwardenHooks,
  type SuppressedNotice,
  type UnsuppressedNotice,
} from '@mailwarden/core';
import { postmarkWebhook } from '@mailwarden/core/testing';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { EVENT_EPOCH, batchesOf, deliveryEventMultiset, permutationOf } from './arbitraries.js';

const NOW = Date.UTC(2026, 10, 24, 12);
const AT = new Date(Date.UTC(2026, 10, 24, 9));

function event(overrides: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'type' | 'eventKey'>): DeliveryEvent {
  return { provider: 'postmark', messageId: 'm-1', recipient: 'Bob@Example.com', trackingId: 'spring-sale', occurredAt: AT, ...overrides };
}

/** Every call of every hook, in call order. */
function recorder() {
  const calls: (
    | { hook: 'event'; notice: EventNotice }
    | { hook: 'suppressed'; notice: SuppressedNotice }
    | { hook: 'unsuppressed'; notice: UnsuppressedNotice }
  )[] = [];
  const on: MailwardenHooks = {
    event: (notice) => void calls.push({ hook: 'event', notice }),
    suppressed: (notice) => void calls.push({ hook: 'suppressed', notice }),
    unsuppressed: (notice) => void calls.push({ hook: 'unsuppressed', notice }),
  };
  return { calls, on };
}

function logSink() {
  const logged: { context: Record<string, unknown>; message: string }[] = [];
  return { logged, logger: { error: (context: Record<string, unknown>, message: string) => void logged.push({ context, message }) } };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One turn of the event loop: what hooks wait for before they start. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('hooks', () => {
  test('each new event once, in order; a change of suppression after its event; duplicates call nothing', async () => {
    const { calls, on } = recorder();
    const mailwarden = createMailwarden({ on, now: () => NOW });
    const bounce = event({
      type: 'bounced',
      bounceClass: 'hard',
      eventKey: 'b1',
      details: { smtpStatus: '5.1.1', diagnostic: '550 5.1.1 unknown user' },
    });
    const complaint = event({ type: 'complained', eventKey: 'c1', details: { feedbackType: 'abuse' } });
    const delivered = event({ type: 'delivered', eventKey: 'd1', trackingId: 'x'.repeat(200) });

    const result = await mailwarden.applyEvents('acme', [bounce, bounce, delivered, complaint]);
    expect(result).toMatchObject({ accepted: 3, duplicates: 1 });
    await mailwarden.hooksSettled();

    const [item] = (await mailwarden.messages.list('acme')).items;
    const check = await mailwarden.suppressions.check('acme', 'bob@example.com');
    const cause = check.suppressed ? check.cause : undefined;
    expect(calls.map(({ hook }) => hook)).toStrictEqual(['event', 'suppressed', 'event', 'event', 'suppressed']);
    const [bounced, suppressed, deliveredCall, , upgraded] = calls;
    expect(bounced).toStrictEqual({
      hook: 'event',
      notice: {
        projectId: 'acme',
        event: { ...bounce, recipient: 'bob@example.com' },
        messageKey: item!.id,
        eventId: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    });
    // The tracking ID was too long: the event was recorded without it, and the hook says so.
    expect((deliveredCall!.notice as EventNotice).event.trackingId).toBeNull();
    expect(suppressed!.notice).toStrictEqual({
      projectId: 'acme',
      email: 'bob@example.com',
      hash: mailwarden.suppressions.hashOf('bob@example.com'),
      reason: 'hard_bounce',
      previousReason: null,
      source: 'webhook',
      at: AT,
      cause: {
        provider: 'postmark',
        messageId: 'm-1',
        eventId: (bounced!.notice as EventNotice).eventId,
        diagnostic: '550 5.1.1 unknown user',
      },
      stream: null,
    });
    expect(upgraded!.notice).toMatchObject({ reason: 'complaint', previousReason: 'hard_bounce', cause: { diagnostic: 'abuse' } });
    expect(cause!.event_id).toBe((calls[3]!.notice as EventNotice).eventId);

    // A provider's retry of all of it: nothing new, nothing called.
    await mailwarden.applyEvents('acme', [complaint, bounce, delivered]);
    // A weaker or equal reason changes no reason: the event, and no `suppressed`.
    await mailwarden.applyEvents('acme', [event({ type: 'bounced', bounceClass: 'hard', eventKey: 'b2' })]);
    await mailwarden.hooksSettled();
    expect(calls.slice(5).map(({ hook }) => hook)).toStrictEqual(['event']);
  });

  test('suppressions.add calls `suppressed` when it created one, remove calls `unsuppressed` with what it removed', async () => {
    const { calls, on } = recorder();
    const mailwarden = createMailwarden({ on, now: () => NOW });
    const { suppression } = await mailwarden.suppressions.add('acme', 'Ann@Example.com');
    await mailwarden.suppressions.add('acme', 'ann@example.com'); // already there
    await mailwarden.suppressions.add('acme', 'cat@example.com', { source: 'import' });
    await mailwarden.suppressions.remove('acme', suppression.hash);
    await expect(mailwarden.suppressions.remove('acme', suppression.hash)).rejects.toMatchObject({ code: 'suppression_not_found' });
    await mailwarden.hooksSettled();

    expect(calls).toStrictEqual([
      {
        hook: 'suppressed',
        notice: {
          projectId: 'acme',
          email: 'ann@example.com',
          hash: suppression.hash,
          reason: 'manual',
          previousReason: null,
          source: 'api',
          at: new Date(NOW),
          cause: null,
          stream: null,
        },
      },
      { hook: 'suppressed', notice: expect.objectContaining({ email: 'cat@example.com', source: 'import' }) },
      {
        hook: 'unsuppressed',
        notice: {
          projectId: 'acme',
          email: 'ann@example.com',
          hash: suppression.hash,
          reason: 'manual',
          suppressedAt: new Date(NOW),
          at: new Date(NOW),
          stream: null,
        },
      },
    ]);
  });

  test('bulk adds call `suppressed` per address created or upgraded, bulk removes `unsuppressed` per address removed', async () => {
    const { calls, on } = recorder();
    const mailwarden = createMailwarden({ on, now: () => NOW });
    await mailwarden.suppressions.add('acme', 'ann@example.com');
    const { results } = await mailwarden.suppressions.addMany(
      'acme',
      [
        { email: 'ann@example.com', reason: 'complaint' },
        { email: 'bob@example.com', reason: 'hard_bounce', created_at: '2026-01-01' },
        { email: 'bob@example.com' },
        { email: 'bad' },
      ],
      { source: 'import' },
    );
    expect(results.map((result) => result.status)).toStrictEqual(['upgraded', 'created', 'present', 'invalid']);
    await mailwarden.suppressions.removeMany('acme', [{ email: 'bob@example.com' }, { email: 'cat@example.com' }]);
    await mailwarden.hooksSettled();
    expect(
      calls.map(({ hook, notice }) => [
        hook,
        'email' in notice ? notice.email : null,
        'previousReason' in notice ? notice.previousReason : null,
      ]),
    ).toStrictEqual([
      ['suppressed', 'ann@example.com', null],
      ['suppressed', 'ann@example.com', 'manual'],
      ['suppressed', 'bob@example.com', null],
      ['unsuppressed', 'bob@example.com', null],
    ]);
    expect(calls[2]!.notice).toMatchObject({ reason: 'hard_bounce', source: 'import', at: new Date('2026-01-01T00:00:00Z') });
  });

  test('notices name the list: a stream, or null for the project-wide one; an unsubscribe is told by its source', async () => {
    const { calls, on } = recorder();
    const mailwarden = createMailwarden({ on, now: () => NOW });
    const { suppression } = await mailwarden.suppressions.add('acme', 'ann@example.com', { stream: 'marketing', source: 'unsubscribe' });
    // Another list: a new suppression there, and its own notice.
    await mailwarden.suppressions.add('acme', 'ann@example.com');
    await mailwarden.suppressions.addMany('acme', [{ email: 'bob@example.com' }], { stream: 'weekly-digest' });
    await mailwarden.suppressions.remove('acme', suppression.hash, { stream: 'marketing' });
    await mailwarden.suppressions.removeMany('acme', [{ email: 'bob@example.com' }], { stream: 'weekly-digest' });
    await mailwarden.hooksSettled();
    expect(
      calls.map(({ hook, notice }) => [
        hook,
        notice.projectId,
        'email' in notice ? notice.email : null,
        (notice as { stream: unknown }).stream,
      ]),
    ).toStrictEqual([
      ['suppressed', 'acme', 'ann@example.com', 'marketing'],
      ['suppressed', 'acme', 'ann@example.com', null],
      ['suppressed', 'acme', 'bob@example.com', 'weekly-digest'],
      ['unsuppressed', 'acme', 'ann@example.com', 'marketing'],
      ['unsuppressed', 'acme', 'bob@example.com', 'weekly-digest'],
    ]);
    expect(calls[0]!.notice).toMatchObject({ reason: 'manual', source: 'unsubscribe', cause: null });
    expect(calls[1]!.notice).toMatchObject({ reason: 'manual', source: 'api' });
  });

  test('the answer never waits: hooks start after it, and one that hangs holds nothing back', async () => {
    const hanging = deferred();
    const started: string[] = [];
    const credentials = { username: 'postmark', password: 'secret' };
    const mailwarden = createMailwarden({
      webhooks: { auth: { acme: { postmark: { basic: [credentials] } } } },
      on: {
        event: ({ event }) => {
          started.push(event.type);
          return hanging.promise;
        },
      },
    });
    const handler = createHttpHandler(mailwarden, { apiKeys: {} });
    const post = async (type: 'delivered' | 'opened') => {
      const request = postmarkWebhook({ auth: { basic: credentials }, events: [{ type, recipient: 'bob@example.com', occurredAt: AT }] });
      return handler.handle({
        method: 'POST',
        path: '/projects/acme/webhooks/postmark',
        query: '',
        headers: request.headers,
        body: request.rawBody,
      });
    };

    expect((await post('delivered')).status).toBe(200);
    expect(started, 'answered before the hook began').toStrictEqual([]);
    await nextTurn();
    expect(started).toStrictEqual(['delivered']);
    // The first call still hangs; the next webhook is answered all the same.
    expect((await post('opened')).status).toBe(200);
    let settled = false;
    const settling = mailwarden.hooksSettled().then(() => (settled = true));
    await nextTurn();
    expect(started).toStrictEqual(['delivered', 'opened']);
    expect(settled).toBe(false);
    hanging.resolve();
    await settling;
    expect(settled).toBe(true);
  });

  test('a hook that throws or rejects is logged without the address, and the next hooks still run', async () => {
    const { logged, logger } = logSink();
    const suppressed: string[] = [];
    const mailwarden = createMailwarden({
      logger,
      on: {
        event: ({ event }) => {
          if (event.eventKey === 'throws') throw new Error('hook bug');
          return Promise.reject(new Error('hook rejected'));
        },
        suppressed: ({ email }) => void suppressed.push(email),
      },
    });
    const result = await mailwarden.applyEvents('acme', [
      event({ type: 'bounced', bounceClass: 'hard', eventKey: 'throws' }),
      event({ type: 'delivered', eventKey: 'rejects', recipient: 'ann@example.com' }),
    ]);
    expect(result.accepted).toBe(2);
    await mailwarden.hooksSettled();
    expect(suppressed).toStrictEqual(['bob@example.com']);
    expect(logged.map(({ message, context }) => [message, (context.err as Error).message, context.hook, context.projectId])).toStrictEqual([
      ['mailwarden: the event hook failed', 'hook bug', 'event', 'acme'],
      ['mailwarden: the event hook failed', 'hook rejected', 'event', 'acme'],
    ]);
    expect(JSON.stringify(logged.map(({ context }) => ({ ...context, err: undefined })))).not.toMatch(/@example\.com/);
  });

  test('past maxPendingHookCalls, calls are dropped and logged once, then counted when the pending ones drain', async () => {
    const { logged, logger } = logSink();
    const hanging = deferred();
    let started = 0;
    const mailwarden = createMailwarden({
      logger,
      maxPendingHookCalls: 2,
      on: {
        event: () => {
          started++;
          return hanging.promise;
        },
      },
    });
    await mailwarden.applyEvents(
      'acme',
      [1, 2, 3, 4].map((n) => event({ type: 'delivered', eventKey: `e${n}`, messageId: `m-${n}` })),
    );
    await nextTurn();
    expect(started).toBe(2);
    expect(logged).toStrictEqual([
      {
        context: { hook: 'event', projectId: 'acme', provider: 'postmark', eventId: expect.any(String), messageKey: expect.any(String) },
        message: 'mailwarden: 2 hook calls are pending, so this one and any more until they drain are dropped',
      },
    ]);
    hanging.resolve();
    await mailwarden.hooksSettled();
    expect(logged[1]).toMatchObject({ context: { dropped: 2 }, message: expect.stringContaining('2 hook calls were dropped') });
    // Drained: calls go through again.
    await mailwarden.applyEvents('acme', [event({ type: 'delivered', eventKey: 'e5' })]);
    await mailwarden.hooksSettled();
    expect(started).toBe(3);
    expect(() => createMailwarden({ on: {}, maxPendingHookCalls: 0 })).toThrow(RangeError);
  });

  test('without hooks nothing is pending', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'bounced', bounceClass: 'hard', eventKey: 'b1' })]);
    await expect(mailwarden.hooksSettled()).resolves.toBeUndefined();
  });

  // The law: whatever the order, batching and retries of the same events, `event` is called once per
  // distinct event, and the `suppressed` calls, replayed in order, rebuild every address's reason.
  test('any order, batching and retries: one event call per distinct event; suppressed calls rebuild the suppressions', async () => {
    await fc.assert(
      fc.asyncProperty(
        deliveryEventMultiset.chain((events) => permutationOf(events)).chain((events) => batchesOf(events)),
        async (batches) => {
          const { calls, on } = recorder();
          const mailwarden = createMailwarden({ on, now: () => EVENT_EPOCH });
          let accepted = 0;
          for (const batch of batches) accepted += (await mailwarden.applyEvents('acme', batch)).accepted;
          await mailwarden.hooksSettled();
          const events = calls.flatMap((call) =>
            call.hook === 'event' ? [`${call.notice.event.provider}:${call.notice.event.eventKey}`] : [],
          );
          expect(events).toHaveLength(accepted);
          expect(new Set(events).size, 'each distinct event once').toBe(events.length);

          const reasons = new Map<string, string>();
          for (const call of calls) {
            if (call.hook !== 'suppressed') continue;
            expect(call.notice.previousReason ?? undefined).toBe(reasons.get(call.notice.hash));
            reasons.set(call.notice.hash, call.notice.reason);
          }
          const page = await mailwarden.suppressions.list('acme', { limit: 100 });
          expect(Object.fromEntries(page.items.map((item) => [item.hash, item.reason]))).toStrictEqual(Object.fromEntries(reasons));
        },
      ),
      { numRuns: 200 },
    );
  });
});
