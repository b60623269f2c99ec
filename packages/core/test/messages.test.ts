import { describe, expect, it } from 'vitest';
import {
  createMailwarden,
  defaultSuppressionPolicy,
  type DeliveryEvent,
  type Mailwarden,
  type MessageStatus,
  type SuppressionPolicy,
} from '@mailwarden/core';
import { messageKey } from '@mailwarden/core/store';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

let eventSequence = 0;
/** A delivery event; each call gets its own event key unless one is given. */
function event(overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  eventSequence++;
  return {
    provider: 'ses',
    type: 'delivered',
    messageId: 'msg-1',
    recipient: 'jane@example.com',
    trackingId: 'spring-sale',
    occurredAt: new Date(T0),
    eventKey: `event-${eventSequence}`,
    ...overrides,
  };
}

const statusEvents: Record<MessageStatus, Partial<DeliveryEvent>> = {
  complained: { type: 'complained' },
  bounced: { type: 'bounced', bounceClass: 'hard' },
  rejected: { type: 'rejected' },
  delivered: { type: 'delivered' },
  soft_bounced: { type: 'bounced', bounceClass: 'soft' },
  deferred: { type: 'deferred' },
  sent: { type: 'sent' },
};
const precedence: MessageStatus[] = ['complained', 'bounced', 'rejected', 'delivered', 'soft_bounced', 'deferred', 'sent'];

async function messagesOf(mailwarden: Mailwarden, projectId = 'acme') {
  return (await mailwarden.messages.list(projectId, { limit: 100 })).items;
}

async function trackingIdsOf(mailwarden: Mailwarden, projectId = 'acme') {
  return (await mailwarden.trackingIds.list(projectId, { limit: 100 })).items;
}

describe('message status', () => {
  it.each(precedence)('is %s for that event alone', async (status) => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event(statusEvents[status])]);
    const [message] = await messagesOf(mailwarden);
    expect(message?.status).toBe(status);
  });

  const pairs = precedence.flatMap((stronger, i) => precedence.slice(i + 1).map((weaker) => [stronger, weaker] as const));
  it.each(pairs)('%s wins over %s, in either event order', async (stronger, weaker) => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ ...statusEvents[stronger], messageId: 'first-stronger', occurredAt: new Date(T0) }),
      event({ ...statusEvents[weaker], messageId: 'first-stronger', occurredAt: new Date(T0 + 1000) }),
      event({ ...statusEvents[weaker], messageId: 'first-weaker', occurredAt: new Date(T0) }),
      event({ ...statusEvents[stronger], messageId: 'first-weaker', occurredAt: new Date(T0 + 1000) }),
    ]);
    const messages = await messagesOf(mailwarden);
    expect(messages).toHaveLength(2);
    for (const message of messages) expect(message.status, message.messageId).toBe(stronger);
  });

  it('treats a bounce of undetermined class as soft', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'bounced', bounceClass: 'undetermined' })]);
    expect((await messagesOf(mailwarden))[0]).toMatchObject({ status: 'soft_bounced', facts: ['soft_bounced'] });
  });

  it.each(['opened', 'clicked', 'unsubscribed'] as const)('takes %s as proof of delivery', async (type) => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'sent' }), event({ type })]);
    const [message] = await messagesOf(mailwarden);
    expect(message?.status).toBe('delivered');
    expect(message?.facts).toEqual(expect.arrayContaining(['sent', 'delivered', type]));
    expect(await trackingIdsOf(mailwarden)).toMatchObject([{ trackingId: 'spring-sale', delivered: 1 }]);
  });

  it('records every fact and the first and last event times', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ type: 'delivered', occurredAt: new Date(T0 + 2000) }),
      event({ type: 'sent', occurredAt: new Date(T0) }),
      event({ type: 'opened', occurredAt: new Date(T0 + 9000) }),
    ]);
    expect(await messagesOf(mailwarden)).toStrictEqual([
      {
        id: messageKey('ses', 'msg-1', 'jane@example.com'),
        messageId: 'msg-1',
        recipient: 'jane@example.com',
        status: 'delivered',
        trackingId: 'spring-sale',
        provider: 'ses',
        facts: ['sent', 'delivered', 'opened'],
        firstEventAt: iso(0),
        lastEventAt: iso(9000),
      },
    ]);
  });

  it('keeps one message per (provider, message id, recipient), with the recipient normalized', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ recipient: 'Jane@Example.com' }),
      event({ recipient: ' jane@example.com ' }),
      event({ recipient: 'john@example.com' }),
      event({ provider: 'postmark' }),
      event({ messageId: 'msg-2' }),
    ]);
    const messages = await messagesOf(mailwarden);
    expect(messages).toHaveLength(4);
    expect(messages.filter((m) => m.recipient === 'jane@example.com' && m.provider === 'ses' && m.messageId === 'msg-1')).toHaveLength(1);
  });
});

