import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createMailwarden,
  createMemoryStore,
  type DeliveryEvent,
  type Mailwarden,
  type MailwardenOptions,
  type Suppression,
} from '@mailwarden/core';
import { expectMailwardenError } from './expect-mailwarden-error.js';
import { messageKey, timelineEntryId } from '@mailwarden/core/store';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A mailwarden whose clock only moves when the test says so. */
function setup(options: MailwardenOptions = {}) {
  let time = T0;
  const mailwarden = createMailwarden({ ...options, now: () => time });
  return {
    mailwarden,
    advance(ms = 1000) {
      time += ms;
    },
    get time() {
      return time;
    },
  };
}

function event(overrides: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'eventKey'>): DeliveryEvent {
  return {
    provider: 'ses',
    type: 'delivered',
    messageId: 'msg-1',
    recipient: 'jane@example.com',
    trackingId: null,
    occurredAt: new Date(T0),
    ...overrides,
  };
}

/** Adds `count` addresses, one second apart; returns them newest first. */
async function addMany(context: ReturnType<typeof setup>, projectId: string, count: number): Promise<Suppression[]> {
  const added: Suppression[] = [];
  for (let i = 0; i < count; i++) {
    context.advance();
    added.push((await context.mailwarden.suppressions.add(projectId, `user${i}@example.com`)).suppression);
  }
  return added.reverse();
}

