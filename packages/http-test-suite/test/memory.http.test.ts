import { createMemoryStore } from '@mailwarden/core';
import { bindings, runHttpConformanceSuite } from '../src/index.js';

for (const [name, start] of Object.entries(bindings)) {
  runHttpConformanceSuite({ name: `${name} on the memory store`, start, createStore: createMemoryStore });
}