describe('applyEvents', () => {
  it('reports accepted, duplicate and skipped events', async () => {
    const mailwarden = createMailwarden();
    const delivered = event();
    expect(await mailwarden.applyEvents('acme', [delivered, event({ type: 'opened' })])).toStrictEqual({
      accepted: 2,
      duplicates: 0,
      skipped: 0,
      warnings: [],
    });
    expect(await mailwarden.applyEvents('acme', [delivered, delivered, event({ type: 'clicked' })])).toStrictEqual({
      accepted: 1,
      duplicates: 2,
      skipped: 0,
      warnings: [],
    });
  });

  it('scopes event keys by provider and by project', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [event({ eventKey: 'same' }), event({ eventKey: 'same', provider: 'sendgrid' })]);
    expect(result.accepted).toBe(2);
    expect((await mailwarden.applyEvents('other', [event({ eventKey: 'same' })])).accepted).toBe(1);
  });

  it('accepts an empty batch', async () => {
    const mailwarden = createMailwarden();
    expect(await mailwarden.applyEvents('acme', [])).toStrictEqual({ accepted: 0, duplicates: 0, skipped: 0, warnings: [] });
  });

  it('creates no message for an unknown event, but dedupes it', async () => {
    const mailwarden = createMailwarden();
    const unknown = event({ type: 'unknown' });
    expect((await mailwarden.applyEvents('acme', [unknown])).accepted).toBe(1);
    expect(await messagesOf(mailwarden)).toEqual([]);
    expect(await trackingIdsOf(mailwarden)).toEqual([]);
    expect(await mailwarden.applyEvents('acme', [unknown])).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('leaves an existing message unchanged on an unknown event', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'delivered', occurredAt: new Date(T0) })]);
    const before = await messagesOf(mailwarden);
    await mailwarden.applyEvents('acme', [event({ type: 'unknown', occurredAt: new Date(T0 + 5000) })]);
    expect(await messagesOf(mailwarden)).toEqual(before);
  });

  it('suppresses on an event without a message id, without creating a message', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [
      event({ messageId: null, type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 3000) }),
    ]);
    expect(result).toMatchObject({ accepted: 1, skipped: 0, warnings: [] });
    expect(await messagesOf(mailwarden)).toEqual([]);
    expect(await trackingIdsOf(mailwarden)).toEqual([]);
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual({
      email: 'jane@example.com',
      suppressed: true,
      reason: 'hard_bounce',
      created_at: iso(3000),
      source: 'webhook',
      cause: {
        provider: 'ses',
        message_id: null,
        message: null,
        event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        event_at: iso(3000),
        diagnostic: null,
      },
    });
  });

  it('skips an event of invalid shape with an invalid_event warning and applies the rest', async () => {
    const mailwarden = createMailwarden();
    const events = [
      event({ messageId: 'good-1' }),
      { ...event(), type: 'exploded' },
      { ...event(), occurredAt: '2024-05-01T00:00:00Z' },
      event({ occurredAt: new Date('not a date') }),
      event({ eventKey: '' }),
      { ...event(), provider: 'carrier-pigeon' },
      event({ messageId: '' }),
      event({ messageId: 'good-2', type: 'bounced', bounceClass: 'hard', recipient: 'john@example.com' }),
    ] as DeliveryEvent[];
    const result = await mailwarden.applyEvents('acme', events);
    expect(result.accepted).toBe(2);
    expect(result.skipped).toBe(6);
    expect(result.warnings).toEqual([1, 2, 3, 4, 5, 6].map((index) => ({ index, code: 'invalid_event', message: expect.any(String) })));
    expect((await messagesOf(mailwarden)).map((m) => m.messageId).sort()).toEqual(['good-1', 'good-2']);
    expect((await mailwarden.suppressions.check('acme', 'john@example.com')).suppressed).toBe(true);
  });

  it('skips an event with an invalid recipient with an invalid_recipient warning', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [
      event({ recipient: 'not an address', type: 'complained' }),
      event({ messageId: 'good' }),
    ]);
    expect(result).toStrictEqual({
      accepted: 1,
      duplicates: 0,
      skipped: 1,
      warnings: [{ index: 0, code: 'invalid_recipient', message: expect.any(String) }],
    });
    expect((await mailwarden.suppressions.list('acme')).count).toBe(0);
  });
});

