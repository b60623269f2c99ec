import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMailwarden, type DeliveryEvent } from '@mailwarden/core';
import { createCursorCodec, type CursorScope } from '@mailwarden/core/store';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const scope: CursorScope = { listing: 'messages', projectId: 'acme', filters: { trackingId: 'spring', status: undefined } };
const position = z.object({ t: z.int(), k: z.string() });
const at = { t: 1_717_000_000_000, k: '0123456789abcdef0123456789abcdef' };
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every cursor that differs from `cursor` in one base64url character. */
function oneCharacterChanges(cursor: string): string[] {
  const changed: string[] = [];
  for (let i = 0; i < cursor.length; i++) {
    if (cursor[i] === '.') continue;
    const replacement = BASE64URL[(BASE64URL.indexOf(cursor[i]!) + 1) % BASE64URL.length]!;
    changed.push(cursor.slice(0, i) + replacement + cursor.slice(i + 1));
  }
  return changed;
}

describe('cursor codec without a secret', () => {
  const codec = createCursorCodec();

  it('round-trips a position as opaque base64url text', () => {
    const cursor = codec.encode(scope, at);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(scope, cursor, position)).toEqual(at);
  });

  it('round-trips positions holding any text', () => {
    const text = z.object({ i: z.string() });
    for (const i of ['spring', 'Été 2024 — 春', '\u{1F600}'.repeat(128), '"quoted" \\ slash', '.']) {
      expect(codec.decode(scope, codec.encode(scope, { i }), text)).toEqual({ i });
    }
  });

  it('is decoded by another codec without a secret (cursors survive across instances)', () => {
    expect(createCursorCodec().decode(scope, codec.encode(scope, at), position)).toEqual(at);
  });

  it.each<[string, CursorScope]>([
    ['another listing', { ...scope, listing: 'suppressions' }],
    ['another project', { ...scope, projectId: 'other' }],
    ['another filter value', { ...scope, filters: { trackingId: 'summer', status: undefined } }],
    ['a filter added', { ...scope, filters: { trackingId: 'spring', status: 'delivered' } }],
    ['a filter removed', { ...scope, filters: { trackingId: undefined, status: undefined } }],
    ['a filter that only differs in case', { ...scope, filters: { trackingId: 'Spring', status: undefined } }],
  ])('rejects a cursor used in %s', async (_, other) => {
    const cursor = codec.encode(scope, at);
    const error = await expectMailwardenError(() => codec.decode(other, cursor, position), 'invalid_cursor');
    expect(error.status).toBe(400);
  });

  it('does not depend on the order filters are written in', () => {
    const cursor = codec.encode({ ...scope, filters: { a: '1', b: '2' } }, at);
    expect(codec.decode({ ...scope, filters: { b: '2', a: '1' } }, cursor, position)).toEqual(at);
  });

  it('rejects a position of the wrong shape', async () => {
    const cursor = codec.encode(scope, { something: 'else' });
    await expectMailwardenError(() => codec.decode(scope, cursor, position), 'invalid_cursor');
  });

  it('rejects a signed cursor', async () => {
    const signed = createCursorCodec('secret').encode(scope, at);
    await expectMailwardenError(() => codec.decode(scope, signed, position), 'invalid_cursor');
  });

  it.each([
    ['an empty string', ''],
    ['text with characters outside base64url', 'abc+/='],
    ['white space', ' abc'],
    ['base64url that is not JSON', Buffer.from('not json').toString('base64url')],
    ['JSON of another shape', Buffer.from('{"a":1}').toString('base64url')],
    ['JSON of another version', Buffer.from(JSON.stringify([2, 'tag', { t: 1, k: 'x' }])).toString('base64url')],
    ['a signature of the wrong length', `${Buffer.from('[1]').toString('base64url')}.abc`],
    ['two dots', 'abc.def.ghi'],
  ])('rejects %s', async (_, cursor) => {
    await expectMailwardenError(() => codec.decode(scope, cursor, position), 'invalid_cursor');
  });

  it('rejects an over-long cursor, even one it made itself', async () => {
    const text = z.object({ i: z.string() });
    const long = codec.encode(scope, { i: 'x'.repeat(10_000) });
    await expectMailwardenError(() => codec.decode(scope, long, text), 'invalid_cursor');
    await expectMailwardenError(() => codec.decode(scope, 'A'.repeat(10_000), text), 'invalid_cursor');
  });

  it('accepts the longest cursor a listing makes: a 128-code-point tracking ID that JSON escapes', () => {
    const text = z.object({ i: z.string() });
    for (const i of ['\u0001'.repeat(128), '"'.repeat(128), '\u{10FFFF}'.repeat(128)]) {
      for (const each of [codec, createCursorCodec('secret')]) {
        expect(each.decode(scope, each.encode(scope, { i }), text)).toEqual({ i });
      }
    }
  });
});

