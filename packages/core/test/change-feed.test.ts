// The change feed in process (docs/core.md, "Change feed"): each change as the API shows it, with the
// suppression, message and allowlist entry exactly as their own listings show them; kinds and families;
// the queries refused; following the feed until an AbortSignal ends it.
import { createMailwarden, createMemoryStore, parseChangeKinds, type ChangeView, type DeliveryEvent } from '@mailwarden/core';
import { changeListSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.UTC(2026, 10, 1, 9);
const iso = (ms: number) => new Date(ms).toISOString();

function feedMailwarden(options: Parameters<typeof createMailwarden>[0] = {}) {
  const clock = { now: T0, read: () => clock.now };
  const store = createMemoryStore({ changes: {} });
  const mailwarden = createMailwarden({ store, now: clock.read, ...options });
  return { mailwarden, clock, store };
}

function event(overrides: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'eventKey' | 'type'>): DeliveryEvent {
  return {
    provider: 'postmark',
    messageId: 'm-1',
    recipient: 'Jane@Example.com',
    trackingId: 'newsletter',
    occurredAt: new Date(T0 - 60_000),
    ...overrides,
  };
}

/** Every change of the project, checked against the wire schema on the way. */
async function allChanges(mailwarden: ReturnType<typeof feedMailwarden>['mailwarden'], project = 'acme'): Promise<ChangeView[]> {
  const page = await mailwarden.changes.list(project, { limit: 1000 });
  expect(changeListSchema.parse(page)).toEqual(page);
  return page.items;
}

describe('changes.list', () => {
  test('without a feed in the store: change_feed_not_configured', async () => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(() => mailwarden.changes.list('acme'), 'change_feed_not_configured');
    expect(() => mailwarden.changes.follow('acme')).toThrow(/feed/);
  });

  test('a suppression change carries the suppression exactly as suppressions.list shows it', async () => {
    const { mailwarden } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'Jane@Example.com', { stream: 'marketing', ttl: 3600, source: 'unsubscribe' });
    const listed = await mailwarden.suppressions.list('acme', { stream: 'marketing' });
    const page = await mailwarden.changes.list('acme');
    expect(page).toEqual({
      items: [{ id: 'acme:1', seq: 1, project: 'acme', kind: 'suppression.added', at: iso(T0), suppression: listed.items[0] }],
      next_after: 1,
      latest: 1,
    });
  });

  test('an event: its suppression upgraded (with the one before), then its message created, as messages.list shows it', async () => {
    const { mailwarden, clock } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'jane@example.com');
    const before = (await mailwarden.suppressions.list('acme')).items[0];
    clock.now += 1000;
    await mailwarden.applyEvents('acme', [event({ eventKey: 'b1', type: 'bounced', bounceClass: 'hard' })]);
    const suppression = (await mailwarden.suppressions.list('acme')).items[0];
    const message = (await mailwarden.messages.list('acme')).items[0]!;
    const detail = await mailwarden.messages.get('acme', message.id);
    const changes = await allChanges(mailwarden);
    expect(changes.slice(1)).toEqual([
      // The provider's event is their actor (docs/decisions.md, "The audit trail"), shown after `at`.
      {
        id: 'acme:2',
        seq: 2,
        project: 'acme',
        kind: 'suppression.upgraded',
        at: iso(T0 + 1000),
        actor: 'webhook:postmark:bounced',
        suppression,
        previous: before,
      },
      {
        id: 'acme:3',
        seq: 3,
        project: 'acme',
        kind: 'message.status_changed',
        at: iso(T0 + 1000),
        actor: 'webhook:postmark:bounced',
        message,
        from: null,
        to: 'bounced',
        event: { id: detail!.timeline[0]!.id, type: 'bounced', occurred_at: iso(T0 - 60_000) },
      },
    ]);
    // Nothing beyond what the API answers: no timeline details in a change.
    expect(JSON.stringify(changes)).not.toContain('eventKey');
  });

  test('removals are recorded at the clock of the call (the services pass `now` to the store)', async () => {
    const { mailwarden, clock } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'a@example.com');
    await mailwarden.suppressions.add('acme', 'b@example.com', { stream: 'news' });
    await mailwarden.allowlist.add('acme', '@example.org');
    clock.now = T0 + 5000;
    await mailwarden.suppressions.remove('acme', mailwarden.suppressions.hashOf('a@example.com'));
    clock.now = T0 + 6000;
    await mailwarden.suppressions.removeMany('acme', [{ email: 'b@example.com' }], { stream: 'news' });
    clock.now = T0 + 7000;
    await mailwarden.allowlist.remove('acme', '@example.org');
    const changes = await allChanges(mailwarden);
    expect(changes.map((change) => [change.kind, change.at])).toEqual([
      ['suppression.added', iso(T0)],
      ['suppression.added', iso(T0)],
      ['allowlist.added', iso(T0)],
      ['suppression.removed', iso(T0 + 5000)],
      ['suppression.removed', iso(T0 + 6000)],
      ['allowlist.removed', iso(T0 + 7000)],
    ]);
    expect(changes[5]).toEqual({
      id: 'acme:6',
      seq: 6,
      project: 'acme',
      kind: 'allowlist.removed',
      at: iso(T0 + 7000),
      entry: { entry: '@example.org', kind: 'domain', created_at: iso(T0) },
    });
  });

  test('stream changes say what paused the stream', async () => {
    const { mailwarden, clock } = feedMailwarden();
    await mailwarden.streams.pause('acme', 'marketing');
    clock.now += 1;
    await mailwarden.streams.resume('acme', 'marketing');
    expect(await allChanges(mailwarden)).toEqual([
      { id: 'acme:1', seq: 1, project: 'acme', kind: 'stream.paused', at: iso(T0), stream: 'marketing', cause: 'operator' },
      { id: 'acme:2', seq: 2, project: 'acme', kind: 'stream.resumed', at: iso(T0 + 1), stream: 'marketing', cause: 'operator' },
    ]);
  });

  test('an alert crossing shows its numbers as fractions, and the streams it paused follow it', async () => {
    const { mailwarden } = feedMailwarden({ alerts: { window: 10, minMessages: 2, bounceRate: 50, pauseStreams: ['marketing'] } });
    await mailwarden.applyEvents('acme', [
      event({ eventKey: 'd1', type: 'delivered', messageId: 'm-1' }),
      event({ eventKey: 'b2', type: 'bounced', bounceClass: 'hard', messageId: 'm-2', recipient: 'bo@example.com' }),
    ]);
    const changes = await allChanges(mailwarden, 'acme');
    const alert = changes.findIndex((change) => change.kind === 'alert.bounce_rate');
    expect(changes[alert]).toMatchObject({
      kind: 'alert.bounce_rate',
      alert: { tracking_id: null, firing: true, messages: 2, count: 1, rate: 0.5, threshold: 0.5 },
    });
    expect(changes[alert + 1]).toMatchObject({ kind: 'stream.paused', stream: 'marketing', cause: 'alert.bounce_rate' });
  });

  test('kinds and families filter; next_after moves past what the filter skipped', async () => {
    const { mailwarden } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'a@example.com');
    await mailwarden.allowlist.add('acme', 'b@example.com');
    await mailwarden.streams.pause('acme', 'news');
    const streams = await mailwarden.changes.list('acme', { kinds: 'stream' });
    expect(streams.items.map((change) => change.seq)).toEqual([3]);
    expect(streams).toMatchObject({ next_after: 3, latest: 3 });
    const two = await mailwarden.changes.list('acme', { kinds: ['suppression.added', 'allowlist'] });
    expect(two.items.map((change) => change.kind)).toEqual(['suppression.added', 'allowlist.added']);
    const page = await mailwarden.changes.list('acme', { after: '1', limit: '1' });
    expect(page.items.map((change) => change.seq)).toEqual([2]);
    expect(page).toMatchObject({ next_after: 2, latest: 3 });
  });

  test('a bad cursor, limit or kind is invalid_request', async () => {
    const { mailwarden } = feedMailwarden();
    for (const query of [
      { after: -1 },
      { after: 'x' },
      { after: 1.5 },
      { limit: 0 },
      { limit: 1001 },
      { kinds: 'suppression.add' },
      { kinds: ['bogus'] },
    ])
      await expectMailwardenError(() => mailwarden.changes.list('acme', query), 'invalid_request');
    await expectMailwardenError(() => mailwarden.changes.list('not a project'), 'invalid_request');
  });

  test('a cursor retention overtook: change_cursor_expired', async () => {
    const store = createMemoryStore({ changes: { maxLength: 2 } });
    const mailwarden = createMailwarden({ store, now: () => T0 });
    for (const n of [1, 2, 3, 4]) await mailwarden.suppressions.add('acme', `${n}@example.com`);
    await store.purgeExpired?.(T0);
    await expectMailwardenError(() => mailwarden.changes.list('acme', { after: 0 }), 'change_cursor_expired');
    expect((await mailwarden.changes.list('acme', { after: 2 })).items.map((change) => change.seq)).toEqual([3, 4]);
  });
});