describe('tracking IDs at intake', () => {
  it('stores a tracking ID of 128 code points, astral characters counting once', async () => {
    const mailwarden = createMailwarden();
    const ascii = 'a'.repeat(128);
    const astral = '\u{1F680}'.repeat(128);
    const result = await mailwarden.applyEvents('acme', [
      event({ messageId: 'ascii', trackingId: ascii }),
      event({ messageId: 'astral', trackingId: astral }),
    ]);
    expect(result.warnings).toEqual([]);
    expect((await trackingIdsOf(mailwarden)).map((row) => row.trackingId)).toEqual([ascii, astral]);
  });

  it('processes an event whose tracking ID is over 128, without storing the ID, and warns', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [event({ trackingId: 'x'.repeat(129), type: 'bounced', bounceClass: 'hard' })]);
    expect(result).toStrictEqual({
      accepted: 1,
      duplicates: 0,
      skipped: 0,
      warnings: [{ index: 0, code: 'tracking_id_too_long', message: expect.any(String) }],
    });
    expect(await messagesOf(mailwarden)).toMatchObject([{ messageId: 'msg-1', trackingId: null, status: 'bounced' }]);
    expect(await trackingIdsOf(mailwarden)).toEqual([]);
    expect((await mailwarden.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(true);
  });

  it('processes an event whose tracking ID has a lone surrogate, without the ID, and warns', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [event({ trackingId: 'spring\ud800' })]);
    expect(result).toMatchObject({ accepted: 1, skipped: 0, warnings: [{ index: 0, code: 'invalid_tracking_id' }] });
    expect(await messagesOf(mailwarden)).toMatchObject([{ trackingId: null }]);
  });

  it('takes the tracking ID exactly as sent, and an empty one as absent', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'spaced', trackingId: '  Spring Sale  ' }),
      event({ messageId: 'empty', trackingId: '' }),
      event({ messageId: 'none', trackingId: null }),
    ]);
    const byId = new Map((await messagesOf(mailwarden)).map((m) => [m.messageId, m.trackingId]));
    expect(Object.fromEntries(byId)).toEqual({ spaced: '  Spring Sale  ', empty: null, none: null });
    expect((await trackingIdsOf(mailwarden)).map((row) => row.trackingId)).toEqual(['  Spring Sale  ']);
  });

  it('lets a non-null tracking ID win over a missing one', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ trackingId: null, type: 'sent' }), event({ trackingId: 'spring', type: 'delivered' })]);
    expect(await messagesOf(mailwarden)).toMatchObject([{ trackingId: 'spring' }]);
    await mailwarden.applyEvents('acme', [event({ trackingId: null, type: 'opened' })]);
    expect(await messagesOf(mailwarden)).toMatchObject([{ trackingId: 'spring' }]);
    expect(await trackingIdsOf(mailwarden)).toMatchObject([{ trackingId: 'spring', messages: 1, delivered: 1 }]);
  });

  it.each([
    ['b first', ['b', 'a']],
    ['a first', ['a', 'b']],
  ])('resolves disagreeing tracking IDs to the smaller one, counters following (%s)', async (_, order) => {
    const mailwarden = createMailwarden();
    const [first, second] = order as [string, string];
    await mailwarden.applyEvents('acme', [
      event({ trackingId: first, type: first === 'b' ? 'delivered' : 'bounced', bounceClass: 'hard', occurredAt: new Date(T0) }),
      event({ trackingId: second, type: second === 'b' ? 'delivered' : 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 1000) }),
    ]);
    expect(await messagesOf(mailwarden)).toMatchObject([{ trackingId: 'a', status: 'bounced' }]);
    expect(await trackingIdsOf(mailwarden)).toStrictEqual([
      {
        trackingId: 'a',
        messages: 1,
        delivered: 1,
        bounced: 1,
        complained: 0,
        lastEventAt: iso(1000),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
    ]);
  });
});

describe('tracking ID counters', () => {
  it('count each message once per fact, however many events and retries', async () => {
    const mailwarden = createMailwarden();
    const events = [
      // m1: delivered three ways.
      event({ messageId: 'm1', type: 'sent', occurredAt: new Date(T0) }),
      event({ messageId: 'm1', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'm1', type: 'delivered', occurredAt: new Date(T0 + 1500) }),
      event({ messageId: 'm1', type: 'opened', occurredAt: new Date(T0 + 2000) }),
      // m2: soft then hard bounce: bounced once.
      event({ messageId: 'm2', type: 'bounced', bounceClass: 'soft', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'm2', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 4000) }),
      // m3: delivered, then complained twice.
      event({ messageId: 'm3', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'm3', type: 'complained', occurredAt: new Date(T0 + 7000) }),
      event({ messageId: 'm3', type: 'complained', occurredAt: new Date(T0 + 8000) }),
      // m4: only deferred.
      event({ messageId: 'm4', type: 'deferred', occurredAt: new Date(T0 + 500) }),
      // Another tracking ID.
      event({ messageId: 'm5', trackingId: 'autumn', type: 'delivered', occurredAt: new Date(T0 + 100) }),
    ];
    await mailwarden.applyEvents('acme', events);
    const expected = [
      {
        trackingId: 'autumn',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 0,
        lastEventAt: iso(100),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
      {
        trackingId: 'spring-sale',
        messages: 4,
        delivered: 2,
        bounced: 1,
        complained: 1,
        lastEventAt: iso(8000),
        opened: 1,
        clicked: 0,
        unsubscribed: 0,
      },
    ];
    expect(await trackingIdsOf(mailwarden)).toStrictEqual(expected);

    // A provider retry of the whole batch changes nothing.
    expect(await mailwarden.applyEvents('acme', events)).toMatchObject({ accepted: 0, duplicates: events.length });
    expect(await trackingIdsOf(mailwarden)).toStrictEqual(expected);
  });

  it('give the same counts in any event order', async () => {
    const events = [
      event({ messageId: 'm1', type: 'opened', occurredAt: new Date(T0 + 3000) }),
      event({ messageId: 'm1', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'm2', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 2000) }),
      event({ messageId: 'm2', type: 'sent', occurredAt: new Date(T0) }),
    ];
    const forward = createMailwarden();
    await forward.applyEvents('acme', events);
    const backward = createMailwarden();
    await backward.applyEvents('acme', [...events].reverse());
    expect(await trackingIdsOf(backward)).toStrictEqual(await trackingIdsOf(forward));
    expect(await messagesOf(backward)).toStrictEqual(await messagesOf(forward));
  });
});

