import { describe } from 'vitest';
import { describeAlertTests } from './alerts.js';
import { describeAllowlistTests } from './allowlist.js';
import { describeAnyInputTests } from './any-input.js';
import { describeAuthTests } from './auth.js';
import { describeChangeFeedTests } from './changes.js';
import { describeExpiryTests } from './expiry.js';
import { appOpener, type HttpConformanceOptions } from './harness.js';
import { describeListingFilterTests } from './listing-filters.js';
import { describeMessageTimelineTests } from './message-timelines.js';
import { describeMessageTests } from './messages.js';
import { describeOutboundWebhookTests } from './outbound-webhooks.js';
import { describePausedStreamTests } from './paused-streams.js';
import { describeRequestTests } from './requests.js';
import { describeScopeTests } from './scopes.js';
import { describeStatsTests } from './stats.js';
import { describeStoreFailureTests } from './store-failures.js';
import { describeSoftBounceRuleTests } from './soft-bounce-rule.js';
import { describeStreamTests } from './streams.js';
import { describeSuppressionTests } from './suppressions.js';
import { describeUnsubscribeEventTests } from './unsubscribe-events.js';
import { describeUnsubscribeTests } from './unsubscribe.js';
import { describeWebhookTests } from './webhooks.js';

export type { HttpConformanceOptions } from './harness.js';

/**
 * The HTTP contract of docs/http.md, checked over a real socket with `fetch`: every endpoint, every error
 * with its exact status and body, webhook intake for the six providers, store failures, and a property
 * that no input gives a 5xx. Each test opens a fresh mailwarden on a fresh store (with random project
 * ids) behind the binding under test, with a fixed clock; a test that needs a change feed or outbound
 * endpoints gets a store of its own, made by `createStore` with the feed option.
 *
 * @example
 * import { createMemoryStore } from '@mailwarden/core';
 * import { runHttpConformanceSuite, startFastify } from '@mailwarden/http-test-suite';
 *
 * runHttpConformanceSuite({ name: 'fastify on memory', start: startFastify, createStore: createMemoryStore });
 */
export function runHttpConformanceSuite(options: HttpConformanceOptions): void {
  const open = appOpener(options);
  describe(`${options.name} conforms to the HTTP API`, () => {
    describeAuthTests(open);
    describeScopeTests(open);
    describeSuppressionTests(open);
    describeStreamTests(open);
    describeExpiryTests(open);
    describeAllowlistTests(open);
    describeSoftBounceRuleTests(open);
    describeMessageTests(open);
    describeMessageTimelineTests(open);
    describeListingFilterTests(open);
    describeStatsTests(open);
    describeChangeFeedTests(open);
    describeAlertTests(open);
    describePausedStreamTests(open);
    describeOutboundWebhookTests(open);
    describeRequestTests(open);
    describeWebhookTests(open);
    describeUnsubscribeEventTests(open);
    describeUnsubscribeTests(open);
    describeStoreFailureTests(open);
    describeAnyInputTests(open, options.numRuns ?? 100);
  });
}
