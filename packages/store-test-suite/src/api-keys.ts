import { CONFIG_ACTOR, type KeyChange, type SyncedKey } from '@mailwarden/core/store';
import { readFeed } from './feed.js';
import { storeTest, type StoreConformanceOptions } from './harness.js';
import { createStoreModel } from './model.js';
import { T0 } from './records.js';

const key = (name: string, scopes: string[], version = '0000000000000000'): SyncedKey => ({ name, scopes, version });

/** The key changes a sync makes, without their seq: what a test states. */
const changeOf = (kind: KeyChange['kind'], at: number, after: SyncedKey, before?: SyncedKey) => ({
  kind,
  at,
  actor: CONFIG_ACTOR,
  key: { name: after.name, scopes: after.scopes },
  ...(before === undefined ? {} : { previous: { name: before.name, scopes: before.scopes } }),
});

const withoutSeq = (changes: readonly KeyChange[]) => changes.map(({ seq: _seq, ...change }) => change);

export function describeApiKeyTests(options: StoreConformanceOptions): void {
  const { describe, expect } = options;
  const test = storeTest(options, { changes: {} });
  const withoutFeed = storeTest(options);

  describe('API keys', () => {
    test('a sync appends each difference in name order, and nothing when the list is already equal', async ({ store, projectId }) => {
      const model = createStoreModel({ changes: {} });
      const ops = key('ops', ['read', 'write']);
      const app = key('app', ['check']);
      const rotated = key('app', ['check'], '0123456789abcdef');
      const narrowed = key('ops', ['read']);
      const admin = key('admin', ['check', 'read', 'write', 'admin']);
      const syncs: [SyncedKey[], number][] = [
        [[ops, app], T0],
        [[app, ops], T0 + 1], // the same keys: nothing
        [[narrowed, rotated, admin], T0 + 2],
        [[admin], T0 + 3],
        [[], T0 + 4],
      ];
      const answers: KeyChange[][] = [];
      for (const [keys, at] of syncs) {
        const answer = await store.syncApiKeys(projectId, keys, at, CONFIG_ACTOR);
        expect(answer).toStrictEqual(await model.syncApiKeys(projectId, keys, at, CONFIG_ACTOR));
        answers.push(answer);
      }
      expect(answers.map(withoutSeq)).toStrictEqual([
        [changeOf('key.added', T0, app), changeOf('key.added', T0, ops)],
        [],
        [
          changeOf('key.added', T0 + 2, admin),
          changeOf('key.updated', T0 + 2, rotated, app),
          changeOf('key.updated', T0 + 2, narrowed, ops),
        ],
        [changeOf('key.removed', T0 + 3, rotated), changeOf('key.removed', T0 + 3, narrowed)],
        [changeOf('key.removed', T0 + 4, admin)],
      ]);
      expect(await readFeed(store, projectId, 2)).toStrictEqual(answers.flat());
      expect(answers.flat().map((change) => change.seq)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // Keys are a project's own.
      expect(await store.syncApiKeys(`${projectId}-other`, [app], T0, CONFIG_ACTOR)).toMatchObject([{ seq: 1, kind: 'key.added' }]);
    });

    withoutFeed('a store without a feed keeps the list all the same, answering changes with seq 0', async ({ store, projectId }) => {
      const app = key('app', ['check']);
      expect(await store.syncApiKeys(projectId, [app], T0, CONFIG_ACTOR)).toStrictEqual([{ seq: 0, ...changeOf('key.added', T0, app) }]);
      expect(await store.syncApiKeys(projectId, [app], T0 + 1, CONFIG_ACTOR)).toStrictEqual([]);
      expect(await store.listChanges(projectId, { after: 0, limit: 10 })).toStrictEqual({ changes: [], next: 0, last: 0 });
    });

    // Every instance syncs after a reload at once: each difference is appended once, by whichever got there first.
    test('three concurrent syncers of the same keys append each change once', async ({ store, projectId }) => {
      const rounds = [
        [key('app', ['check']), key('ops', ['read', 'write'])],
        [key('app', ['check'], '0123456789abcdef'), key('billing', ['read'])],
        [key('billing', ['read', 'write'])],
      ];
      const model = createStoreModel({ changes: {} });
      const all: KeyChange[] = [];
      for (const [index, keys] of rounds.entries()) {
        const answers = await Promise.all([0, 1, 2].map(() => store.syncApiKeys(projectId, keys, T0 + index, CONFIG_ACTOR)));
        all.push(...answers.flat().sort((a, b) => a.seq - b.seq));
        await model.syncApiKeys(projectId, keys, T0 + index, CONFIG_ACTOR);
      }
      const feed = await readFeed(store, projectId, 3);
      expect(feed).toStrictEqual(await readFeed(model, projectId));
      expect(all).toStrictEqual(feed);
    });
  });
}