// An unsubscribe suppresses too, in its stream and from source `unsubscribe`: unsubscribe-events.test.ts.
describe('automatic suppression by the default policy', () => {
  it.each<[string, Partial<DeliveryEvent>, string | null]>([
    ['a hard bounce', { type: 'bounced', bounceClass: 'hard' }, 'hard_bounce'],
    ['a complaint', { type: 'complained' }, 'complaint'],
    ["a reject for the provider's bounce list", { type: 'rejected', providerSuppression: 'bounce' }, 'hard_bounce'],
    ["a reject for the provider's complaint list", { type: 'rejected', providerSuppression: 'complaint' }, 'complaint'],
    ["a reject for the provider's unsubscribe list", { type: 'rejected', providerSuppression: 'unsubscribe' }, null],
    ['a reject for another reason', { type: 'rejected', providerSuppression: null }, null],
    ['a soft bounce', { type: 'bounced', bounceClass: 'soft' }, null],
    ['an undetermined bounce', { type: 'bounced', bounceClass: 'undetermined' }, null],
    ['a deferral', { type: 'deferred' }, null],
    ['a delivery', { type: 'delivered' }, null],
    ['an SES not-spam complaint, recorded as unknown', { type: 'unknown', provider: 'ses' }, null],
  ])('%s → %s', async (_, overrides, reason) => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ ...overrides, occurredAt: new Date(T0 + 1234) })]);
    const check = await mailwarden.suppressions.check('acme', 'jane@example.com');
    expect(check).toStrictEqual(
      reason === null
        ? { email: 'jane@example.com', suppressed: false }
        : {
            email: 'jane@example.com',
            suppressed: true,
            reason,
            created_at: iso(1234),
            source: 'webhook',
            cause: {
              provider: 'ses',
              message_id: 'msg-1',
              message: expect.stringMatching(/^[0-9a-f]{32}$/),
              event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
              event_at: iso(1234),
              diagnostic: null,
            },
          },
    );
    expect(defaultSuppressionPolicy(event(overrides))).toBe(reason);
  });

  it('records a provider reject as a rejected message', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'rejected', providerSuppression: 'unsubscribe' })]);
    expect(await messagesOf(mailwarden)).toMatchObject([{ status: 'rejected' }]);
  });

  it('upgrades hard_bounce to complaint, keeping the first time, and never downgrades', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 1000) })]);
    await mailwarden.applyEvents('acme', [event({ type: 'complained', occurredAt: new Date(T0 + 5000) })]);
    // The time stays the first suppressing event's; the cause is the complaint, the strongest reason.
    const expected = {
      email: 'jane@example.com',
      suppressed: true,
      reason: 'complaint',
      created_at: iso(1000),
      source: 'webhook',
      cause: {
        provider: 'ses',
        message_id: 'msg-1',
        message: expect.stringMatching(/^[0-9a-f]{32}$/),
        event_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        event_at: iso(5000),
        diagnostic: null,
      },
    };
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual(expected);
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'msg-2', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 9000) }),
    ]);
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual(expected);
  });

  it('suppresses the normalized recipient', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ recipient: ' Jane@Bücher.Example ', type: 'complained' })]);
    expect((await mailwarden.suppressions.list('acme')).items).toMatchObject([{ email: 'jane@xn--bcher-kva.example' }]);
  });
});