describe('parseChangeKinds', () => {
  test.each([
    [undefined, undefined],
    ['', undefined],
    [[], undefined],
    ['message', ['message.status_changed']],
    ['suppression', ['suppression.added', 'suppression.upgraded', 'suppression.updated', 'suppression.removed', 'suppression.expired']],
    // Order and repeats as given do not matter: the feed's order, each kind once.
    [
      ['endpoint.paused', 'alert', ' stream.resumed ,endpoint'],
      ['alert.bounce_rate', 'alert.complaint_rate', 'stream.resumed', 'endpoint.paused', 'endpoint.resumed'],
    ],
  ] as const)('%j', (input, kinds) => {
    expect(parseChangeKinds(input as string | readonly string[] | undefined)).toEqual(kinds);
  });

  test.each(['suppressions', 'suppression.', 'alert.bounce', 'Suppression.added', '*'])('refuses %j, naming it', async (name) => {
    const error = await expectMailwardenError(() => parseChangeKinds(name), 'invalid_request');
    expect(error.message).toContain(JSON.stringify(name));
  });
});

describe('changes.follow', () => {
  test('pages through, then waits for new changes, until the signal aborts', async () => {
    const { mailwarden } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'a@example.com');
    await mailwarden.suppressions.add('acme', 'b@example.com');
    const controller = new AbortController();
    const changes = mailwarden.changes.follow('acme', { pollMs: 5, signal: controller.signal })[Symbol.asyncIterator]();
    expect((await changes.next()).value).toMatchObject({ seq: 1, kind: 'suppression.added' });
    expect((await changes.next()).value).toMatchObject({ seq: 2 });
    const third = changes.next();
    await mailwarden.streams.pause('acme', 'news');
    expect((await third).value).toMatchObject({ seq: 3, kind: 'stream.paused' });
    const end = changes.next();
    controller.abort();
    expect(await end).toEqual({ done: true, value: undefined });
  });

  test('starts after `after`, with only the kinds asked for', async () => {
    const { mailwarden } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'a@example.com');
    await mailwarden.streams.pause('acme', 'news');
    await mailwarden.suppressions.add('acme', 'b@example.com');
    await mailwarden.suppressions.add('acme', 'c@example.com');
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const change of mailwarden.changes.follow('acme', {
      after: 1,
      kinds: ['suppression'],
      pollMs: 5,
      signal: controller.signal,
    })) {
      seen.push(change.seq);
      if (seen.length === 2) controller.abort();
    }
    expect(seen).toEqual([3, 4]);
  });

  test('a cursor retention overtook is thrown to the loop', async () => {
    const store = createMemoryStore({ changes: { maxLength: 1 } });
    const mailwarden = createMailwarden({ store, now: () => T0 });
    for (const n of [1, 2, 3]) await mailwarden.suppressions.add('acme', `${n}@example.com`);
    await store.purgeExpired?.(T0);
    const changes = mailwarden.changes.follow('acme', { pollMs: 5 })[Symbol.asyncIterator]();
    await expectMailwardenError(() => changes.next(), 'change_cursor_expired');
  });

  test('bad options throw at the call, not at the first step', () => {
    const { mailwarden } = feedMailwarden();
    expect(() => mailwarden.changes.follow('acme', { pollMs: 0 })).toThrow(/pollMs/);
    expect(() => mailwarden.changes.follow('acme', { after: -1 })).toThrow(/after/);
    expect(() => mailwarden.changes.follow('acme', { kinds: 'nope' })).toThrow(/nope/);
  });
});
