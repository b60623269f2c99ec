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
      event(
        i % 2 === 0
          ? { occurredAt: new Date(T0 + i * 1000) }
          : { provider: 'sendgrid', recipient: 'Bob@Example.com', occurredAt: new Date(T0 + i * 1000) },
      ),
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
    expect(
      lastEvents(await mailwarden.messages.list('acme', { from: '2026-11-01T01:00:02+01:00', to: '2026-10-31T19:00:04.000-05:00' })),
    ).toStrictEqual([iso(3000), iso(2000)]);
    expect((await mailwarden.messages.list('acme', { from: '2026-11-01', to: '2026-11-02' })).count).toBe(6);
    expect((await mailwarden.messages.list('acme', { to: '2026-11-01' })).count).toBe(0);
    expect(
      lastEvents(
        await mailwarden.messages.list('acme', {
          from: iso(5000),
          provider: 'sendgrid',
          recipient: 'bob@example.com',
          status: 'delivered',
        }),
      ),
    ).toStrictEqual([iso(5000)]);
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
    expect(
      (await mailwarden.messages.list('acme', { ...query, recipient: 'JANE@example.com', from: '2026-11-01', cursor: next })).count,
    ).toBe(1);
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
    const before = createCursorCodec().encode(
      { listing: 'messages', projectId: 'acme', filters: { trackingId: 'spring', status: undefined } },
      position,
    );
    expect(before).toBe(first.next_cursor);
  });
});

