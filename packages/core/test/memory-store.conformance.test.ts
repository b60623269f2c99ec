import { createMemoryStore } from '@mailwarden/core';
import { runStoreConformanceSuite } from '@mailwarden/store-test-suite';
import { describe, expect, test } from 'vitest';

runStoreConformanceSuite({ name: 'memory store', test, describe, expect, createStore: createMemoryStore });