describe('a custom suppression policy', () => {
  it('replaces the default one', async () => {
    const seen: DeliveryEvent[] = [];
    const policy: SuppressionPolicy = (e) => {
      seen.push(e);
      return e.type === 'bounced' && e.bounceClass === 'soft' ? 'hard_bounce' : null;
    };
    const mailwarden = createMailwarden({ policy });
    await mailwarden.applyEvents('acme', [
      event({ recipient: 'Soft@Example.com', type: 'bounced', bounceClass: 'soft', trackingId: 'x'.repeat(129) }),
      event({ recipient: 'complainer@example.com', type: 'complained' }),
    ]);
    expect(await mailwarden.suppressions.check('acme', 'soft@example.com')).toMatchObject({ suppressed: true, reason: 'hard_bounce' });
    expect((await mailwarden.suppressions.check('acme', 'complainer@example.com')).suppressed).toBe(false);
    // The policy sees the normalized recipient and the tracking ID as stored (dropped when too long).
    expect(seen.map((e) => [e.recipient, e.trackingId])).toEqual([
      ['soft@example.com', null],
      ['complainer@example.com', 'spring-sale'],
    ]);
  });

  it('can extend the default one', async () => {
    const policy: SuppressionPolicy = (e) =>
      e.type === 'bounced' && e.bounceClass === 'undetermined' ? 'hard_bounce' : defaultSuppressionPolicy(e);
    const mailwarden = createMailwarden({ policy });
    await mailwarden.applyEvents('acme', [
      event({ recipient: 'a@example.com', type: 'bounced', bounceClass: 'undetermined' }),
      event({ recipient: 'b@example.com', type: 'complained' }),
      event({ recipient: 'c@example.com', type: 'bounced', bounceClass: 'soft' }),
    ]);
    const { results } = await mailwarden.suppressions.checkMany('acme', ['a@example.com', 'b@example.com', 'c@example.com']);
    expect(results).toStrictEqual([
      { email: 'a@example.com', suppressed: true, reason: 'hard_bounce' },
      { email: 'b@example.com', suppressed: true, reason: 'complaint' },
      { email: 'c@example.com', suppressed: false },
    ]);
  });
});

describe('messages.list', () => {
  async function seeded() {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ messageId: 's1', trackingId: 'spring', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 's2', trackingId: 'spring', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 2000) }),
      event({ messageId: 's3', trackingId: 'spring', type: 'delivered', occurredAt: new Date(T0 + 3000) }),
      event({ messageId: 'u1', trackingId: 'summer', type: 'delivered', occurredAt: new Date(T0 + 4000) }),
      event({ messageId: 'n1', trackingId: null, type: 'delivered', occurredAt: new Date(T0 + 5000) }),
      event({ messageId: 's4', trackingId: 'Spring', type: 'delivered', occurredAt: new Date(T0 + 6000) }),
    ]);
    return mailwarden;
  }
  const ids = (page: { items: { messageId: string }[] }) => page.items.map((m) => m.messageId);

  it('lists every message newest first (by first event), messages without tracking ID included', async () => {
    const mailwarden = await seeded();
    const page = await mailwarden.messages.list('acme');
    expect(ids(page)).toEqual(['s4', 'n1', 'u1', 's3', 's2', 's1']);
    expect(page.count).toBe(6);
    expect(page.next_cursor).toBeNull();
    expect(page.items.find((m) => m.messageId === 'n1')).toHaveProperty('trackingId', null);
  });

  it('filters by tracking ID, exactly (case-sensitive)', async () => {
    const mailwarden = await seeded();
    const page = await mailwarden.messages.list('acme', { trackingId: 'spring' });
    expect(ids(page)).toEqual(['s3', 's2', 's1']);
    for (const message of page.items) expect(message.trackingId).toBe('spring');
    expect(ids(await mailwarden.messages.list('acme', { trackingId: 'Spring' }))).toEqual(['s4']);
    expect(await mailwarden.messages.list('acme', { trackingId: 'winter' })).toStrictEqual({ items: [], next_cursor: null, count: 0 });
  });

  it('filters by status, alone or with a tracking ID', async () => {
    const mailwarden = await seeded();
    expect(ids(await mailwarden.messages.list('acme', { status: 'delivered' }))).toEqual(['s4', 'n1', 'u1', 's3', 's1']);
    expect(ids(await mailwarden.messages.list('acme', { status: 'bounced' }))).toEqual(['s2']);
    expect(ids(await mailwarden.messages.list('acme', { trackingId: 'spring', status: 'delivered' }))).toEqual(['s3', 's1']);
    expect(ids(await mailwarden.messages.list('acme', { trackingId: 'summer', status: 'bounced' }))).toEqual([]);
  });

  it('pages with a cursor, keeping the filters', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.messages.list('acme', { trackingId: 'spring', limit: 2 });
    expect(ids(first)).toEqual(['s3', 's2']);
    expect(first.count).toBe(2);
    const second = await mailwarden.messages.list('acme', { trackingId: 'spring', limit: 2, cursor: first.next_cursor! });
    expect(ids(second)).toEqual(['s1']);
    expect(second.next_cursor).toBeNull();

    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await mailwarden.messages.list('acme', {
        status: 'delivered',
        limit: '2' as unknown as number,
        ...(cursor === undefined ? {} : { cursor }),
      });
      all.push(...ids(page));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(all).toEqual(['s4', 'n1', 'u1', 's3', 's1']);
  });

  it('accepts a tracking ID filter of 128 code points and rejects 129 with invalid_tracking_id', async () => {
    const mailwarden = createMailwarden();
    const long = '\u{1F680}'.repeat(128);
    await mailwarden.applyEvents('acme', [event({ trackingId: long })]);
    expect(ids(await mailwarden.messages.list('acme', { trackingId: long }))).toEqual(['msg-1']);
    const error = await expectMailwardenError(() => mailwarden.messages.list('acme', { trackingId: `${long}x` }), 'invalid_tracking_id');
    expect(error.status).toBe(400);
    await expectMailwardenError(() => mailwarden.messages.list('acme', { trackingId: 'a'.repeat(129) }), 'invalid_tracking_id');
    await expectMailwardenError(() => mailwarden.messages.list('acme', { trackingId: 'a\udc00' }), 'invalid_tracking_id');
  });

  it.each<[string, Record<string, unknown>]>([
    ['an unknown status', { status: 'lost' }],
    ['limit 0', { limit: 0 }],
    ['limit 101', { limit: 101 }],
    ['limit "abc"', { limit: 'abc' }],
  ])('rejects %s with invalid_request', async (_, query) => {
    const mailwarden = await seeded();
    await expectMailwardenError(() => mailwarden.messages.list('acme', query as never), 'invalid_request');
  });
});