async function listAll(mailwarden: Mailwarden, projectId: string, limit?: number) {
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await mailwarden.suppressions.list(projectId, {
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

describe('suppressions.list', () => {
  it('is empty for a project without suppressions', async () => {
    const { mailwarden } = setup();
    expect(await mailwarden.suppressions.list('acme')).toStrictEqual({ items: [], next_cursor: null, count: 0 });
  });

  it('pages 50 by default, newest first, with next_cursor null on the last page', async () => {
    const context = setup();
    const added = await addMany(context, 'acme', 120);
    const pages = await listAll(context.mailwarden, 'acme');
    expect(pages.map((page) => page.count)).toEqual([50, 50, 20]);
    expect(pages.map((page) => page.next_cursor === null)).toEqual([false, false, true]);
    for (const page of pages) expect(page.count).toBe(page.items.length);
    expect(pages.flatMap((page) => page.items)).toEqual(added);
  });

  it('returns next_cursor null when the last page is exactly full', async () => {
    const context = setup();
    await addMany(context, 'acme', 100);
    const page = await context.mailwarden.suppressions.list('acme', { limit: 100 });
    expect(page.count).toBe(100);
    expect(page.next_cursor).toBeNull();
    const fifty = await listAll(context.mailwarden, 'acme');
    expect(fifty.map((p) => p.count)).toEqual([50, 50]);
    expect(fifty[1]!.next_cursor).toBeNull();
  });

  it.each([1, 7, 100])('walks every suppression exactly once with limit %i', async (limit) => {
    const context = setup();
    const added = await addMany(context, 'acme', 120);
    const pages = await listAll(context.mailwarden, 'acme', limit);
    for (const page of pages.slice(0, -1)) expect(page.count).toBe(limit);
    expect(pages.flatMap((page) => page.items)).toEqual(added);
  });

  it('accepts a limit given as a numeric string', async () => {
    const context = setup();
    await addMany(context, 'acme', 10);
    const page = await context.mailwarden.suppressions.list('acme', { limit: '7' as unknown as number });
    expect(page.count).toBe(7);
    expect(page.next_cursor).not.toBeNull();
  });

  it.each<[string, unknown]>([
    ['0', 0],
    ['101', 101],
    ['"abc"', 'abc'],
    ['1.5', 1.5],
    ['-1', -1],
    ['"0"', '0'],
    ['"101"', '101'],
    ['"1.5"', '1.5'],
    ['""', ''],
    ['null', null],
    ['NaN', Number.NaN],
  ])('rejects limit %s with invalid_request', async (_, limit) => {
    const context = setup();
    await addMany(context, 'acme', 3);
    const error = await expectMailwardenError(
      () => context.mailwarden.suppressions.list('acme', { limit: limit as number }),
      'invalid_request',
    );
    expect(error.status).toBe(400);
    expect(error.details).toEqual([expect.objectContaining({ path: 'limit' })]);
  });

  it('orders by created_at descending, then hash ascending', async () => {
    const context = setup();
    const emails = Array.from({ length: 12 }, (_, i) => `same-time-${i}@example.com`);
    // Three groups of four addresses that share a creation time.
    for (let group = 0; group < 3; group++) {
      context.advance();
      for (const email of emails.slice(group * 4, group * 4 + 4)) await context.mailwarden.suppressions.add('acme', email);
    }
    const { items } = await context.mailwarden.suppressions.list('acme', { limit: 100 });
    const expected = [...items].sort(
      (a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0),
    );
    expect(items).toEqual(expected);
    expect(new Set(items.map((item) => item.created_at)).size).toBe(3);
    // Paging through the ties gives the same order.
    expect((await listAll(context.mailwarden, 'acme', 3)).flatMap((page) => page.items)).toEqual(items);
  });

  it('lists items with exactly hash, email, reason and created_at, and provenance beside them', async () => {
    const context = setup();
    context.advance(123);
    await context.mailwarden.suppressions.add('acme', ' Jane@Example.COM ');
    const { items } = await context.mailwarden.suppressions.list('acme');
    expect(items).toStrictEqual([
      {
        hash: sha256('jane@example.com'),
        email: 'jane@example.com',
        reason: 'manual',
        created_at: new Date(T0 + 123).toISOString(),
        source: 'api',
        cause: null,
      },
    ]);
    expect(items[0]!.created_at).toMatch(ISO_MS);
  });

  it('keeps the walk exact when items are removed and added between pages', async () => {
    const context = setup();
    const added = await addMany(context, 'acme', 30);
    const { mailwarden } = context;
    const first = await mailwarden.suppressions.list('acme', { limit: 10 });
    // Remove the last item of the page (the cursor position) and an item further on, add a newer one.
    await mailwarden.suppressions.remove('acme', added[9]!.hash);
    await mailwarden.suppressions.remove('acme', added[20]!.hash);
    context.advance();
    await mailwarden.suppressions.add('acme', 'newcomer@example.com');
    const rest = await listAll(mailwarden, 'acme', 10);
    const walked = [...first.items, ...(await mailwarden.suppressions.list('acme', { limit: 100, cursor: first.next_cursor! })).items];
    expect(walked).toEqual(added.filter((_, i) => i !== 20));
    expect(rest.flatMap((page) => page.items)[0]!.email).toBe('newcomer@example.com');
  });
});

describe('suppressions.check', () => {
  it('answers exactly { email, suppressed: false } when not suppressed', async () => {
    const { mailwarden } = setup();
    const result = await mailwarden.suppressions.check('acme', 'Nobody@Example.com');
    expect(result).toStrictEqual({ email: 'Nobody@Example.com', suppressed: false });
    expect(Object.keys(result)).toEqual(['email', 'suppressed']);
  });

  it('answers { email, suppressed: true, reason, created_at } when suppressed, echoing the address as given', async () => {
    const context = setup();
    context.advance(5000);
    await context.mailwarden.suppressions.add('acme', 'jane@example.com');
    context.advance(5000);
    const given = '  JANE@Example.COM. ';
    const result = await context.mailwarden.suppressions.check('acme', given);
    expect(result).toStrictEqual({
      email: given,
      suppressed: true,
      reason: 'manual',
      created_at: new Date(T0 + 5000).toISOString(),
      source: 'api',
      cause: null,
    });
  });

  it('reports the automatic reason', async () => {
    const { mailwarden } = setup();
    await mailwarden.applyEvents('acme', [event({ eventKey: 'c1', type: 'complained', occurredAt: new Date(T0 + 42) })]);
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual({
      email: 'jane@example.com',
      suppressed: true,
      reason: 'complaint',
      created_at: new Date(T0 + 42).toISOString(),
      source: 'webhook',
      cause: {
        provider: 'ses',
        message_id: 'msg-1',
        message: messageKey('ses', 'msg-1', 'jane@example.com'),
        event_id: timelineEntryId('ses:c1'),
        event_at: new Date(T0 + 42).toISOString(),
        diagnostic: null,
      },
    });
    // The cause opens the message that carried the event, the listing's id.
    const [item] = (await mailwarden.messages.list('acme')).items;
    expect(item!.id).toBe(messageKey('ses', 'msg-1', 'jane@example.com'));
  });

  it('throws invalid_email for an invalid address', async () => {
    const { mailwarden } = setup();
    const error = await expectMailwardenError(() => mailwarden.suppressions.check('acme', 'not-an-address'), 'invalid_email');
    expect(error.details).toEqual([expect.objectContaining({ index: 0, email: 'not-an-address' })]);
  });

  it('keeps projects apart', async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'jane@example.com');
    expect((await mailwarden.suppressions.check('other', 'jane@example.com')).suppressed).toBe(false);
    expect((await mailwarden.suppressions.list('other')).items).toEqual([]);
  });
});

describe('suppressions.checkMany', () => {
  it('answers an empty batch', async () => {
    const { mailwarden } = setup();
    expect(await mailwarden.suppressions.checkMany('acme', [])).toStrictEqual({ results: [] });
  });

  it('checks 100 addresses, one result per input in input order', async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'user3@example.com');
    await mailwarden.suppressions.add('acme', 'user99@example.com');
    const emails = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? `User${i}@Example.com` : `user${i}@example.com`));
    const { results } = await mailwarden.suppressions.checkMany('acme', emails);
    expect(results).toHaveLength(100);
    expect(results.map((result) => result.email)).toEqual(emails);
    expect(results.filter((result) => result.suppressed).map((result) => result.email)).toEqual([
      'user3@example.com',
      'user99@example.com',
    ]);
  });

  it("takes 1 000 addresses (the spec's 100 is the HTTP batch check's) and rejects 1 001 with batch_too_large", async () => {
    const { mailwarden } = setup();
    const emails = Array.from({ length: 1001 }, (_, i) => `user${i}@example.com`);
    expect((await mailwarden.suppressions.checkMany('acme', emails.slice(0, 1000))).results).toHaveLength(1000);
    const error = await expectMailwardenError(() => mailwarden.suppressions.checkMany('acme', emails), 'batch_too_large');
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ max: 1000, received: 1001 });
  });

  it('rejects a batch with invalid entries, listing each { index, email }', async () => {
    const { mailwarden } = setup();
    const emails = ['ok@example.com', 'bad', 'also@bad', 'fine@example.org', '', 'a..b@example.com'];
    const error = await expectMailwardenError(() => mailwarden.suppressions.checkMany('acme', emails), 'invalid_email');
    expect(error.status).toBe(400);
    expect(error.details).toEqual([
      { index: 1, email: 'bad', reason: expect.any(String) },
      { index: 2, email: 'also@bad', reason: expect.any(String) },
      { index: 4, email: '', reason: expect.any(String) },
      { index: 5, email: 'a..b@example.com', reason: expect.any(String) },
    ]);
  });

  it('gives duplicates each a result, in input order, echoed as given', async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'a@example.com');
    await mailwarden.applyEvents('acme', [event({ eventKey: 'b1', recipient: 'b@example.com', type: 'bounced', bounceClass: 'hard' })]);
    const emails = ['A@example.com', 'c@example.com', 'a@example.com', 'b@example.com', 'A@example.com', 'c@example.com'];
    expect(await mailwarden.suppressions.checkMany('acme', emails)).toStrictEqual({
      results: [
        { email: 'A@example.com', suppressed: true, reason: 'manual' },
        { email: 'c@example.com', suppressed: false },
        { email: 'a@example.com', suppressed: true, reason: 'manual' },
        { email: 'b@example.com', suppressed: true, reason: 'hard_bounce' },
        { email: 'A@example.com', suppressed: true, reason: 'manual' },
        { email: 'c@example.com', suppressed: false },
      ],
    });
  });

  it('rejects a batch that is not an array', async () => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.suppressions.checkMany('acme', 'a@example.com' as unknown as string[]), 'invalid_request');
  });
});