describe('cursor codec with a secret', () => {
  const codec = createCursorCodec('cursor secret');

  it('round-trips a position and carries a signature', () => {
    const cursor = codec.encode(scope, at);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(codec.decode(scope, cursor, position)).toEqual(at);
    expect(createCursorCodec('cursor secret').decode(scope, cursor, position)).toEqual(at);
  });

  it('accepts a binary secret', () => {
    const binary = createCursorCodec(new Uint8Array([9, 8, 7]));
    expect(binary.decode(scope, binary.encode(scope, at), position)).toEqual(at);
  });

  it('rejects every cursor with one character changed, in the body or in the signature', async () => {
    const cursor = codec.encode(scope, at);
    const changes = oneCharacterChanges(cursor);
    expect(changes.length).toBe(cursor.length - 1);
    for (const tampered of changes) {
      await expectMailwardenError(() => codec.decode(scope, tampered, position), 'invalid_cursor');
    }
  });

  it('rejects a cursor whose position was rewritten by the client', async () => {
    const cursor = codec.encode(scope, at);
    const [body = ''] = cursor.split('.');
    const [version, tag] = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as [number, string, unknown];
    const forgedBody = Buffer.from(JSON.stringify([version, tag, { ...at, t: 0 }])).toString('base64url');
    await expectMailwardenError(() => codec.decode(scope, `${forgedBody}.${cursor.split('.')[1]}`, position), 'invalid_cursor');
  });

  it('rejects an unsigned cursor', async () => {
    const unsigned = createCursorCodec().encode(scope, at);
    await expectMailwardenError(() => codec.decode(scope, unsigned, position), 'invalid_cursor');
    const [body = ''] = codec.encode(scope, at).split('.');
    await expectMailwardenError(() => codec.decode(scope, body, position), 'invalid_cursor');
  });

  it('rejects a cursor signed with another secret', async () => {
    const foreign = createCursorCodec('another secret').encode(scope, at);
    await expectMailwardenError(() => codec.decode(scope, foreign, position), 'invalid_cursor');
  });

  it('still binds the cursor to its scope', async () => {
    const cursor = codec.encode(scope, at);
    await expectMailwardenError(() => codec.decode({ ...scope, projectId: 'other' }, cursor, position), 'invalid_cursor');
  });
});

