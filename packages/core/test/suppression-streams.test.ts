import { describe, expect, it } from 'vitest';
import { createMailwarden, type MailwardenOptions } from '@mailwarden/core';
import { expectMailwardenError } from './expect-mailwarden-error.js';

// The service's lists per stream (docs/core.md, "Streams"): answers without a stream are the spec's,
// with one they say which list holds an address.

const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const ISO_T0 = '2026-11-01T00:00:00.000Z';

function setup(options: MailwardenOptions = {}) {
  let time = T0;
  const mailwarden = createMailwarden({ ...options, now: () => time });
  return {
    mailwarden,
    advance(ms = 1000) {
      time += ms;
    },
  };
}

const invalidStreams = ['', 'Marketing', '-x', '_x', 'a b', 'a'.repeat(65), 'ü', 'a/b'];

describe('suppressions in a stream', () => {
  it('add answers with "stream" last; the project-wide answer has no stream key', async () => {
    const { mailwarden } = setup();
    const inStream = await mailwarden.suppressions.add('acme', 'Jane@Example.com', { stream: 'marketing', source: 'unsubscribe' });
    expect(inStream.created).toBe(true);
    expect(Object.keys(inStream.suppression)).toStrictEqual(['hash', 'email', 'reason', 'created_at', 'source', 'cause', 'stream']);
    expect(inStream.suppression).toMatchObject({
      email: 'jane@example.com',
      reason: 'manual',
      source: 'unsubscribe',
      cause: null,
      stream: 'marketing',
    });
    // Another list: created again, independently.
    const wide = await mailwarden.suppressions.add('acme', 'jane@example.com');
    expect(wide.created).toBe(true);
    expect(Object.keys(wide.suppression)).toStrictEqual(['hash', 'email', 'reason', 'created_at', 'source', 'cause']);
    expect((await mailwarden.suppressions.add('acme', 'jane@example.com', { stream: 'marketing' })).created).toBe(false);
  });

  it('a check without a stream sees only the project-wide list, as before', async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'jane@example.com', { stream: 'marketing' });
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com')).toStrictEqual({ email: 'jane@example.com', suppressed: false });
    expect(await mailwarden.suppressions.checkMany('acme', ['jane@example.com'])).toStrictEqual({
      results: [{ email: 'jane@example.com', suppressed: false }],
    });
  });

  it("a check with a stream answers from that stream's list, else not suppressed, and says which list", async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'jane@example.com', { stream: 'marketing', source: 'unsubscribe' });
    expect(await mailwarden.suppressions.check('acme', 'Jane@example.com', { stream: 'marketing' })).toStrictEqual({
      email: 'Jane@example.com',
      suppressed: true,
      reason: 'manual',
      created_at: ISO_T0,
      source: 'unsubscribe',
      cause: null,
      stream: 'marketing',
    });
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com', { stream: 'weekly-digest' })).toStrictEqual({
      email: 'jane@example.com',
      suppressed: false,
    });
  });

  it('the project-wide entry answers a check for every stream, and when both lists hold the address', async () => {
    const context = setup();
    const { mailwarden } = context;
    await mailwarden.suppressions.add('acme', 'jane@example.com', { stream: 'marketing' });
    context.advance();
    await mailwarden.suppressions.addMany('acme', [{ email: 'jane@example.com', reason: 'hard_bounce' }]);
    const wide = {
      email: 'jane@example.com',
      suppressed: true,
      reason: 'hard_bounce',
      created_at: '2026-11-01T00:00:01.000Z',
      source: 'api',
      cause: null,
      stream: null,
    };
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com', { stream: 'marketing' })).toStrictEqual(wide);
    expect(await mailwarden.suppressions.check('acme', 'jane@example.com', { stream: 'x-1' })).toStrictEqual(wide);
    expect(await mailwarden.suppressions.checkMany('acme', ['jane@example.com', 'bob@example.com'], { stream: 'marketing' })).toStrictEqual(
      {
        results: [
          { email: 'jane@example.com', suppressed: true, reason: 'hard_bounce', stream: null },
          { email: 'bob@example.com', suppressed: false },
        ],
      },
    );
    // Removed from the project-wide list, the stream's entry answers.
    await mailwarden.suppressions.removeMany('acme', [{ email: 'jane@example.com' }]);
    expect(await mailwarden.suppressions.checkMany('acme', ['jane@example.com'], { stream: 'marketing' })).toStrictEqual({
      results: [{ email: 'jane@example.com', suppressed: true, reason: 'manual', stream: 'marketing' }],
    });
  });

  it('lists one list at a time, with its own cursor', async () => {
    const context = setup();
    const { mailwarden } = context;
    for (const name of ['a', 'b', 'c']) {
      context.advance();
      await mailwarden.suppressions.add('acme', `${name}@example.com`, { stream: 'marketing' });
    }
    await mailwarden.suppressions.add('acme', 'wide@example.com');
    const first = await mailwarden.suppressions.list('acme', { stream: 'marketing', limit: 2 });
    expect(first.items.map((item) => [item.email, item.stream])).toStrictEqual([
      ['c@example.com', 'marketing'],
      ['b@example.com', 'marketing'],
    ]);
    const second = await mailwarden.suppressions.list('acme', { stream: 'marketing', limit: 2, cursor: first.next_cursor! });
    expect(second.items.map((item) => item.email)).toStrictEqual(['a@example.com']);
    expect(second.next_cursor).toBeNull();
    // A cursor belongs to its list: not valid for the project-wide one, nor another stream's.
    await expectMailwardenError(() => mailwarden.suppressions.list('acme', { limit: 2, cursor: first.next_cursor! }), 'invalid_cursor');
    await expectMailwardenError(
      () => mailwarden.suppressions.list('acme', { stream: 'weekly-digest', limit: 2, cursor: first.next_cursor! }),
      'invalid_cursor',
    );
    // Project-wide: no stream key, nothing of the stream's list; an empty stream is the project-wide list.
    const wide = await mailwarden.suppressions.list('acme');
    expect(wide.items.map((item) => item.email)).toStrictEqual(['wide@example.com']);
    expect(Object.keys(wide.items[0]!)).toStrictEqual(['hash', 'email', 'reason', 'created_at', 'source', 'cause']);
    expect(await mailwarden.suppressions.list('acme', { stream: '' })).toStrictEqual(wide);
  });

  it('removes from the named list only; 404 details name the stream', async () => {
    const { mailwarden } = setup();
    const { suppression } = await mailwarden.suppressions.add('acme', 'jane@example.com', { stream: 'marketing' });
    await mailwarden.suppressions.add('acme', 'jane@example.com');
    expect(await mailwarden.suppressions.remove('acme', suppression.hash, { stream: 'marketing' })).toStrictEqual({
      deleted: true,
      hash: suppression.hash,
      stream: 'marketing',
    });
    const error = await expectMailwardenError(
      () => mailwarden.suppressions.remove('acme', suppression.hash.toUpperCase(), { stream: 'marketing' }),
      'suppression_not_found',
    );
    expect(error.status).toBe(404);
    expect(error.details).toStrictEqual({ hash: suppression.hash, stream: 'marketing' });
    // The project-wide entry is still there, and removing it answers as before.
    expect(await mailwarden.suppressions.remove('acme', suppression.hash)).toStrictEqual({ deleted: true, hash: suppression.hash });
  });

  it('bulk add and bulk remove apply to the stream of the call; results keep their shape', async () => {
    const { mailwarden } = setup();
    const items = [{ email: 'a@example.com', reason: 'complaint' as const }, { email: 'b@example.com' }, { email: 'bad' }];
    const { results } = await mailwarden.suppressions.addMany('acme', items, { stream: 'weekly-digest', source: 'unsubscribe' });
    expect(results.map((result) => result.status)).toStrictEqual(['created', 'created', 'invalid']);
    const listed = await mailwarden.suppressions.list('acme', { stream: 'weekly-digest' });
    expect(listed.items.map((item) => [item.email, item.reason, item.source, item.stream]).sort()).toStrictEqual([
      ['a@example.com', 'complaint', 'unsubscribe', 'weekly-digest'],
      ['b@example.com', 'manual', 'unsubscribe', 'weekly-digest'],
    ]);
    expect((await mailwarden.suppressions.list('acme')).items).toStrictEqual([]);
    // Again in the same stream: present; in the project-wide list: created.
    expect((await mailwarden.suppressions.addMany('acme', items.slice(0, 1), { stream: 'weekly-digest' })).results[0]!.status).toBe(
      'present',
    );
    expect((await mailwarden.suppressions.addMany('acme', items.slice(0, 1))).results[0]!.status).toBe('created');
    const removed = await mailwarden.suppressions.removeMany('acme', [{ email: 'a@example.com' }, { email: 'b@example.com' }], {
      stream: 'weekly-digest',
    });
    expect(removed.results.map((result) => ('deleted' in result ? result.deleted : null))).toStrictEqual([true, true]);
    expect((await mailwarden.suppressions.list('acme', { stream: 'weekly-digest' })).items).toStrictEqual([]);
    expect((await mailwarden.suppressions.list('acme')).items.map((item) => item.email)).toStrictEqual(['a@example.com']);
  });

  it.each(invalidStreams)('refuses the stream %j with invalid_stream (400) everywhere and writes nothing', async (stream) => {
    const { mailwarden } = setup();
    const hash = mailwarden.suppressions.hashOf('jane@example.com');
    const calls: (() => Promise<unknown>)[] = [
      () => mailwarden.suppressions.check('acme', 'jane@example.com', { stream }),
      () => mailwarden.suppressions.checkMany('acme', ['jane@example.com'], { stream }),
      () => mailwarden.suppressions.add('acme', 'jane@example.com', { stream }),
      () => mailwarden.suppressions.addMany('acme', [{ email: 'jane@example.com' }], { stream }),
      () => mailwarden.suppressions.remove('acme', hash, { stream }),
      () => mailwarden.suppressions.removeMany('acme', [{ hash }], { stream }),
      () => mailwarden.filterSuppressed('acme', ['jane@example.com'], { stream }),
    ];
    // The listing takes an empty stream as none (as its other filters); every other invalid name is refused.
    if (stream !== '') calls.push(() => mailwarden.suppressions.list('acme', { stream }));
    for (const call of calls) expect((await expectMailwardenError(call, 'invalid_stream')).status).toBe(400);
    expect((await mailwarden.suppressions.list('acme')).items).toStrictEqual([]);
  });

  it('the send gate blocks by the project-wide list and the stream of the send', async () => {
    const { mailwarden } = setup();
    await mailwarden.suppressions.add('acme', 'unsubscribed@example.com', { stream: 'marketing', source: 'unsubscribe' });
    await mailwarden.suppressions.addMany('acme', [{ email: 'bounced@example.com', reason: 'hard_bounce' }]);
    const recipients = ['unsubscribed@example.com', 'bounced@example.com', 'ok@example.com', 'nope'];
    expect(await mailwarden.filterSuppressed('acme', recipients)).toStrictEqual({
      allowed: ['unsubscribed@example.com', 'ok@example.com'],
      blocked: [
        { email: 'bounced@example.com', reason: 'hard_bounce' },
        { email: 'nope', reason: 'invalid_email' },
      ],
    });
    expect(await mailwarden.filterSuppressed('acme', recipients, { stream: 'marketing' })).toStrictEqual({
      allowed: ['ok@example.com'],
      blocked: [
        { email: 'unsubscribed@example.com', reason: 'manual' },
        { email: 'bounced@example.com', reason: 'hard_bounce' },
        { email: 'nope', reason: 'invalid_email' },
      ],
    });
    expect((await mailwarden.filterSuppressed('acme', recipients, { stream: 'weekly-digest' })).allowed).toStrictEqual([
      'unsubscribed@example.com',
      'ok@example.com',
    ]);
  });
});