describe('suppressions.add', () => {
  it('creates a manual suppression, then returns it unchanged with created false', async () => {
    const context = setup();
    context.advance(1000);
    const first = await context.mailwarden.suppressions.add('acme', ' Jane@Example.com ');
    expect(first).toStrictEqual({
      created: true,
      suppression: {
        hash: sha256('jane@example.com'),
        email: 'jane@example.com',
        reason: 'manual',
        created_at: new Date(T0 + 1000).toISOString(),
        source: 'api',
        cause: null,
      },
    });
    context.advance(60_000);
    const again = await context.mailwarden.suppressions.add('acme', 'JANE@example.com');
    expect(again).toStrictEqual({ created: false, suppression: first.suppression });
    expect((await context.mailwarden.suppressions.list('acme')).items).toStrictEqual([first.suppression]);
  });

  it('does not downgrade an address suppressed for a complaint', async () => {
    const context = setup();
    await context.mailwarden.applyEvents('acme', [event({ eventKey: 'c1', type: 'complained', occurredAt: new Date(T0 + 7) })]);
    context.advance(10_000);
    const result = await context.mailwarden.suppressions.add('acme', 'jane@example.com');
    expect(result).toStrictEqual({
      created: false,
      suppression: {
        hash: sha256('jane@example.com'),
        email: 'jane@example.com',
        reason: 'complaint',
        created_at: new Date(T0 + 7).toISOString(),
        // The existing suppression, provenance and all: the add changes nothing.
        source: 'webhook',
        cause: {
          provider: 'ses',
          message_id: 'msg-1',
          message: messageKey('ses', 'msg-1', 'jane@example.com'),
          event_id: timelineEntryId('ses:c1'),
          event_at: new Date(T0 + 7).toISOString(),
          diagnostic: null,
        },
      },
    });
    expect(await context.mailwarden.suppressions.check('acme', 'jane@example.com')).toMatchObject({ reason: 'complaint' });
  });

  it('is upgraded by a later hard bounce, keeping created_at; the cause becomes the bounce', async () => {
    const context = setup();
    context.advance(1000);
    const { suppression } = await context.mailwarden.suppressions.add('acme', 'jane@example.com');
    await context.mailwarden.applyEvents('acme', [
      event({ eventKey: 'b1', type: 'bounced', bounceClass: 'hard', occurredAt: new Date(T0 + 50_000) }),
    ]);
    expect((await context.mailwarden.suppressions.list('acme')).items).toStrictEqual([
      {
        ...suppression,
        reason: 'hard_bounce',
        source: 'webhook',
        cause: {
          provider: 'ses',
          message_id: 'msg-1',
          message: messageKey('ses', 'msg-1', 'jane@example.com'),
          event_id: timelineEntryId('ses:b1'),
          event_at: new Date(T0 + 50_000).toISOString(),
          diagnostic: null,
        },
      },
    ]);
  });

  it('throws invalid_email for an invalid address and stores nothing', async () => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.suppressions.add('acme', 'jane@localhost'), 'invalid_email');
    expect((await mailwarden.suppressions.list('acme')).count).toBe(0);
  });
});

