// The measured store (`createMailwarden({ metrics })` wraps the store in it) passes every call through:
// the memory store measured conforms to the Store contract as the memory store does.
import { createMemoryStore, type MailwardenMetrics } from '@mailwarden/core';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { describe, expect, test } from 'vitest';
import { measureStore } from '../src/store/measured-store.js';

const ignore = () => {};
const metrics: MailwardenMetrics = {
  httpRequest: ignore,
  eventsReceived: ignore,
  webhookVerificationFailed: ignore,
  suppressionsAdded: ignore,
  suppressionsRemoved: ignore,
  storeOperation: ignore,
  hookCallsDropped: ignore,
  outboundDelivery: ignore,
  outboundLag: ignore,
  alertRates: ignore,
};

runStoreConformanceSuite({
  name: 'measured memory store',
  test,
  describe,
  expect,
  createStore: (options) => measureStore(createMemoryStore(options), metrics),
});
