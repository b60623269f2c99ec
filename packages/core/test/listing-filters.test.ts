import { describe, expect, it } from 'vitest';
import { createMailwarden, createMemoryStore, type DeliveryEvent, type Mailwarden } from '@mailwarden/core';
import { createCursorCodec } from '../src/cursor.js';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

let sequence = 0;
function event(overrides: Partial<DeliveryEvent> = {}): DeliveryEvent {
  sequence++;
  return {
    provider: 'ses',
    type: 'delivered',
    messageId: `m-${sequence}`,
    recipient: 'jane@example.com',
    trackingId: 'spring',
    occurredAt: new Date(T0),
    eventKey: `e-${sequence}`,
    ...overrides,
  };
}

/** Messages at T0 + 0 s … 5 s: to jane (ses) at even seconds, to bob (sendgrid) at odd ones. */
async function seeded(): Promise<Mailwarden> {
  let time = T0;
  const mailwarden = createMailwarden({ now: () => (time += 1000) });
  await mailwarden.applyEvents(
    'acme',
    Array.from({ length: 6 }, (_, i) =>
      event(i % 2 === 0 ? { occurredAt: new Date(T0 + i * 1000) } : { provider: 'sendgrid', recipient: 'Bob@Example.com', occurredAt: new Date(T0 + i * 1000) }),
    ),
  );
  return mailwarden;
}

const lastEvents = (page: { items: { lastEventAt: string }[] }) => page.items.map((item) => item.lastEventAt);

describe('messages.list filters', () => {
  it('filters by recipient, normalized as stored, and refuses an address that is not one', async () => {
    const mailwarden = await seeded();
    const bob = await mailwarden.messages.list('acme', { recipient: '  BOB@example.COM ' });
    expect(bob.items.map((item) => item.recipient)).toStrictEqual(['bob@example.com', 'bob@example.com', 'bob@example.com']);
    // An empty filter means no filter, as for trackingId.
    expect((await mailwarden.messages.list('acme', { recipient: '' })).count).toBe(6);
    const error = await expectMailwardenError(() => mailwarden.messages.list('acme', { recipient: 'not-an-address' }), 'invalid_email');
    expect(error.status).toBe(400);
  });

  it('filters by provider, and refuses an unknown one', async () => {
    const mailwarden = await seeded();
    const page = await mailwarden.messages.list('acme', { provider: 'sendgrid' });
    expect(page.items.map((item) => item.provider)).toStrictEqual(['sendgrid', 'sendgrid', 'sendgrid']);
    await expectMailwardenError(() => mailwarden.messages.list('acme', { provider: 'pigeon' as never }), 'invalid_request');
  });

  it('filters by the last event: from inclusive, to exclusive, in any ISO 8601 offset or as a date', async () => {
    const mailwarden = await seeded();
    expect(lastEvents(await mailwarden.messages.list('acme', { from: iso(2000), to: iso(4000) }))).toStrictEqual([iso(3000), iso(2000)]);
    // The same instants written with an offset.
    expect(lastEvents(await mailwarden.messages.list('acme', { from: '2026-11-01T01:00:02+01:00', to: '2026-10-31T19:00:04.000-05:00' }))).toStrictEqual([
      iso(3000),
      iso(2000),
    ]);
    expect((await mailwarden.messages.list('acme', { from: '2026-11-01', to: '2026-11-02' })).count).toBe(6);
    expect((await mailwarden.messages.list('acme', { to: '2026-11-01' })).count).toBe(0);
    expect(lastEvents(await mailwarden.messages.list('acme', { from: iso(5000), provider: 'sendgrid', recipient: 'bob@example.com', status: 'delivered' }))).toStrictEqual([
      iso(5000),
    ]);
  });

  it.each([
    ['from', 'yesterday'],
    ['from', '2026-11-01T00:00:00'], // no offset: whose midnight?
    ['to', '2026-02-30'],
    ['to', '2026-11-01T00:00:00.0001Z'], // finer than the milliseconds stored
    ['from', '1730419200000'],
  ])('refuses %s=%s as invalid_request, naming the parameter', async (name, value) => {
    const mailwarden = await seeded();
    const error = await expectMailwardenError(() => mailwarden.messages.list('acme', { [name]: value }), 'invalid_request');
    expect(error.message).toContain(name);
    expect(error.message).toContain('ISO 8601');
  });

  it('refuses a range whose to is not after its from', async () => {
    const mailwarden = await seeded();
    for (const to of [iso(1000), iso(999)]) {
      const error = await expectMailwardenError(() => mailwarden.messages.list('acme', { from: iso(1000), to }), 'invalid_request');
      expect(error.message).toMatch(/to must be later than from/);
    }
  });

  it('binds a cursor to every filter: the same filters continue it, other ones are invalid_cursor', async () => {
    const mailwarden = await seeded();
    const query = { recipient: 'jane@example.com', provider: 'ses', from: iso(0), to: iso(5000), limit: 1 } as const;
    const items: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await mailwarden.messages.list('acme', { ...query, ...(cursor ? { cursor } : {}) });
      items.push(...lastEvents(page));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(items).toStrictEqual([iso(4000), iso(2000), iso(0)]);

    const first = await mailwarden.messages.list('acme', query);
    const next = first.next_cursor!;
    // The same instant written otherwise, and the same address in other case, are the same filters.
    expect((await mailwarden.messages.list('acme', { ...query, recipient: 'JANE@example.com', from: '2026-11-01', cursor: next })).count).toBe(1);
    for (const other of [
      { recipient: 'bob@example.com' },
      { recipient: undefined },
      { provider: 'sendgrid' as const },
      { provider: undefined },
      { from: iso(1) },
      { from: undefined },
      { to: iso(4999) },
      { to: undefined },
    ]) {
      await expectMailwardenError(() => mailwarden.messages.list('acme', { ...query, ...other, cursor: next }), 'invalid_cursor');
    }
  });

  it('keeps cursors issued before these filters existed valid', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.messages.list('acme', { trackingId: 'spring', limit: 2 });
    const position = JSON.parse(Buffer.from(first.next_cursor!, 'base64url').toString())[2];
    // What the listing encoded before: the scope held trackingId and status only.
    const before = createCursorCodec().encode({ listing: 'messages', projectId: 'acme', filters: { trackingId: 'spring', status: undefined } }, position);
    expect(before).toBe(first.next_cursor);
  });
});

