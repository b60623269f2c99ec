import { createMemoryStore } from '@mailwarden/core';
import { dumpMemoryStore } from '@mailwarden/core/testing';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { describe, expect, test } from 'vitest';

// `dump`: every structure the store holds, so the erasure group proves an erased address is in none.
runStoreConformanceSuite({
  name: 'memory store',
  test,
  describe,
  expect,
  createStore: (options) => createMemoryStore(options),
  dump: dumpMemoryStore,
});

// The suite's event times lie seconds apart, so a retention of a minute forgets nothing it checks: this
// run shows that keeping messages and keys in expiry order changes no answer.
runStoreConformanceSuite({
  name: 'memory store with retention',
  test,
  describe,
  expect,
  createStore: (options) => createMemoryStore({ ...options, retention: { messagesMs: 60_000 } }),
  dump: dumpMemoryStore,
});
