// Paused streams in process (docs/core.md, "Paused streams"): an operator pauses and resumes a stream,
// and the send gate blocks every recipient of a send in a paused stream, reading nothing more for a
// send without a stream.
import { createMailwarden, createMemoryStore, MailwardenError, type Store } from '@mailwarden/core';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.UTC(2026, 10, 1, 9);

/** A memory store counting `listPausedStreams` reads, failing them while `failing` is set. */
function countingStore() {
  const inner = createMemoryStore();
  const state = { reads: 0, failing: false };
  const store: Store = {
    ...inner,
    async listPausedStreams(projectId) {
      state.reads++;
      if (state.failing) throw new MailwardenError('store_unavailable', 'The store cannot be reached.');
      return inner.listPausedStreams(projectId);
    },
  };
  return { store, state };
}

describe('streams', () => {
  test('pause, pause again, list, resume, resume again', async () => {
    const clock = { now: T0 };
    const mailwarden = createMailwarden({ now: () => clock.now });
    const paused = { stream: 'marketing', paused_at: new Date(T0).toISOString(), cause: 'operator' };
    expect(await mailwarden.streams.pause('acme', 'marketing')).toEqual({ paused, created: true });
    clock.now += 1000;
    // Already paused: the stored pause is answered, its time kept.
    expect(await mailwarden.streams.pause('acme', 'marketing')).toEqual({ paused, created: false });
    expect(await mailwarden.streams.listPaused('acme')).toEqual({ items: [paused] });
    expect(await mailwarden.streams.listPaused('other')).toEqual({ items: [] });
    expect(await mailwarden.streams.resume('acme', 'marketing')).toEqual({ stream: 'marketing', resumed: true });
    expect(await mailwarden.streams.resume('acme', 'marketing')).toEqual({ stream: 'marketing', resumed: false });
    expect(await mailwarden.streams.listPaused('acme')).toEqual({ items: [] });
  });

  test('a name that cannot be a stream: invalid_stream', async () => {
    const mailwarden = createMailwarden();
    await expectMailwardenError(() => mailwarden.streams.pause('acme', 'Marketing'), 'invalid_stream');
    await expectMailwardenError(() => mailwarden.streams.resume('acme', ''), 'invalid_stream');
  });
});

describe('the send gate and paused streams', () => {
  test('a paused stream blocks every valid recipient; other streams and sends without one are unaffected', async () => {
    const { store, state } = countingStore();
    const mailwarden = createMailwarden({ store });
    await mailwarden.suppressions.add('acme', 'gone@example.com');
    await mailwarden.streams.pause('acme', 'marketing');
    const recipients = ['a@example.com', 'not an address', 'gone@example.com'];
    expect(await mailwarden.filterSuppressed('acme', recipients, { stream: 'marketing' })).toEqual({
      allowed: [],
      blocked: [
        { email: 'a@example.com', reason: 'stream_paused' },
        { email: 'not an address', reason: 'invalid_email' },
        { email: 'gone@example.com', reason: 'stream_paused' },
      ],
    });
    const reads = state.reads;
    const unaffected = {
      allowed: ['a@example.com'],
      blocked: [recipients.slice(1).map((email, i) => ({ email, reason: i === 0 ? 'invalid_email' : 'manual' }))].flat(),
    };
    expect(await mailwarden.filterSuppressed('acme', recipients, { stream: 'news' })).toEqual(unaffected);
    expect(state.reads).toBe(reads + 1);
    expect(await mailwarden.filterSuppressed('acme', recipients)).toEqual(unaffected);
    // A send without a stream reads nothing new.
    expect(state.reads).toBe(reads + 1);
    expect(await mailwarden.filterSuppressed('other', ['a@example.com'], { stream: 'marketing' })).toEqual({
      allowed: ['a@example.com'],
      blocked: [],
    });
  });

  test('a failed read of the paused streams follows onError', async () => {
    const { store, state } = countingStore();
    const mailwarden = createMailwarden({ store });
    await mailwarden.suppressions.add('acme', 'gone@example.com');
    state.failing = true;
    const open = await mailwarden.filterSuppressed('acme', ['a@example.com', 'gone@example.com'], { stream: 'marketing' });
    expect(open).toMatchObject({ allowed: ['a@example.com'], blocked: [{ email: 'gone@example.com', reason: 'manual' }] });
    expect(open.error).toBeInstanceOf(MailwardenError);
    const closed = await mailwarden.filterSuppressed('acme', ['a@example.com', 'gone@example.com'], {
      stream: 'marketing',
      onError: 'closed',
    });
    expect(closed).toMatchObject({
      allowed: [],
      blocked: [
        { email: 'a@example.com', reason: 'check_failed' },
        { email: 'gone@example.com', reason: 'manual' },
      ],
    });
  });
});
