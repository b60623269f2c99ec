import { describeAlertTests, describePausedStreamTests } from './alerts.js';
import { describeAllowlistTests } from './allowlist.js';
import { describeApiKeyTests } from './api-keys.js';
import { describeAuditTests } from './audit.js';
import { describeBulkTests } from './bulk.js';
import { describeErasureTests } from './erasure.js';
import { describeEventTests } from './events.js';
import { describeExpiryTests } from './expiry.js';
import { describeChangeFeedTests } from './feed.js';
import { describeFilterTests } from './filters.js';
import type { StoreConformanceOptions } from './harness.js';
import { describeHostileEventTests } from './hostile-events.js';
import { describeListingTests } from './listings.js';
import { describeModelBasedTests } from './model-based.js';
import { describeOutboundTests } from './outbound.js';
import { describeProvenanceTests } from './provenance.js';
import { describeRateLimitTests } from './rate-limits.js';
import { describeSoftBounceRuleTests } from './soft-bounce-rule.js';
import { describeSuppressionTests } from './suppressions.js';
import { describeStatsTests } from './stats.js';
import { describeStreamTests } from './streams.js';
import { describeTimelineTests } from './timelines.js';
import { describeWebhookTokenTests } from './webhook-tokens.js';

export type { DescribeFunction, StoreConformanceOptions, StoreOptions, TestFunction } from './harness.js';
export { createStoreModel, timelineOf } from './model.js';
export { erasureOf } from './erasure.js';
export { runCheckCacheSuite, type CheckCacheSuiteOptions } from './check-cache.js';

/** Long enough for the 6 000-event batch and the property tests on a remote store. */
const DEFAULT_TIMEOUT = 60_000;

/**
 * The executable form of the `Store` contract (`@mailwarden/core/store`): example tests per group,
 * then random command sequences whose every answer must equal that of a plain model. Every test writes
 * to a project of its own, so a store on a shared server may hold other data. Call it at the top level
 * of a test file with the runner's functions and a store factory.
 *
 * @example
 * import { describe, expect, test } from 'vitest';
 * import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
 * import { createMyStore } from '../src/index.js';
 *
 * runStoreConformanceSuite({ name: 'my store', test, describe, expect, createStore: (options) => createMyStore(options) });
 */
export function runStoreConformanceSuite(options: StoreConformanceOptions): void {
  const timeout = options.timeout ?? DEFAULT_TIMEOUT;
  const suite: StoreConformanceOptions = { ...options, test: (name, body) => options.test(name, body, timeout) };
  const runs = (group: keyof NonNullable<StoreConformanceOptions['groups']>) => options.groups?.[group] !== false;
  suite.describe(`${options.name} conforms to the Store contract`, () => {
    if (runs('suppressions')) {
      describeSuppressionTests(suite);
      describeBulkTests(suite);
      describeStreamTests(suite);
    }
    if (runs('events')) {
      describeEventTests(suite);
      describeProvenanceTests(suite);
    }
    if (runs('hostile')) describeHostileEventTests(suite);
    if (runs('listings')) {
      describeListingTests(suite);
      describeFilterTests(suite);
    }
    if (runs('timelines')) describeTimelineTests(suite);
    if (runs('stats')) describeStatsTests(suite);
    if (runs('model')) describeModelBasedTests(suite);
    if (runs('webhookTokens')) describeWebhookTokenTests(suite);
    if (runs('expiry')) describeExpiryTests(suite);
    if (runs('allowlist')) describeAllowlistTests(suite);
    if (runs('softBounces')) describeSoftBounceRuleTests(suite);
    if (runs('changes')) describeChangeFeedTests(suite);
    if (runs('alerts')) describeAlertTests(suite);
    if (runs('pausedStreams')) describePausedStreamTests(suite);
    if (runs('outbound')) describeOutboundTests(suite);
    if (runs('audit')) describeAuditTests(suite);
    if (runs('erasure')) describeErasureTests(suite);
    if (runs('apiKeys')) describeApiKeyTests(suite);
    if (runs('rateLimits')) describeRateLimitTests(suite);
  });
}