describe('cursors through the service', () => {
  const T0 = Date.parse('2024-05-01T00:00:00.000Z');
  let sequence = 0;
  const event = (overrides: Partial<DeliveryEvent>): DeliveryEvent => {
    sequence++;
    return {
      provider: 'ses',
      type: 'delivered',
      messageId: `m-${sequence}`,
      recipient: `user${sequence}@example.com`,
      trackingId: 'spring',
      occurredAt: new Date(T0 + sequence * 1000),
      eventKey: `e-${sequence}`,
      ...overrides,
    };
  };

  async function seeded(options: Parameters<typeof createMailwarden>[0] = {}) {
    let time = T0;
    const mailwarden = createMailwarden({ ...options, now: () => (time += 1000) });
    for (const projectId of ['acme', 'other']) {
      for (let i = 0; i < 5; i++) await mailwarden.suppressions.add(projectId, `user${i}@example.com`);
    }
    await mailwarden.applyEvents('acme', [
      ...Array.from({ length: 4 }, () => event({ trackingId: 'spring' })),
      ...Array.from({ length: 4 }, () => event({ trackingId: 'summer' })),
      ...Array.from({ length: 4 }, () => event({ trackingId: 'spring', type: 'bounced', bounceClass: 'hard' })),
    ]);
    return mailwarden;
  }

  it('continues a suppression listing in its own project only', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.suppressions.list('acme', { limit: 2 });
    expect(first.next_cursor).not.toBeNull();
    const cursor = first.next_cursor!;
    expect((await mailwarden.suppressions.list('acme', { limit: 2, cursor })).count).toBe(2);
    await expectMailwardenError(() => mailwarden.suppressions.list('other', { limit: 2, cursor }), 'invalid_cursor');
  });

  it('continues a message listing with its own filters only', async () => {
    const mailwarden = await seeded();
    const first = await mailwarden.messages.list('acme', { trackingId: 'spring', limit: 2 });
    const cursor = first.next_cursor!;
    expect(cursor).toEqual(expect.any(String));
    const second = await mailwarden.messages.list('acme', { trackingId: 'spring', limit: 2, cursor });
    expect(second.items.every((message) => message.trackingId === 'spring')).toBe(true);
    for (const query of [
      { trackingId: 'summer', limit: 2, cursor },
      { limit: 2, cursor },
      { trackingId: 'spring', status: 'bounced' as const, limit: 2, cursor },
    ]) {
      await expectMailwardenError(() => mailwarden.messages.list('acme', query), 'invalid_cursor');
    }
    await expectMailwardenError(() => mailwarden.messages.list('other', { trackingId: 'spring', limit: 2, cursor }), 'invalid_cursor');
  });

  it('rejects a cursor of one listing in another', async () => {
    const mailwarden = await seeded();
    const suppressionCursor = (await mailwarden.suppressions.list('acme', { limit: 1 })).next_cursor!;
    const messageCursor = (await mailwarden.messages.list('acme', { limit: 1 })).next_cursor!;
    const trackingIdCursor = (await mailwarden.trackingIds.list('acme', { limit: 1 })).next_cursor!;
    for (const cursor of [suppressionCursor, messageCursor, trackingIdCursor]) expect(cursor).toEqual(expect.any(String));
    await expectMailwardenError(() => mailwarden.messages.list('acme', { cursor: suppressionCursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { cursor: messageCursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { cursor: messageCursor }), 'invalid_cursor');
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { cursor: trackingIdCursor }), 'invalid_cursor');
  });

  it('binds a tracking-ID cursor to its search', async () => {
    const mailwarden = await seeded();
    const cursor = (await mailwarden.trackingIds.list('acme', { limit: 1 })).next_cursor!;
    expect(cursor).toEqual(expect.any(String));
    await expectMailwardenError(() => mailwarden.trackingIds.list('acme', { search: 's', cursor }), 'invalid_cursor');
    // The search is case-insensitive, so a cursor of search "S" continues search "s".
    const searched = (await mailwarden.trackingIds.list('acme', { search: 'S', limit: 1 })).next_cursor!;
    expect((await mailwarden.trackingIds.list('acme', { search: 's', cursor: searched })).items).toHaveLength(1);
  });

  it('rejects tampered and unsigned cursors when cursorSecret is set', async () => {
    const signed = await seeded({ cursorSecret: 'shh' });
    const cursor = (await signed.suppressions.list('acme', { limit: 2 })).next_cursor!;
    expect(cursor).toContain('.');
    expect((await signed.suppressions.list('acme', { limit: 2, cursor })).count).toBe(2);
    for (const tampered of oneCharacterChanges(cursor)) {
      await expectMailwardenError(() => signed.suppressions.list('acme', { limit: 2, cursor: tampered }), 'invalid_cursor');
    }
    const unsigned = (await (await seeded()).suppressions.list('acme', { limit: 2 })).next_cursor!;
    await expectMailwardenError(() => signed.suppressions.list('acme', { limit: 2, cursor: unsigned }), 'invalid_cursor');
  });

  it('rejects a signed cursor when no cursorSecret is set', async () => {
    const signed = await seeded({ cursorSecret: 'shh' });
    const cursor = (await signed.suppressions.list('acme', { limit: 2 })).next_cursor!;
    const plain = await seeded();
    await expectMailwardenError(() => plain.suppressions.list('acme', { limit: 2, cursor }), 'invalid_cursor');
  });

  it('pages tracking IDs of 128 code points that JSON escapes, with a signed cursor', async () => {
    const mailwarden = createMailwarden({ cursorSecret: 'shh' });
    const trackingIds = ['\u0001', '\u0002', '\u0003'].map((c) => c.repeat(128));
    await mailwarden.applyEvents(
      'acme',
      trackingIds.map((trackingId) => event({ trackingId })),
    );
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await mailwarden.trackingIds.list('acme', { limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      walked.push(...page.items.map((row) => row.trackingId));
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    expect(walked).toEqual(trackingIds);
  });

  it('rejects garbage and over-long cursors', async () => {
    const mailwarden = await seeded();
    for (const cursor of ['garbage!', 'A'.repeat(10_000), '', 'eyJ9']) {
      await expectMailwardenError(() => mailwarden.suppressions.list('acme', { cursor }), 'invalid_cursor');
      await expectMailwardenError(() => mailwarden.messages.list('acme', { cursor }), 'invalid_cursor');
    }
  });
});