describe('messages.list by stream', () => {
  /** Messages at T0 + 0 … 3 s: in 'weekly-digest', in 'receipts', in none, in 'weekly-digest'. */
  async function streamed(): Promise<Mailwarden> {
    const mailwarden = createMailwarden();
    const streams = ['weekly-digest', 'receipts', null, 'weekly-digest'];
    await mailwarden.applyEvents(
      'acme',
      streams.map((stream, i) => event({ stream, occurredAt: new Date(T0 + i * 1000) })),
    );
    return mailwarden;
  }

  it('lists messages of one stream, exactly; answers carry stream only when the message has one', async () => {
    const mailwarden = await streamed();
    const all = await mailwarden.messages.list('acme');
    expect(all.items.map((message) => message.stream)).toStrictEqual(['weekly-digest', undefined, 'receipts', 'weekly-digest']);
    expect('stream' in all.items[1]!).toBe(false);
    // The key sits after trackingId, so a message without one keeps the key order it always had.
    expect(Object.keys(all.items[0]!)).toStrictEqual([
      'id',
      'messageId',
      'recipient',
      'status',
      'trackingId',
      'stream',
      'provider',
      'facts',
      'firstEventAt',
      'lastEventAt',
    ]);
    expect(lastEvents(await mailwarden.messages.list('acme', { stream: 'weekly-digest' }))).toStrictEqual([iso(3000), iso(0)]);
    expect(lastEvents(await mailwarden.messages.list('acme', { stream: 'receipts', provider: 'ses' }))).toStrictEqual([iso(1000)]);
    expect((await mailwarden.messages.list('acme', { stream: 'weekly' })).items).toStrictEqual([]);
    expect(await mailwarden.messages.list('acme', { stream: '' })).toStrictEqual(all);
    const detail = await mailwarden.messages.get('acme', all.items[0]!.id);
    expect(detail?.stream).toBe('weekly-digest');
    expect('stream' in (await mailwarden.messages.get('acme', all.items[1]!.id))!).toBe(false);
  });

  it('refuses a stream that is no stream name with invalid_stream, taking names exactly as given', async () => {
    const mailwarden = await streamed();
    for (const stream of ['Weekly-Digest', '-digest', '_x', 'a'.repeat(65), 'a b', 'é']) {
      await expectMailwardenError(() => mailwarden.messages.list('acme', { stream }), 'invalid_stream');
    }
  });

  it('binds a cursor to the stream; cursors without one stay what they were', async () => {
    const mailwarden = await streamed();
    const first = await mailwarden.messages.list('acme', { stream: 'weekly-digest', limit: 1 });
    const next = first.next_cursor!;
    expect(lastEvents(await mailwarden.messages.list('acme', { stream: 'weekly-digest', limit: 1, cursor: next }))).toStrictEqual([iso(0)]);
    for (const other of [{}, { stream: 'receipts' }]) {
      await expectMailwardenError(() => mailwarden.messages.list('acme', { limit: 1, ...other, cursor: next }), 'invalid_cursor');
    }
    const unfiltered = await mailwarden.messages.list('acme', { limit: 1 });
    const position = JSON.parse(Buffer.from(unfiltered.next_cursor!, 'base64url').toString())[2];
    const before = createCursorCodec().encode(
      { listing: 'messages', projectId: 'acme', filters: { trackingId: undefined, status: undefined } },
      position,
    );
    expect(before).toBe(unfiltered.next_cursor);
  });

  it('records the first stream of a message whatever the order of its events; an invalid one counts as none', async () => {
    const mailwarden = createMailwarden();
    const events = [
      event({ messageId: 'x', stream: 'weekly_digest', occurredAt: new Date(T0) }),
      event({ messageId: 'x', type: 'opened', stream: null, occurredAt: new Date(T0 + 1000) }),
      event({ messageId: 'x', type: 'clicked', stream: 'weekly-digest', occurredAt: new Date(T0 + 2000) }),
      event({ messageId: 'y', stream: 'Not A Stream', occurredAt: new Date(T0 + 3000) }),
    ];
    const result = await mailwarden.applyEvents('acme', events);
    expect(result.warnings.map((warning) => warning.code)).toStrictEqual(['invalid_stream']);
    const reversed = createMailwarden();
    await reversed.applyEvents('acme', [...events].reverse());
    for (const instance of [mailwarden, reversed]) {
      const { items } = await instance.messages.list('acme');
      expect(items.map((message) => [message.messageId, message.stream])).toStrictEqual([
        ['y', undefined],
        ['x', 'weekly-digest'],
      ]);
    }
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
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'manual' }))).toStrictEqual([
      'cy@example.com',
      'bo@example.com',
      'ana@example.com',
    ]);
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'hard_bounce' }))).toStrictEqual(['dee@example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { from: iso(2000), to: iso(4000) }))).toStrictEqual([
      'cy@example.com',
      'bo@example.com',
    ]);
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
    expect(emails(await mailwarden.suppressions.list('acme', { reason: 'manual', limit: 5, cursor }))).toStrictEqual([
      'bo@example.com',
      'ana@example.com',
    ]);
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { limit: 5, cursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { reason: 'complaint', limit: 5, cursor }), 'invalid_cursor');
    await expectMailwardenError(
      () => mailwarden.suppressions.list('acme', { reason: 'manual', from: iso(0), limit: 5, cursor }),
      'invalid_cursor',
    );

    const unfiltered = await mailwarden.suppressions.list('acme', { limit: 1 });
    const position = JSON.parse(Buffer.from(unfiltered.next_cursor!, 'base64url').toString())[2];
    expect(createCursorCodec().encode({ listing: 'suppressions', projectId: 'acme', filters: {} }, position)).toBe(unfiltered.next_cursor);
  });
});

