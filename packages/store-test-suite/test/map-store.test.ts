// A store proven the way a third party proves theirs: written against @mailwarden/core/store alone
// (map-store.ts, the example of docs/storage.md), run through the package's public entry.
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { describe, expect, test } from 'vitest';
import { createMapStore, type MapStore } from './map-store.js';

runStoreConformanceSuite({
  name: 'a Map store',
  test,
  describe,
  expect,
  createStore: (options) => createMapStore(options),
  dump: (store) => (store as MapStore).dump(),
});
