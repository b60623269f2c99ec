import { randomUUID } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import type * as vitest from 'vitest';

export interface StoreConformanceOptions {
  /** Names the store in test titles. */
  name: string;
  test: typeof vitest.test;
  describe: typeof vitest.describe;
  expect: typeof vitest.expect;
  /** A store to test. Called once per test and closed after it; it may already hold other projects' data. */
  createStore: () => Promise<Store> | Store;
  /** Groups to run; every group runs unless set to `false`. */
  groups?: { suppressions?: boolean; events?: boolean; hostile?: boolean; listings?: boolean; model?: boolean; webhookTokens?: boolean };
  /** Runs of the model-based property tests (default 50; also the webhook-token one): raise it locally, lower it for slow stores. */
  numRuns?: number;
}

export interface StoreTestContext {
  store: Store;
  /** A project of this test alone, so a store shared with other data still answers only for it. */
  projectId: string;
}

export function randomProjectId(): string {
  return `conformance-${randomUUID()}`;
}

/** Registers tests that each get a fresh store and project; the store is closed after the test. */
export function storeTest(options: StoreConformanceOptions) {
  return (name: string, body: (context: StoreTestContext) => Promise<void>): void => {
    options.test(name, async () => {
      const store = await options.createStore();
      try {
        await body({ store, projectId: randomProjectId() });
      } finally {
        await store.close();
      }
    });
  };
}
