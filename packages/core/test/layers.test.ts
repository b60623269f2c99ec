import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { providers } from '@mailwarden/core';
import { importCycles, importGraph } from './import-graph.js';

// Core's layers, as docs/architecture.md describes them: each module belongs to one layer and imports
// only from its own layer and the layers listed for it, so dependencies point one way (down this list).
// A new file that fits no layer fails here until it is placed. No circle either, not even within one
// layer (import-cycles.test.ts checks every package's source the same way).

const layers = {
  /** The packages' entries and the testing kit: they may import anything, and only they are roots. */
  entries: { files: ['index.ts', 'schemas.ts', 'store.ts', 'testing.ts', 'testing/'], mayImport: 'anything' },
  /** The framework-free HTTP API: knows the application (mailwarden.ts) and asks the webhooks layer. */
  http: { files: ['http/'], mayImport: ['composition', 'services', 'webhooks', 'carriers', 'domain', 'leaves'] },
  /** `createMailwarden`: wires the services, the store (the memory store by default) and webhook intake. */
  composition: { files: ['mailwarden.ts'], mayImport: ['outbound', 'webhooks', 'carriers', 'services', 'memoryStore', 'domain', 'leaves'] },
  /** Outbound webhooks: the delivery engine on timers and its service; signs and POSTs the services' change views. */
  outbound: { files: ['outbound/'], mayImport: ['services', 'domain', 'leaves'] },
  /** Webhook receivers and intake: verify, parse and normalize; the provider rules live here. */
  webhooks: { files: ['webhooks/'], mayImport: ['carriers', 'domain', 'leaves'] },
  /** Attaching and reading tracking IDs on each provider's send request: leaves only. */
  carriers: { files: ['carriers/'], mayImport: ['leaves'] },
  /** The services of a mailwarden instance, over a context: messages, stats, suppressions, the send gate, recording events, hooks, one-click unsubscribe links. */
  services: { files: ['services/', 'unsubscribe/'], mayImport: ['domain', 'leaves'] },
  /** The memory store: one implementation of the Store interface, which only the composition picks. */
  memoryStore: { files: ['memory-store/'], mayImport: ['domain', 'leaves'] },
  /** Records and rules, the wire schemas, the Store interface and what stores share. */
  domain: {
    files: ['messages/', 'suppressions/', 'store/', 'api-schemas.ts', 'api-shapes.ts', 'pagination.ts', 'metrics.ts'],
    mayImport: ['leaves'],
  },
  /** Modules that know nothing of mailwarden's other parts, and the persisted vocabulary every layer speaks. */
  leaves: {
    files: [
      'vocabulary.ts',
      'stream.ts',
      'errors.ts',
      'json/',
      'email/',
      'events/',
      'tracking-id.ts',
      'storable-text.ts',
      'timestamp.ts',
      'input.ts',
      'cursor.ts',
    ],
    mayImport: [],
  },
} as const satisfies Record<string, { files: readonly string[]; mayImport: 'anything' | readonly string[] }>;

type Layer = keyof typeof layers;

const src = fileURLToPath(new URL('../src/', import.meta.url));
const graph = importGraph(src);
const files = [...graph.keys()];

/** The layer of a module (a path below src/): the longest pattern that matches it, so a file beats its folder. */
function layerOf(file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const [layer, { files }] of Object.entries(layers) as [Layer, (typeof layers)[Layer]][]) {
    for (const pattern of files) {
      const matches = pattern.endsWith('/') ? file.startsWith(pattern) : file === pattern;
      if (matches && pattern.length > (best?.length ?? -1)) best = { layer, length: pattern.length };
    }
  }
  return best?.layer;
}

/** The modules of src/ a file imports (type-only imports and re-exports too), as paths below src/. */
const importsOf = (file: string): readonly string[] => graph.get(file) ?? [];

describe('core layers', () => {
  it('places every module of src/ in one layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('imports only from the same layer or one it lists, so dependencies point one way', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      if (from === undefined) continue;
      const allowed = layers[from].mayImport;
      for (const target of importsOf(file)) {
        const to = layerOf(target);
        if (to === undefined) wrong.push(`${file} imports ${target}, which fits no layer`);
        else if (to !== from && allowed !== 'anything' && !(allowed as readonly string[]).includes(to))
          wrong.push(`${file} (${from}) imports ${target} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets only the entries import an entry or http/', () => {
    const wrong = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => ['entries', 'http'].includes(layerOf(target) ?? '') && !['entries', layerOf(target)].includes(layerOf(file)))
        .map((target) => `${file} imports ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it('has no import circle, not even within one layer', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('keeps the layers themselves acyclic: no layer lists one that lists it back', () => {
    const order = Object.keys(layers) as Layer[];
    for (const [index, layer] of order.entries()) {
      const allowed = layers[layer].mayImport;
      if (allowed === 'anything') continue;
      expect(
        allowed.every((other) => order.indexOf(other as Layer) > index),
        layer,
      ).toBe(true);
    }
  });

  it('names no provider in http/: the HTTP layer asks the webhooks layer for every provider rule', () => {
    const named = new RegExp(`\\b(${providers.join('|')}|sns)\\b`, 'i');
    const wrong = files.filter((file) => file.startsWith('http/')).filter((file) => named.test(readFileSync(join(src, file), 'utf8')));
    expect(wrong).toEqual([]);
  });
});