describe('trackingIds.list', () => {
  async function seeded() {
    const mailwarden = createMailwarden();
    const trackingIds = ['Spring-Sale', 'spring-launch', 'SUMMER', 'autumn-SPRING', 'newsletter-12', 'Ünïcode-Été'];
    await mailwarden.applyEvents(
      'acme',
      trackingIds.map((trackingId, i) => event({ messageId: `m${i}`, trackingId, occurredAt: new Date(T0 + i * 1000) })),
    );
    return mailwarden;
  }
  const names = (page: { items: { trackingId: string }[] }) => page.items.map((row) => row.trackingId);

  it('lists every tracking ID in code-point order with its counters', async () => {
    const mailwarden = await seeded();
    const page = await mailwarden.trackingIds.list('acme');
    expect(names(page)).toEqual(['SUMMER', 'Spring-Sale', 'autumn-SPRING', 'newsletter-12', 'spring-launch', 'Ünïcode-Été']);
    expect(page.items[1]).toStrictEqual({
      trackingId: 'Spring-Sale',
      messages: 1,
      delivered: 1,
      bounced: 0,
      complained: 0,
      lastEventAt: iso(0),
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    });
    expect(page.count).toBe(6);
    expect(page.next_cursor).toBeNull();
  });

  it.each([
    ['spring', ['Spring-Sale', 'autumn-SPRING', 'spring-launch']],
    ['SPRING', ['Spring-Sale', 'autumn-SPRING', 'spring-launch']],
    ['Ing-L', ['spring-launch']],
    ['-', ['Spring-Sale', 'autumn-SPRING', 'newsletter-12', 'spring-launch', 'Ünïcode-Été']],
    ['été', ['Ünïcode-Été']],
    ['ÜNÏ', ['Ünïcode-Été']],
    ['12', ['newsletter-12']],
    ['winter', []],
  ])('searches %j as a case-insensitive substring', async (search, expected) => {
    const mailwarden = await seeded();
    expect(names(await mailwarden.trackingIds.list('acme', { search }))).toEqual(expected);
  });

  it('takes an empty search as no search', async () => {
    const mailwarden = await seeded();
    expect((await mailwarden.trackingIds.list('acme', { search: '' })).count).toBe(6);
  });

  it('pages a search with a cursor', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.trackingIds.list('acme', { search: 'spring', limit: 2 });
    expect(names(first)).toEqual(['Spring-Sale', 'autumn-SPRING']);
    const second = await mailwarden.trackingIds.list('acme', { search: 'SPRING', limit: 2, cursor: first.next_cursor! });
    expect(names(second)).toEqual(['spring-launch']);
    expect(second.next_cursor).toBeNull();
  });

  it('rejects a search over 128 code points with invalid_request', async () => {
    const mailwarden = await seeded();
    expect((await mailwarden.trackingIds.list('acme', { search: 'a'.repeat(128) })).items).toEqual([]);
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { search: 'a'.repeat(129) }), 'invalid_request');
  });

  it('gives exactly the tracking ID asked for: a page of its one item, or an empty page', async () => {
    const mailwarden = await seeded();
    const all = (await mailwarden.trackingIds.list('acme')).items;
    const only = async (trackingId: string) => mailwarden.trackingIds.list('acme', { trackingId });
    for (const item of all) expect(await only(item.trackingId)).toStrictEqual({ items: [item], next_cursor: null, count: 1 });
    // Another case, a part of an ID, another project's ID: not that tracking ID.
    for (const absent of ['spring-sale', 'SPRING-SALE', 'Spring', 'Spring-Sale ', 'ünïcode-été']) {
      expect(await only(absent)).toStrictEqual({ items: [], next_cursor: null, count: 0 });
    }
    expect(await mailwarden.trackingIds.list('globex', { trackingId: 'Spring-Sale' })).toStrictEqual({
      items: [],
      next_cursor: null,
      count: 0,
    });
  });

  it('applies search to the tracking ID asked for too', async () => {
    const mailwarden = await seeded();
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', search: 'SALE' }))).toEqual(['Spring-Sale']);
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', search: 'spring-sale' }))).toEqual(['Spring-Sale']);
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', search: 'launch' }))).toEqual([]);
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', search: '' }))).toEqual(['Spring-Sale']);
  });

  it('takes an empty trackingId as no filter', async () => {
    const mailwarden = await seeded();
    expect((await mailwarden.trackingIds.list('acme', { trackingId: '' })).count).toBe(6);
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: '', search: 'spring' }))).toEqual([
      'Spring-Sale',
      'autumn-SPRING',
      'spring-launch',
    ]);
  });

  it('accepts a trackingId of 128 code points and rejects 129, or a lone surrogate, with invalid_tracking_id', async () => {
    const mailwarden = createMailwarden();
    const long = '\u{1F680}'.repeat(128);
    await mailwarden.applyEvents('acme', [event({ trackingId: long })]);
    expect(names(await mailwarden.trackingIds.list('acme', { trackingId: long }))).toEqual([long]);
    const error = await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { trackingId: `${long}x` }), 'invalid_tracking_id');
    expect(error.status).toBe(400);
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { trackingId: 'a'.repeat(129) }), 'invalid_tracking_id');
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { trackingId: 'a\udc00' }), 'invalid_tracking_id');
  });

  it('rejects a cursor beside a trackingId with invalid_cursor: that page is the whole answer', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.trackingIds.list('acme', { limit: 2 });
    await expectMailwardenError(
      () => mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', cursor: first.next_cursor! }),
      'invalid_cursor',
    );
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { trackingId: 'Spring-Sale', limit: 0 }), 'invalid_request');
  });

  it('recomputes the counters and last event time of a tracking ID a message moved away from', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'stays', trackingId: 'zeta', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'moves', trackingId: 'zeta', type: 'complained', occurredAt: new Date(T0 + 5000) }),
    ]);
    expect(await trackingIdsOf(mailwarden)).toStrictEqual([
      {
        trackingId: 'zeta',
        messages: 2,
        delivered: 1,
        bounced: 0,
        complained: 1,
        lastEventAt: iso(5000),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
    ]);
    // A sender error: the same message also carries "alpha", which sorts first and so wins.
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'moves', trackingId: 'alpha', type: 'opened', occurredAt: new Date(T0 + 3000) }),
    ]);
    expect(await trackingIdsOf(mailwarden)).toStrictEqual([
      {
        trackingId: 'alpha',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 1,
        lastEventAt: iso(5000),
        opened: 1,
        clicked: 0,
        unsubscribed: 0,
      },
      {
        trackingId: 'zeta',
        messages: 1,
        delivered: 1,
        bounced: 0,
        complained: 0,
        lastEventAt: iso(1000),
        opened: 0,
        clicked: 0,
        unsubscribed: 0,
      },
    ]);
    expect((await mailwarden.messages.list('acme', { trackingId: 'zeta' })).items.map((m) => m.messageId)).toEqual(['stays']);
    expect((await mailwarden.messages.list('acme', { trackingId: 'alpha' })).items.map((m) => m.messageId)).toEqual(['moves']);
  });

  it('drops a tracking ID whose only message moved to another ID', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ trackingId: 'zeta' })]);
    expect(names(await mailwarden.trackingIds.list('acme'))).toEqual(['zeta']);
    await mailwarden.applyEvents('acme', [event({ trackingId: 'alpha', type: 'opened' })]);
    expect(names(await mailwarden.trackingIds.list('acme'))).toEqual(['alpha']);
  });
});

