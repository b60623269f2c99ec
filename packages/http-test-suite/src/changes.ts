import { unnamedKeyName } from '@mailwarden/core';
import { allowlistEntrySchema, changeListSchema, suppressionSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { CLOCK_START } from './clock.js';
import { expectError, expectSuccess } from './expect-answer.js';
import type { OpenApp } from './harness.js';
import { TRACKING_ID, sendgridEvents } from './provider-requests.js';
import { API_KEYS, type TestApp } from './test-app.js';

const iso = (ms: number) => new Date(ms).toISOString();

interface ChangeItem {
  id: string;
  seq: number;
  project: string;
  kind: string;
  at: string;
  [field: string]: unknown;
}
interface ChangeList {
  items: ChangeItem[];
  next_after: number;
  latest: number;
}

async function changes(app: TestApp, query = '', project: 'acme' | 'globex' = 'acme'): Promise<ChangeList> {
  const answer = await app.api('GET', `/projects/${app.projects[project]}/changes${query === '' ? '' : `?${query}`}`, { key: project });
  return expectSuccess(answer, 200, changeListSchema) as ChangeList;
}

/** Reads the whole feed from `after`, `limit` at a time, as a reader resuming from its cursor would. */
async function readAll(app: TestApp, query: string, limit: number): Promise<ChangeItem[]> {
  const items: ChangeItem[] = [];
  let after = 0;
  for (;;) {
    const page = await changes(app, `${query}${query === '' ? '' : '&'}after=${after}&limit=${limit}`);
    items.push(...page.items);
    expect(page.next_after).toBeGreaterThanOrEqual(after);
    if (page.next_after === page.latest) return items;
    after = page.next_after;
  }
}

/**
 * Six writes through the API, a second apart: a suppression added, an allowlist entry added, the
 * suppression removed, a stream paused (twice) and resumed (twice), the entry removed.
 */
async function writeSome(app: TestApp): Promise<{ suppression: unknown; entry: unknown; paused: unknown }> {
  const { acme } = app.projects;
  const added = await app.api('POST', `/projects/${acme}/suppressions`, { json: { email: 'ana@example.com' } });
  const suppression = expectSuccess(added, 201, suppressionSchema);
  app.clock.advance(1000);
  const entry = expectSuccess(
    await app.api('POST', `/projects/${acme}/allowlist`, { json: { entry: 'seed@example.com' } }),
    201,
    allowlistEntrySchema,
  );
  app.clock.advance(1000);
  expectSuccess(await app.api('DELETE', `/projects/${acme}/suppressions/${suppression.hash}`), 200);
  app.clock.advance(1000);
  const paused = expectSuccess(await app.api('POST', `/projects/${acme}/streams/marketing/pause`), 201);
  expectSuccess(await app.api('POST', `/projects/${acme}/streams/marketing/pause`), 200);
  app.clock.advance(1000);
  expectSuccess(await app.api('POST', `/projects/${acme}/streams/marketing/resume`), 200);
  expectSuccess(await app.api('POST', `/projects/${acme}/streams/marketing/resume`), 200);
  app.clock.advance(1000);
  const removed = await app.api('DELETE', `/projects/${acme}/allowlist/seed%40example.com`);
  expect(removed.status).toBe(204);
  return { suppression, entry, paused };
}

/** docs/http.md, "The change feed": every change a store makes, in order, behind a resumable cursor. */
export function describeChangeFeedTests(open: OpenApp): void {
  describe('the change feed', () => {
    test('writes through the API appear once each, in order, numbered from 1, with the views of the listings; a read resumes after its cursor', async () => {
      const app = await open({ changes: {} });
      const { acme } = app.projects;
      const { suppression, entry, paused } = await writeSome(app);

      const all = await changes(app);
      // Each write names its key (unnamed in a map: `key-` and 8 hex of its SHA-256), never the key itself.
      const actor = `key:${unnamedKeyName(API_KEYS.acme)}`;
      const base = (seq: number, kind: string, at: number) => ({ id: `${acme}:${seq}`, seq, project: acme, kind, at: iso(at), actor });
      expect(all).toEqual({
        items: [
          { ...base(1, 'suppression.added', CLOCK_START), suppression },
          { ...base(2, 'allowlist.added', CLOCK_START + 1000), entry },
          { ...base(3, 'suppression.removed', CLOCK_START + 2000), suppression },
          { ...base(4, 'stream.paused', CLOCK_START + 3000), stream: 'marketing', cause: 'operator' },
          { ...base(5, 'stream.resumed', CLOCK_START + 4000), stream: 'marketing', cause: 'operator' },
          { ...base(6, 'allowlist.removed', CLOCK_START + 5000), entry },
        ],
        next_after: 6,
        latest: 6,
      });
      expect(paused).toMatchObject({ stream: 'marketing', cause: 'operator' });

      // Pages of two, each starting after the last seq read, give the same changes.
      expect(await readAll(app, '', 2)).toEqual(all.items);
      expect(await changes(app, 'after=4&limit=1')).toEqual({ items: [all.items[4]], next_after: 5, latest: 6 });
      // Caught up: an empty page that stays where it is; past the end too.
      expect(await changes(app, 'after=6')).toEqual({ items: [], next_after: 6, latest: 6 });
      expect(await changes(app, 'after=99')).toEqual({ items: [], next_after: 99, latest: 6 });
      // Another project's feed is its own.
      expect(await changes(app, '', 'globex')).toEqual({ items: [], next_after: 0, latest: 0 });
    });

    test('kind filters by kind or family, repeated or comma-separated; a page skips what does not match', async () => {
      const app = await open({ changes: {} });
      await writeSome(app);
      const kindsOf = (list: ChangeList) => list.items.map((item) => `${item.seq} ${item.kind}`);

      expect(kindsOf(await changes(app, 'kind=suppression'))).toEqual(['1 suppression.added', '3 suppression.removed']);
      const two = await changes(app, 'kind=allowlist.added&kind=stream');
      expect(kindsOf(two)).toEqual(['2 allowlist.added', '4 stream.paused', '5 stream.resumed']);
      expect(await changes(app, 'kind=allowlist.added,stream')).toEqual(two);
      expect(await changes(app, `kind=${encodeURIComponent('allowlist.added,stream')}`)).toEqual(two);
      // A reader of one kind at a time misses none and sees no other.
      expect((await readAll(app, 'kind=allowlist', 1)).map((item) => item.kind)).toEqual(['allowlist.added', 'allowlist.removed']);
      // Nothing of the kind: an empty page, caught up.
      expect(await changes(app, 'kind=alert')).toEqual({ items: [], next_after: 6, latest: 6 });
    });

    test('a delivery event changes its message status once: from null to delivered, with the event', async () => {
      const app = await open({ changes: {} });
      const { acme } = app.projects;
      const delivered = sendgridEvents(app.secrets.acme, ['ana@example.com'], 'delivered', TRACKING_ID);
      expect((await app.webhook('sendgrid', acme, delivered)).status).toBe(200);
      // The same event again is a duplicate: nothing changes, nothing is appended.
      expect((await app.webhook('sendgrid', acme, delivered)).status).toBe(200);
      const messages = JSON.parse((await app.api('GET', `/projects/${acme}/messages`)).text) as { items: { id: string }[] };
      const list = await changes(app, 'kind=message');
      expect(list.items).toHaveLength(1);
      expect(list.items[0]).toMatchObject({
        seq: 1,
        kind: 'message.status_changed',
        from: null,
        to: 'delivered',
        message: { id: messages.items[0]!.id, recipient: 'ana@example.com', status: 'delivered' },
        event: { id: expect.stringMatching(/^[0-9a-f]{32}$/), type: 'delivered', occurred_at: expect.any(String) },
      });
    });

    test('an after older than what retention keeps is 410 change_cursor_expired; from the oldest kept, the rest', async () => {
      const app = await open({ changes: { maxLength: 2 } });
      const { acme } = app.projects;
      for (const email of ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']) {
        expectSuccess(await app.api('POST', `/projects/${acme}/suppressions`, { json: { email } }), 201);
      }
      // A store may trim on append or in its sweep: after the sweep, the last two are kept.
      await app.store.purgeExpired?.(app.clock.now());
      expectError(await app.api('GET', `/projects/${acme}/changes`), 410, 'change_cursor_expired');
      expectError(await app.api('GET', `/projects/${acme}/changes?after=1&kind=allowlist`), 410, 'change_cursor_expired');
      const rest = await changes(app, 'after=2');
      expect(rest.items.map((item) => item.seq)).toEqual([3, 4]);
      expect(rest.latest).toBe(4);
    });

    test('refusals: 400 invalid_request naming after, limit or kind; 404 without a feed; the project key', async () => {
      const app = await open({ changes: {} });
      const { acme } = app.projects;
      const refused = async (query: string, path: string) => {
        const error = expectError(await app.api('GET', `/projects/${acme}/changes?${query}`), 400, 'invalid_request');
        expect(error.details).toEqual([expect.objectContaining({ path })]);
      };
      for (const after of ['-1', 'abc', '1.5', '', '1e3', '9'.repeat(20)]) await refused(`after=${after}`, 'after');
      for (const limit of ['0', '1001', 'x', '']) await refused(`limit=${limit}`, 'limit');
      for (const kind of ['nope', 'suppression.', 'Suppression', 'alert.bounce', 'suppression,nope'])
        await refused(`kind=${encodeURIComponent(kind)}`, 'kind');
      expectError(await app.api('GET', `/projects/${acme}/changes?after=1&after=2`), 400, 'invalid_request');
      expectSuccess(await app.api('GET', `/projects/${acme}/changes?limit=1000`), 200);
      expectError(await app.api('GET', `/projects/${acme}/changes`, { key: 'globex' }), 403, 'forbidden');
      expectError(await app.api('GET', `/projects/${acme}/changes`, { key: null }), 401, 'missing_api_key');
      expectError(await app.api('POST', `/projects/${acme}/changes`), 405, 'method_not_allowed');

      const without = await open();
      expectError(await without.api('GET', `/projects/${without.projects.acme}/changes`), 404, 'change_feed_not_configured');
    });
  });
}
