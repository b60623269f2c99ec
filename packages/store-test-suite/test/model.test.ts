import { describe, expect, test } from 'vitest';
import { runStoreConformanceSuite } from '../src/index.js';
import { createStoreModel } from '../src/model.js';

// The model must pass the hand-written examples too: they check the model, and the model checks the stores.
runStoreConformanceSuite({
  name: 'the reference model',
  test,
  describe,
  expect,
  createStore: createStoreModel,
  groups: { model: false },
});