describe('trackingIds.get', () => {
  it('gives the counters of exactly this tracking ID, or undefined', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'm1', trackingId: 'Spring-Sale', type: 'delivered', occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'm2', trackingId: 'Spring-Sale', type: 'complained', occurredAt: new Date(T0 + 2000) }),
      event({ messageId: 'm3', trackingId: 'spring-sale', type: 'bounced', bounceClass: 'hard' }),
    ]);
    expect(await mailwarden.trackingIds.get('acme', 'Spring-Sale')).toStrictEqual({
      trackingId: 'Spring-Sale',
      messages: 2,
      delivered: 1,
      bounced: 0,
      complained: 1,
      lastEventAt: iso(2000),
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    });
    expect(await mailwarden.trackingIds.get('acme', 'spring-sale')).toMatchObject({ messages: 1, bounced: 1 });
    expect(await mailwarden.trackingIds.get('acme', 'SPRING-SALE')).toBeUndefined();
    expect(await mailwarden.trackingIds.get('acme', 'Spring')).toBeUndefined();
    expect(await mailwarden.trackingIds.get('globex', 'Spring-Sale')).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['over 128 code points', 'a'.repeat(129)],
    ['with a lone surrogate', 'a\ud800'],
  ])('rejects a tracking ID that is %s with invalid_tracking_id', async (_, trackingId) => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(() => mailwarden.trackingIds.get('acme', trackingId), 'invalid_tracking_id');
  });

  it('rejects an invalid project id', async () => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(() => mailwarden.trackingIds.get('', 'spring'), 'invalid_request');
  });
});

