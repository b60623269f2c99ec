import { randomUUID } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import type { ChangeFeedOptions } from '@mailwarden/core/store';
import type * as vitest from 'vitest';

/** Registers a test: vitest's `test` (or `it`) fits; `timeout` is the test's limit in milliseconds. */
export type TestFunction = (name: string, body: () => Promise<void>, timeout?: number) => void;
/** Registers a group of tests: vitest's `describe` fits. */
export type DescribeFunction = (name: string, body: () => void) => void;

export interface StoreConformanceOptions {
  /** Names the store in test titles. */
  name: string;
  /** The runner's `test`, `describe` and `expect`: the suite registers its tests through them and never imports a runner itself. */
  test: TestFunction;
  describe: DescribeFunction;
  expect: typeof vitest.expect;
  /**
   * A store to test. Called once per test, and the store's `close()` is called after it. It may hold
   * other data already (a shared server): every test writes to projects of its own and clears nothing.
   * `options.changes`: make the store keep a change feed with this retention (the feed groups pass it;
   * every other test passes none, and the store must keep no feed then).
   */
  createStore: (options: StoreOptions) => Promise<Store> | Store;
  /**
   * Groups to run; every group runs unless set to `false`. `webhookTokens` fails for a store without
   * the optional `claimWebhookToken`: turn it off if your store leaves that out on purpose.
   */
  groups?: {
    suppressions?: boolean;
    events?: boolean;
    hostile?: boolean;
    listings?: boolean;
    timelines?: boolean;
    stats?: boolean;
    model?: boolean;
    webhookTokens?: boolean;
    /** Expiry (issue 25): checks, listings and writes at the caller's `now`, the sweep, and records without rules. */
    expiry?: boolean;
    /** The allowlist (issue 25): its listing, `findAllowlisted`, and what it keeps events from suppressing. */
    allowlist?: boolean;
    /** The soft-bounce rule (issue 25): examples, the model call by call, and the order law with three concurrent instances. */
    softBounces?: boolean;
    /** The change feed (issue 26): every change once, in order, as the model makes it; cursors under concurrent writes; retention; kinds. */
    changes?: boolean;
    /** Deliverability alerts (issue 26): windows, crossings up and down, per tracking ID, with three concurrent instances; pausing streams. */
    alerts?: boolean;
    /** Paused streams (issue 26): pause, resume, list, and their changes. */
    pausedStreams?: boolean;
    /** Outbound delivery state (issue 26): leases, takeover, progress, pause and resume. */
    outbound?: boolean;
    /** The audit trail (issue 27): every write's actor and the rules' on its changes; the feed filtered by actor and by hash. */
    audit?: boolean;
    /** Erasure (issue 27): `eraseAddress` keeps the address blocked by hash and forgets it otherwise; with `dump`, in no form anywhere. */
    erasure?: boolean;
    /** API keys (issue 27): `syncApiKeys` appends each difference once, whoever syncs at once. */
    apiKeys?: boolean;
    /** Shared rate limits (issue 27): `hitRateLimits` counts per bucket and window, exactly under concurrent hits. Skipped for a store without it. */
    rateLimits?: boolean;
  };
  /**
   * Everything the store holds, as text: every key and value, row or structure, of every project (the
   * erasure group searches it for any form of an erased address; docs/decisions.md, "Erasure"). Without
   * it, the erasure group checks what the API reads, and says in its test title that no dump was searched.
   */
  dump?: (store: Store) => Promise<string>;
  /** Runs of each property test (model-based, hostile events, webhook tokens). Default 50: raise it to hunt, lower it for a slow store. */
  numRuns?: number;
  /** Each test's time limit in milliseconds, passed to `test`. Default 60 000: one test stores a 6 000-event batch, another runs `numRuns` command sequences. */
  timeout?: number;
}

/** What a test asks of the store it gets (`createStore`). */
export interface StoreOptions {
  /** Keep a change feed with this retention (the store's `changes` option). */
  changes?: ChangeFeedOptions;
}

export interface StoreTestContext {
  store: Store;
  /** A project of this test alone, so a store shared with other data still answers only for it. */
  projectId: string;
}

export function randomProjectId(): string {
  return `conformance-${randomUUID()}`;
}

/** Registers tests that each get a fresh store (made with `storeOptions`) and project; the store is closed after the test. */
export function storeTest(options: StoreConformanceOptions, storeOptions: StoreOptions = {}) {
  return (name: string, body: (context: StoreTestContext) => Promise<void>): void => {
    options.test(name, async () => {
      const store = await options.createStore(storeOptions);
      try {
        await body({ store, projectId: randomProjectId() });
      } finally {
        await store.close();
      }
    });
  };
}