describe('suppressions.remove', () => {
  it('removes by hash, then reports suppression_not_found', async () => {
    const { mailwarden } = setup();
    const { suppression } = await mailwarden.suppressions.add('acme', 'jane@example.com');
    await mailwarden.suppressions.add('acme', 'john@example.com');
    expect(await mailwarden.suppressions.remove('acme', suppression.hash)).toStrictEqual({ deleted: true, hash: suppression.hash });
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual({ email: 'jane@example.com', suppressed: false });
    expect((await mailwarden.suppressions.list('acme')).items.map((item) => item.email)).toEqual(['john@example.com']);
    const error = await expectMailwardenError(() => mailwarden.suppressions.remove('acme', suppression.hash), 'suppression_not_found');
    expect(error.status).toBe(404);
  });

  it('lets an address be added again after removal, as a new suppression', async () => {
    const context = setup();
    const { suppression } = await context.mailwarden.suppressions.add('acme', 'jane@example.com');
    await context.mailwarden.suppressions.remove('acme', suppression.hash);
    context.advance(5000);
    const again = await context.mailwarden.suppressions.add('acme', 'jane@example.com');
    expect(again.created).toBe(true);
    expect(again.suppression.created_at).toBe(new Date(T0 + 5000).toISOString());
  });

  it('accepts an upper-case hash and answers with the lower-case one', async () => {
    const { mailwarden } = setup();
    const { suppression } = await mailwarden.suppressions.add('acme', 'jane@example.com');
    expect(await mailwarden.suppressions.remove('acme', suppression.hash.toUpperCase())).toStrictEqual({
      deleted: true,
      hash: suppression.hash,
    });
    expect((await mailwarden.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(false);
  });

  it.each([
    ['too short', 'abc'],
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['not hexadecimal', 'g'.repeat(64)],
    ['empty', ''],
    ['an email address', 'jane@example.com'],
  ])('rejects a hash that is %s with invalid_request', async (_, hash) => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.suppressions.remove('acme', hash), 'invalid_request');
  });

  it('reports suppression_not_found for a well-formed hash that is not there, or is in another project', async () => {
    const { mailwarden } = setup();
    const { suppression } = await mailwarden.suppressions.add('acme', 'jane@example.com');
    await expectMailwardenError(() => mailwarden.suppressions.remove('acme', sha256('nobody@example.com')), 'suppression_not_found');
    await expectMailwardenError(() => mailwarden.suppressions.remove('other', suppression.hash), 'suppression_not_found');
    expect((await mailwarden.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(true);
  });
});

describe('project ids', () => {
  const hash = sha256('jane@example.com');
  const calls: [string, (mailwarden: Mailwarden, projectId: string) => Promise<unknown>][] = [
    ['suppressions.list', (m, p) => m.suppressions.list(p)],
    ['suppressions.check', (m, p) => m.suppressions.check(p, 'jane@example.com')],
    ['suppressions.checkMany', (m, p) => m.suppressions.checkMany(p, ['jane@example.com'])],
    ['suppressions.add', (m, p) => m.suppressions.add(p, 'jane@example.com')],
    ['suppressions.remove', (m, p) => m.suppressions.remove(p, hash)],
    ['messages.list', (m, p) => m.messages.list(p)],
    ['trackingIds.list', (m, p) => m.trackingIds.list(p)],
    ['applyEvents', (m, p) => m.applyEvents(p, [])],
    ['filterSuppressed', (m, p) => m.filterSuppressed(p, ['jane@example.com'])],
  ];

  it.each(['', 'has space', '-leading-dash', '.leading-dot', 'a'.repeat(65), 'a/b', 'acme:1', 'ünïcode', 'a\nb'])(
    'rejects %j with invalid_request everywhere',
    async (projectId) => {
      const { mailwarden } = setup();
      for (const [name, call] of calls) {
        const error = await expectMailwardenError(() => call(mailwarden, projectId), 'invalid_request');
        expect(error.status, name).toBe(400);
      }
    },
  );

  it.each(['a', 'a'.repeat(64), 'Acme.prod_EU-1', '0'])('accepts %j', async (projectId) => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add(projectId, 'jane@example.com');
    expect((await mailwarden.suppressions.list(projectId)).count).toBe(1);
  });
});

describe('hashKey', () => {
  const hmac = (key: string, email: string) => createHmac('sha256', key).update(email).digest('hex');

  it('changes every hash the service shows and accepts, consistently', async () => {
    const store = createMemoryStore();
    const keyed = createMailwarden({ store, hashKey: 'pepper' });
    const expected = hmac('pepper', 'jane@example.com');
    expect(keyed.suppressions.hashOf('Jane@Example.com')).toBe(expected);
    const { suppression } = await keyed.suppressions.add('acme', 'Jane@Example.com');
    expect(suppression.hash).toBe(expected);
    expect((await keyed.suppressions.list('acme')).items.map((item) => item.hash)).toEqual([expected]);
    expect((await keyed.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(true);
    expect((await keyed.suppressions.checkMany('acme', ['jane@example.com'])).results[0]!.suppressed).toBe(true);
    expect((await keyed.filterSuppressed('acme', ['jane@example.com'])).allowed).toEqual([]);

    // Automatic suppressions are hashed the same way.
    await keyed.applyEvents('acme', [event({ eventKey: 'c1', recipient: 'JOHN@example.com', type: 'complained' })]);
    expect((await keyed.suppressions.list('acme')).items.map((item) => item.hash)).toContain(hmac('pepper', 'john@example.com'));

    // The plain SHA-256 is not the hash of this store's entries.
    await expectMailwardenError(() => keyed.suppressions.remove('acme', sha256('jane@example.com')), 'suppression_not_found');
    expect(await keyed.suppressions.remove('acme', expected)).toStrictEqual({ deleted: true, hash: expected });
  });

  it('gives different hashes under different keys, so instances must share one', async () => {
    const store = createMemoryStore();
    const one = createMailwarden({ store, hashKey: 'one' });
    const two = createMailwarden({ store, hashKey: 'two' });
    const plain = createMailwarden({ store });
    await one.suppressions.add('acme', 'jane@example.com');
    expect(two.suppressions.hashOf('jane@example.com')).not.toBe(one.suppressions.hashOf('jane@example.com'));
    expect(plain.suppressions.hashOf('jane@example.com')).toBe(sha256('jane@example.com'));
    expect((await two.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(false);
    expect((await plain.suppressions.check('acme', 'jane@example.com')).suppressed).toBe(false);
    expect((await createMailwarden({ store, hashKey: 'one' }).suppressions.check('acme', 'jane@example.com')).suppressed).toBe(true);
  });

  it('throws invalid_email from hashOf for an invalid address', async () => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.suppressions.hashOf('nope'), 'invalid_email');
  });
});
