import { describeEventTests } from './events.js';
import { describeHostileEventTests } from './hostile-events.js';
import type { StoreConformanceOptions } from './harness.js';
import { describeListingTests } from './listings.js';
import { describeModelBasedTests } from './model-based.js';
import { describeSuppressionTests } from './suppressions.js';
import { describeWebhookTokenTests } from './webhook-tokens.js';

export type { StoreConformanceOptions } from './harness.js';
export { createStoreModel } from './model.js';

/**
 * The executable form of the `Store` contract: example tests per group, then random command sequences
 * compared with a plain model. Every test writes to a project of its own, so a remote store may hold
 * other data. Call it from a test file with the runner's functions and a store factory.
 *
 * @example
 * import { createMemoryStore } from '@mailwarden/core';
 * import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
 * import { describe, expect, test } from 'vitest';
 *
 * runStoreConformanceSuite({ name: 'memory store', test, describe, expect, createStore: createMemoryStore });
 */
export function runStoreConformanceSuite(options: StoreConformanceOptions): void {
  const runs = (group: keyof NonNullable<StoreConformanceOptions['groups']>) => options.groups?.[group] !== false;
  options.describe(`${options.name} conforms to the Store contract`, () => {
    if (runs('suppressions')) describeSuppressionTests(options);
    if (runs('events')) describeEventTests(options);
    if (runs('hostile')) describeHostileEventTests(options);
    if (runs('listings')) describeListingTests(options);
    if (runs('model')) describeModelBasedTests(options);
    if (runs('webhookTokens')) describeWebhookTokenTests(options);
  });
}
export { runCheckCacheSuite, type CheckCacheSuiteOptions } from './check-cache.js';