describe('messages.get: one message with its timeline', () => {
  const id = messageKey('ses', 'msg-1', 'jane@example.com');

  it('opens a listed message by its id: its events oldest first, with what the provider said', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({
        type: 'bounced',
        bounceClass: 'hard',
        occurredAt: new Date(T0 + 5000),
        eventKey: 'bounce-1',
        details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', bounceClassification: 'Permanent/General' },
      }),
      event({ type: 'sent', eventKey: 'send-1' }),
      event({ type: 'sent', eventKey: 'send-1' }),
    ]);
    const [listed] = (await mailwarden.messages.list('acme')).items;
    expect(listed?.id).toBe(id);
    expect(await mailwarden.messages.get('acme', id)).toStrictEqual({
      ...listed,
      timeline: [
        { id: expect.stringMatching(/^[0-9a-f]{32}$/), eventKey: 'send-1', type: 'sent', provider: 'ses', occurredAt: iso(0) },
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          eventKey: 'bounce-1',
          type: 'bounced',
          provider: 'ses',
          occurredAt: iso(5000),
          bounceClass: 'hard',
          smtpStatus: '5.1.1',
          diagnostic: 'smtp; 550 5.1.1 user unknown',
          bounceClassification: 'Permanent/General',
        },
      ],
    });
  });

  it('answers undefined for an unknown id or another project, and refuses an id of another form', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event()]);
    expect(await mailwarden.messages.get('acme', 'f'.repeat(32))).toBeUndefined();
    expect(await mailwarden.messages.get('other', id)).toBeUndefined();
    for (const bad of ['', 'msg-1', id.toUpperCase(), `${id}0`, id.slice(1)]) {
      await expectMailwardenError(() => mailwarden.messages.get('acme', bad), 'invalid_request');
    }
  });

  it('keeps the clicked url and the user agent only when the instance opts in', async () => {
    const click = (eventKey: string) =>
      event({ type: 'clicked', eventKey, details: { url: 'https://example.com/offer?u=jane', userAgent: 'Mozilla/5.0' } });
    const plain = createMailwarden();
    await plain.applyEvents('acme', [click('c-1')]);
    expect((await plain.messages.get('acme', id))?.timeline[0]).not.toHaveProperty('url');
    expect((await plain.messages.get('acme', id))?.timeline[0]).not.toHaveProperty('userAgent');

    const opted = createMailwarden({ timeline: { personalData: true } });
    await opted.applyEvents('acme', [click('c-1')]);
    expect((await opted.messages.get('acme', id))?.timeline[0]).toMatchObject({
      url: 'https://example.com/offer?u=jane',
      userAgent: 'Mozilla/5.0',
    });
  });

  it('reads the deprecated description as the diagnostic, fitted to its limit', async () => {
    const mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [event({ type: 'deferred', description: `  ${'x'.repeat(600)}` })]);
    const [entry] = (await mailwarden.messages.get('acme', id))!.timeline;
    expect(entry?.diagnostic).toBe('x'.repeat(500));
  });

  it('skips an event whose details no store could keep, with a warning, as for other fields', async () => {
    const mailwarden = createMailwarden();
    const result = await mailwarden.applyEvents('acme', [
      event({ details: { diagnostic: 'a\u0000b' } }),
      event({ details: { smtpStatus: 'five-one-one' } }),
      event({ details: { diagnostic: 'x'.repeat(501) } }),
      event({ details: { diagnostic: 'fine' } }),
    ]);
    expect(result.warnings.map((warning) => [warning.index, warning.code])).toStrictEqual([
      [0, 'invalid_event'],
      [1, 'invalid_event'],
      [2, 'invalid_event'],
    ]);
    expect(result.accepted).toBe(1);
  });
});