describe('partial search (recipientPrefix, recipientDomain, emailPrefix)', () => {
  /** Messages at T0 + 1 … 5 s to these recipients, in this order; each also suppressed (manual) at that time. */
  const recipients = ['Jane.Doe@Example.com', 'jane@mail.example.com', 'fé@Bücher.example', 'bob@example.com', 'Janet@example.org'];
  async function searchable(): Promise<Mailwarden> {
    let time = T0;
    const mailwarden = createMailwarden({ now: () => (time += 1000) });
    await mailwarden.applyEvents(
      'acme',
      recipients.map((recipient, i) =>
        event({ recipient, provider: i % 2 === 0 ? 'ses' : 'sendgrid', occurredAt: new Date(T0 + (i + 1) * 1000) }),
      ),
    );
    for (const recipient of recipients) await mailwarden.suppressions.add('acme', recipient);
    return mailwarden;
  }
  const recipientsOf = (page: { items: { recipient: string }[] }) => page.items.map((item) => item.recipient);
  const emails = (page: { items: { email: string }[] }) => page.items.map((item) => item.email);

  it.each([
    ['jane', ['janet@example.org', 'jane@mail.example.com', 'jane.doe@example.com']],
    // Compared lower-cased and trimmed, as stored addresses are: partial input is a search, never an error.
    ['  JANE.', ['jane.doe@example.com']],
    ['Jane.Doe@Ex', ['jane.doe@example.com']],
    ['jane@', ['jane@mail.example.com']],
    // A non-ASCII domain matches once its labels are typed whole (it is stored in IDNA form), or typed as stored.
    ['fé@BÜCHER.', ['fé@xn--bcher-kva.example']],
    ['fé@xn--bcher', ['fé@xn--bcher-kva.example']],
    ['fé@büch', []],
    ['FÉ', ['fé@xn--bcher-kva.example']],
    ['fe', []],
    ['%', []],
    ['@', []],
    ['', recipients.map((recipient) => recipient.toLowerCase().replace('bücher', 'xn--bcher-kva')).reverse()],
    ['   ', recipients.map((recipient) => recipient.toLowerCase().replace('bücher', 'xn--bcher-kva')).reverse()],
  ])('messages and suppressions by the start of the address %j', async (prefix, expected) => {
    const mailwarden = await searchable();
    expect(recipientsOf(await mailwarden.messages.list('acme', { recipientPrefix: prefix }))).toStrictEqual(expected);
    expect(emails(await mailwarden.suppressions.list('acme', { emailPrefix: prefix }))).toStrictEqual(expected);
  });

  it.each([
    ['example.com', ['bob@example.com', 'jane.doe@example.com']],
    ['@EXAMPLE.COM.', ['bob@example.com', 'jane.doe@example.com']],
    [' @mail.example.com ', ['jane@mail.example.com']],
    ['Bücher.example', ['fé@xn--bcher-kva.example']],
    ['xn--bcher-kva.example', ['fé@xn--bcher-kva.example']],
    // A domain is whole: no parent, no part, no subdomain.
    ['example', []],
    ['com', []],
    ['ample.com', []],
    ['not a domain', []],
    ['@', recipients.map((recipient) => recipient.toLowerCase().replace('bücher', 'xn--bcher-kva')).reverse()],
  ])('messages by the domain %j', async (domain, expected) => {
    const mailwarden = await searchable();
    expect(recipientsOf(await mailwarden.messages.list('acme', { recipientDomain: domain }))).toStrictEqual(expected);
  });

  it('combines with every other filter and pages', async () => {
    const mailwarden = await searchable();
    expect(recipientsOf(await mailwarden.messages.list('acme', { recipientPrefix: 'j', recipientDomain: 'example.com' }))).toStrictEqual([
      'jane.doe@example.com',
    ]);
    expect(recipientsOf(await mailwarden.messages.list('acme', { recipientPrefix: 'jane', provider: 'ses' }))).toStrictEqual([
      'janet@example.org',
      'jane.doe@example.com',
    ]);
    expect(recipientsOf(await mailwarden.messages.list('acme', { recipientPrefix: 'jane', from: iso(2000), to: iso(5000) }))).toStrictEqual(
      ['jane@mail.example.com'],
    );
    expect(
      recipientsOf(await mailwarden.messages.list('acme', { recipientPrefix: 'jane', recipient: 'JANE@mail.example.com' })),
    ).toStrictEqual(['jane@mail.example.com']);
    expect(emails(await mailwarden.suppressions.list('acme', { emailPrefix: 'jane', reason: 'hard_bounce' }))).toStrictEqual([]);

    const walk = async <T>(list: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>): Promise<T[]> => {
      const items: T[] = [];
      let cursor: string | null | undefined;
      do {
        const page = await list(cursor ?? undefined);
        items.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor !== null);
      return items;
    };
    const messages = await walk((cursor) =>
      mailwarden.messages.list('acme', { recipientPrefix: 'JANE', limit: 1, ...(cursor ? { cursor } : {}) }),
    );
    expect(messages.map((item) => item.recipient)).toStrictEqual(['janet@example.org', 'jane@mail.example.com', 'jane.doe@example.com']);
    const suppressions = await walk((cursor) =>
      mailwarden.suppressions.list('acme', { emailPrefix: 'jane', limit: 1, ...(cursor ? { cursor } : {}) }),
    );
    expect(suppressions.map((item) => item.email)).toStrictEqual(['janet@example.org', 'jane@mail.example.com', 'jane.doe@example.com']);
  });

  it('binds a cursor to the search as normalized: the same search written otherwise continues it, another one is invalid_cursor', async () => {
    const mailwarden = await searchable();
    const first = await mailwarden.messages.list('acme', { recipientPrefix: 'jane', recipientDomain: 'example.com', limit: 1 });
    expect(first.next_cursor).toBeNull();
    const page = await mailwarden.messages.list('acme', { recipientPrefix: 'jane', limit: 1 });
    const cursor = page.next_cursor!;
    expect((await mailwarden.messages.list('acme', { recipientPrefix: ' JANE ', limit: 5, cursor })).count).toBe(2);
    for (const other of [
      {},
      { recipientPrefix: 'jan' },
      { recipientPrefix: 'jane', recipientDomain: 'example.com' },
      { recipientPrefix: 'jane', recipient: 'jane@mail.example.com' },
    ]) {
      await expectMailwardenError(() => mailwarden.messages.list('acme', { ...other, limit: 5, cursor }), 'invalid_cursor');
    }
    const byDomain = (await mailwarden.messages.list('acme', { recipientDomain: 'example.com', limit: 1 })).next_cursor!;
    expect((await mailwarden.messages.list('acme', { recipientDomain: '@Example.COM', limit: 5, cursor: byDomain })).count).toBe(1);
    await expectMailwardenError(
      () => mailwarden.messages.list('acme', { recipientDomain: 'example.org', limit: 5, cursor: byDomain }),
      'invalid_cursor',
    );
    const suppressions = (await mailwarden.suppressions.list('acme', { emailPrefix: 'jane', limit: 1 })).next_cursor!;
    expect((await mailwarden.suppressions.list('acme', { emailPrefix: 'Jane', limit: 5, cursor: suppressions })).count).toBe(2);
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { limit: 5, cursor: suppressions }), 'invalid_cursor');
    // Empty means no filter: the unfiltered listing's cursor continues it.
    const unfiltered = (await mailwarden.messages.list('acme', { limit: 1 })).next_cursor!;
    expect(
      (await mailwarden.messages.list('acme', { recipientPrefix: '', recipientDomain: '', limit: 10, cursor: unfiltered })).count,
    ).toBe(4);
  });

  it.each([
    ['recipientPrefix', 'a\u0000b', /Invalid recipientPrefix: it contains U\+0000/],
    ['recipientPrefix', 'x'.repeat(255), /Invalid recipientPrefix: it is over 254 characters/],
    ['recipientDomain', '\ud800.example', /Invalid recipientDomain: it contains a lone surrogate/],
    ['recipientDomain', 'x'.repeat(255), /Invalid recipientDomain: it is over 254 characters/],
  ])('refuses %s that no search can use (%#) as invalid_request', async (name, value, message) => {
    const mailwarden = await searchable();
    const error = await expectMailwardenError(() => mailwarden.messages.list('acme', { [name]: value }), 'invalid_request');
    expect(error.message).toMatch(message);
    expect(error.status).toBe(400);
  });

  it('takes 254 characters, white space around them aside; refuses an emailPrefix as the others', async () => {
    const mailwarden = await searchable();
    expect((await mailwarden.messages.list('acme', { recipientPrefix: ` ${'😀'.repeat(254)}\t` })).count).toBe(0);
    expect((await mailwarden.suppressions.list('acme', { emailPrefix: ` ${'j'.repeat(254)} ` })).count).toBe(0);
    const error = await expectMailwardenError(() => mailwarden.suppressions.list('acme', { emailPrefix: 'j\u0000' }), 'invalid_request');
    expect(error.message).toMatch(/Invalid emailPrefix/);
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { emailPrefix: 'j'.repeat(255) }), 'invalid_request');
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
    for (const query of [
      { recipient: 'jane@example.com' },
      { provider: 'sendgrid' as const },
      { from: iso(0) },
      { to: new Date(now).toISOString() },
    ]) {
      expect(
        (await mailwarden.messages.list('acme', query)).items.map((item) => item.messageId),
        JSON.stringify(query),
      ).toStrictEqual(['new']);
    }
    expect((await mailwarden.messages.list('acme', { to: new Date(now - 2 * DAY).toISOString() })).count).toBe(0);
    const hard = await mailwarden.suppressions.list('acme', { reason: 'hard_bounce', from: new Date(now - 40 * DAY).toISOString() });
    expect(hard.items.map((item) => item.email)).toStrictEqual(['jane@example.com']);
  });
});
