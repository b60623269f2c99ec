// The audit trail through the services and the HTTP routes (docs/core.md, "Actors"): every write names
// its actor in the feed (the calling key's over HTTP, the option in process, the provider's event, the
// unsubscribe token's stream), none when the caller named none; the feed filters by actor and address.
import {
  createHttpHandler,
  createMailwarden,
  createMemoryStore,
  parseActorFilter,
  type ChangeView,
  type DeliveryEvent,
  type HttpRequest,
} from '@mailwarden/core';
import { changeListSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.UTC(2026, 10, 1, 9);
const JANE_HASH_OF = (mailwarden: ReturnType<typeof createMailwarden>) => mailwarden.suppressions.hashOf('jane@example.com');

function feedMailwarden() {
  const clock = { now: T0, read: () => clock.now };
  const store = createMemoryStore({ changes: {} });
  const mailwarden = createMailwarden({
    store,
    now: clock.read,
    unsubscribeLinks: { secrets: ['a'.repeat(32)], baseUrl: 'https://mail.example.com' },
  });
  return { mailwarden, clock, store };
}

async function allChanges(mailwarden: ReturnType<typeof createMailwarden>, query: Parameters<typeof mailwarden.changes.list>[1] = {}) {
  const page = await mailwarden.changes.list('acme', { limit: 1000, ...query });
  expect(changeListSchema.parse(page)).toEqual(page);
  return page.items;
}
const actorsOf = (changes: readonly ChangeView[]) => changes.map((change) => [change.kind, change.actor]);

describe('actors in process', () => {
  test('each write method records its actor option; without one the change has no actor field', async () => {
    const { mailwarden } = feedMailwarden();
    const actor = 'key:ops';
    await mailwarden.suppressions.add('acme', 'jane@example.com', { actor });
    await mailwarden.suppressions.remove('acme', JANE_HASH_OF(mailwarden), { actor });
    await mailwarden.suppressions.addMany('acme', [{ email: 'john@example.com' }], { actor: 'import:2026-11-01T09:00:00.000Z-a1b2c3' });
    await mailwarden.suppressions.removeMany('acme', [{ email: 'john@example.com' }], { actor });
    await mailwarden.allowlist.add('acme', '@example.org', { actor });
    await mailwarden.allowlist.remove('acme', '@example.org', { actor });
    await mailwarden.streams.pause('acme', 'marketing', { actor });
    await mailwarden.streams.resume('acme', 'marketing', { actor });
    await mailwarden.suppressions.add('acme', 'nobody@example.com');
    const changes = await allChanges(mailwarden);
    expect(actorsOf(changes)).toEqual([
      ['suppression.added', 'key:ops'],
      ['suppression.removed', 'key:ops'],
      ['suppression.added', 'import:2026-11-01T09:00:00.000Z-a1b2c3'],
      ['suppression.removed', 'key:ops'],
      ['allowlist.added', 'key:ops'],
      ['allowlist.removed', 'key:ops'],
      ['stream.paused', 'key:ops'],
      ['stream.resumed', 'key:ops'],
      ['suppression.added', undefined],
    ]);
    // Absent, not undefined: a change without an actor is what it was before actors existed.
    expect('actor' in changes.at(-1)!).toBe(false);
    // Right after `at`: the fields before and after it keep their places.
    expect(Object.keys(changes[0]!)).toEqual(['id', 'seq', 'project', 'kind', 'at', 'actor', 'suppression']);
    expect(Object.keys(changes.at(-1)!)).toEqual(['id', 'seq', 'project', 'kind', 'at', 'suppression']);
  });

  test('a provider event is its webhook actor; a one-click unsubscribe its token stream', async () => {
    const { mailwarden } = feedMailwarden();
    const event: DeliveryEvent = {
      provider: 'ses',
      eventKey: 'e-1',
      type: 'complained',
      messageId: 'm-1',
      recipient: 'jane@example.com',
      trackingId: null,
      occurredAt: new Date(T0 - 1000),
    };
    await mailwarden.applyEvents('acme', [event]);
    const { url } = mailwarden.unsubscribeLinks.create('acme', { email: 'john@example.com', stream: 'news' });
    await mailwarden.unsubscribeLinks.unsubscribe('acme', url.slice(url.lastIndexOf('/') + 1));
    const wide = mailwarden.unsubscribeLinks.create('acme', { email: 'jim@example.com' }).url;
    await mailwarden.unsubscribeLinks.unsubscribe('acme', wide.slice(wide.lastIndexOf('/') + 1));
    const changes = await allChanges(mailwarden);
    expect(changes.filter((change) => change.kind === 'suppression.added').map((change) => change.actor)).toEqual([
      'webhook:ses:complained',
      'unsubscribe:news',
      'unsubscribe',
    ]);
    expect(changes.find((change) => change.kind === 'message.status_changed')?.actor).toBe('webhook:ses:complained');
  });

  test.each(['', 'key:', ':ops', 'key::ops', 'key ops', 3])(
    'an actor that cannot be one (%j) is invalid_request, nothing written',
    async (actor) => {
      const { mailwarden } = feedMailwarden();
      await expectMailwardenError(
        () => mailwarden.suppressions.add('acme', 'jane@example.com', { actor: actor as string }),
        'invalid_request',
      );
      expect(await allChanges(mailwarden)).toEqual([]);
    },
  );
});

describe('the feed filters', () => {
  async function trail() {
    const { mailwarden } = feedMailwarden();
    await mailwarden.suppressions.add('acme', 'jane@example.com', { actor: 'key:ops' });
    await mailwarden.suppressions.add('acme', 'john@example.com', { actor: 'key:opsx' });
    await mailwarden.suppressions.add('acme', 'jim@example.com', { actor: 'key:app' });
    await mailwarden.allowlist.add('acme', 'Jane@Example.com', { actor: 'key:app' });
    await mailwarden.suppressions.remove('acme', JANE_HASH_OF(mailwarden), { actor: 'key:ops' });
    await mailwarden.suppressions.add('acme', 'jane@example.com');
    return mailwarden;
  }
  const emailsOf = (changes: readonly ChangeView[]) =>
    changes.map((change) => ('suppression' in change ? change.suppression.email : 'entry' in change ? change.entry.entry : change.kind));

  test('actor: whole segments as prefixes, repeated or comma-separated; changes without an actor never match', async () => {
    const mailwarden = await trail();
    expect(emailsOf(await allChanges(mailwarden, { actors: 'key:ops' }))).toEqual(['jane@example.com', 'jane@example.com']);
    expect(emailsOf(await allChanges(mailwarden, { actors: ['key:opsx', 'key:app'] }))).toEqual([
      'john@example.com',
      'jim@example.com',
      'jane@example.com',
    ]);
    expect(await allChanges(mailwarden, { actors: 'key' })).toHaveLength(5);
    expect(await allChanges(mailwarden, { actors: 'ke' })).toEqual([]);
  });

  test("hash or email: the address's suppression and allowlist changes; with kinds and actors, all must match", async () => {
    const mailwarden = await trail();
    const byEmail = await allChanges(mailwarden, { email: ' JANE@example.com' });
    expect(byEmail.map((change) => change.kind)).toEqual([
      'suppression.added',
      'allowlist.added',
      'suppression.removed',
      'suppression.added',
    ]);
    expect(await allChanges(mailwarden, { hash: JANE_HASH_OF(mailwarden).toUpperCase() })).toEqual(byEmail);
    expect(
      (await allChanges(mailwarden, { hash: JANE_HASH_OF(mailwarden), kinds: 'suppression', actors: 'key' })).map((change) => change.kind),
    ).toEqual(['suppression.added', 'suppression.removed']);
  });

  test.each([
    [{ actors: 'key:' }, 'invalid_request'],
    [{ actors: ['key', ':x'] }, 'invalid_request'],
    [{ hash: 'abc' }, 'invalid_request'],
    [{ hash: 'a'.repeat(64), email: 'jane@example.com' }, 'invalid_request'],
    [{ email: 'not an address' }, 'invalid_email'],
  ] as const)('%j is refused with %s', async (query, code) => {
    const { mailwarden } = feedMailwarden();
    await expectMailwardenError(() => mailwarden.changes.list('acme', query), code);
    expect(() => mailwarden.changes.follow('acme', query)).toThrow();
  });

  test('parseActorFilter: blanks between commas ignored, repeats dropped, none named is undefined', () => {
    expect(parseActorFilter(' key:ops , ,webhook:ses,key:ops')).toEqual(['key:ops', 'webhook:ses']);
    expect(parseActorFilter([',', ' '])).toBeUndefined();
    expect(parseActorFilter(undefined)).toBeUndefined();
  });
});

describe('actors over HTTP', () => {
  const keys = [
    { name: 'ops', key: 'ops-key', projects: ['acme'] },
    { name: 'sending-app', key: 'app-key', projects: ['acme'], scopes: ['check', 'read'] },
  ] as const;
  function http() {
    const { mailwarden } = feedMailwarden();
    const handler = createHttpHandler(mailwarden, { apiKeys: keys as never, logger: { error: () => {} } });
    const call = async (method: HttpRequest['method'], path: string, body?: unknown, query = '') => {
      const response = await handler.handle({
        method,
        path: `/projects/acme${path}`,
        query,
        headers: { 'x-api-key': 'ops-key', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: new TextEncoder().encode(JSON.stringify(body)) }),
      });
      return { status: response.status, body: JSON.parse(Buffer.from(response.body).toString() || 'null') };
    };
    return { mailwarden, call };
  }

  test("every write route records the calling key's actor", async () => {
    const { mailwarden, call } = http();
    const hash = JANE_HASH_OF(mailwarden);
    const writes: [HttpRequest['method'], string, unknown?][] = [
      ['POST', '/suppressions', { email: 'jane@example.com' }],
      ['DELETE', `/suppressions/${hash}`],
      ['POST', '/suppressions/bulk', { items: [{ email: 'jane@example.com' }] }],
      ['POST', '/suppressions/bulk-delete', { items: [{ hash }] }],
      ['POST', '/allowlist', { entry: '@example.org' }],
      ['DELETE', '/allowlist/%40example.org'],
      ['POST', '/streams/marketing/pause'],
      ['POST', '/streams/marketing/resume'],
      ['POST', '/erasures', { email: 'jane@example.com' }],
    ];
    for (const [method, path, body] of writes) expect((await call(method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
    const changes = (await call('GET', '/changes', undefined, 'limit=1000')).body.items as ChangeView[];
    // The erasure deleted the feed's changes about jane; the allowlist's and the stream's stay.
    expect(actorsOf(changes)).toEqual([
      ['allowlist.added', 'key:ops'],
      ['allowlist.removed', 'key:ops'],
      ['stream.paused', 'key:ops'],
      ['stream.resumed', 'key:ops'],
      ['address.erased', 'key:ops'],
    ]);
  });

  test('GET …/changes takes actor repeated and comma-separated, hash and email; a bad one is 400', async () => {
    const { call } = http();
    await call('POST', '/suppressions', { email: 'jane@example.com' });
    await call('POST', '/streams/marketing/pause');
    expect((await call('GET', '/changes', undefined, 'actor=rule&actor=key:ops')).body.items).toHaveLength(2);
    expect((await call('GET', '/changes', undefined, 'actor=webhook,key:app')).body.items).toEqual([]);
    const byEmail = await call('GET', '/changes', undefined, `email=${encodeURIComponent('Jane@Example.com')}`);
    expect(byEmail.body.items.map((change: ChangeView) => change.kind)).toEqual(['suppression.added']);
    for (const query of ['actor=key:', 'actor=%3Aops', 'hash=123', `hash=${'a'.repeat(64)}&email=jane@example.com`, 'email=nope']) {
      const answer = await call('GET', '/changes', undefined, query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code, query).toMatch(/^invalid_(request|email)$/);
    }
  });
});