describe('suppressions.list filters', () => {
  async function suppressed(): Promise<Mailwarden> {
    let time = T0;
    const mailwarden = createMailwarden({ now: () => (time += 1000) });
    for (const name of ['ana', 'bo', 'cy']) await mailwarden.suppressions.add('acme', `${name}@example.com`); // T0 + 1, 2, 3 s
    await mailwarden.applyEvents('acme', [
      event({ type: 'bounced', bounceClass: 'hard', recipient: 'dee@example.com', occurredAt: new Date(T0 + 4000) }),
      event({ type: 'complained', recipient: 'eve@example.com', occurredAt: new Date(T0 + 5000) }),
    ]);
    return mailwarden;
  }
  const emails = (page: { items: { email: string }[] }) => page.items.map((item) => item.email);

  it('filters by reason and by created_at (from inclusive, to exclusive), combined', async () => {
    const mailwarden = await suppressed();
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'manual' }))).toStrictEqual(['cy@example.com', 'bo@example.com', 'ana@example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'hard_bounce' }))).toStrictEqual(['dee@example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { from: iso(2000), to: iso(4000) }))).toStrictEqual(['cy@example.com', 'bo@example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'manual', from: iso(3000) }))).toStrictEqual(['cy@example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { to: iso(1000) }))).toStrictEqual([]);
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { reason: 'bored' as never }), 'invalid_request');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { from: 'soon' }), 'invalid_request');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { from: iso(3000), to: iso(3000) }), 'invalid_request');
  });

  it('binds a cursor to reason and range; one from the unfiltered listing stays valid for it', async () => {
    const mailwarden = await suppressed();
    const first = await mailwarden.suppressions.list('acme', { reason: 'manual', limit: 1 });
    const cursor = first.next_cursor!;
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'manual', limit: 5, cursor }))).toStrictEqual(['bo@example.com', 'ana@example.com']);
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { limit: 5, cursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { reason: 'complaint', limit: 5, cursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { reason: 'manual', from: iso(0), limit: 5, cursor }), 'invalid_cursor');

    const unfiltered = await mailwarden.suppressions.list('acme', { limit: 1 });
    const position = JSON.parse(Buffer.from(unfiltered.next_cursor!, 'base64url').toString())[2];
    expect(createCursorCodec().encode({ listing: 'suppressions', projectId: 'acme', filters: {} }, position)).toBe(unfiltered.next_cursor);
  });
});

describe('retention under filters (memory store)', () => {
  it('a forgotten message leaves every filtered listing; suppressions stay listed by reason and time', async () => {
    const DAY = 86_400_000;
    const store = createMemoryStore({ retention: { messagesMs: 30 * DAY } });
    const mailwarden = createMailwarden({ store });
    const now = T0 + 100 * DAY;
    await mailwarden.applyEvents('acme', [
      event({ messageId: 'old', provider: 'sendgrid', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(now - 40 * DAY) }),
      event({ messageId: 'new', provider: 'sendgrid', occurredAt: new Date(now - DAY) }),
    ]);
    expect((await mailwarden.messages.list('acme', { recipient: 'jane@example.com', provider: 'sendgrid' })).count).toBe(2);
    await store.purgeExpired(now);
    for (const query of [{ recipient: 'jane@example.com' }, { provider: 'sendgrid' as const }, { from: iso(0) }, { to: new Date(now).toISOString() }]) {
      expect((await mailwarden.messages.list('acme', query)).items.map((item) => item.messageId), JSON.stringify(query)).toStrictEqual(['new']);
    }
    expect((await mailwarden.messages.list('acme', { to: new Date(now - 2 * DAY).toISOString() })).count).toBe(0);
    const hard = await mailwarden.suppressions.list('acme', { reason: 'hard_bounce', from: new Date(now - 40 * DAY).toISOString() });
    expect(hard.items.map((item) => item.email)).toStrictEqual(['jane@example.com']);
  });
});
