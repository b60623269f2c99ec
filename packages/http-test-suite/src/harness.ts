import { afterAll, onTestFinished } from 'vitest';
import type { OutboundEndpoint, Store } from '@mailwarden/core';
import type { ChangeFeedOptions } from '@mailwarden/core/store';
import { createMailwardenHost, type MailwardenHost } from './mailwarden-host.js';
import type { StartServer } from './servers.js';
import { randomProjects, startTestApp, type Projects, type TestApp, type TestAppOptions } from './test-app.js';

/** What a test may ask of the store it gets: a change feed (the store's `changes` option). */
export interface TestStoreOptions {
  changes?: ChangeFeedOptions;
}

export interface HttpConformanceOptions {
  /** Names the binding and store in test titles, e.g. `'express5 on Redis'`. */
  name: string;
  /** Starts an app serving mailwarden through the binding under test. */
  start: StartServer;
  /**
   * The store to test, made with `options` passed on as the store's own options (`changes`). Called once
   * per suite without options, closed after it, and once per test that needs a feed or outbound
   * endpoints, closed after that test; it may already hold other data. Every test works in projects of
   * its own, with random ids.
   */
  createStore: (options?: TestStoreOptions) => Store | Promise<Store>;
  /** Runs of the "no input gives a 5xx" property (default 100). */
  numRuns?: number;
}

export interface OpenOptions extends Omit<TestAppOptions, 'start' | 'host' | 'store' | 'projects'> {
  /** A store with a change feed of these options, and a mailwarden of this test's own on it. */
  changes?: ChangeFeedOptions;
  /** Outbound webhook endpoints of either project (a mailwarden of this test's own, with a feed). */
  outbound?: Partial<Record<keyof Projects, OutboundEndpoint[]>>;
}

/** Opens a test app for the running test; its server is closed when the test finishes. */
export type OpenApp = (options?: OpenOptions) => Promise<TestApp>;

/**
 * Returns the suite's `open`: one mailwarden host on one store for the suite (made on first use), one
 * server per test. A test asking for a feed or outbound endpoints gets a host and store of its own
 * instead, so every other test runs on a store exactly as it is without them. Call it inside the
 * suite's `describe`, which closes the host after its tests.
 */
export function appOpener(options: HttpConformanceOptions): OpenApp {
  let host: Promise<MailwardenHost> | undefined;
  afterAll(async () => {
    if (host !== undefined) await (await host).close();
  });
  return async ({ changes, outbound, ...appOptions } = {}) => {
    const projects = randomProjects();
    if (changes === undefined && outbound === undefined) {
      host ??= Promise.resolve(options.createStore()).then((store) => createMailwardenHost(store));
      const app = await startTestApp({ ...appOptions, projects, start: options.start, host: await host });
      onTestFinished(() => app.close());
      return app;
    }
    const endpoints = Object.fromEntries(
      Object.entries(outbound ?? {}).map(([project, projectEndpoints]) => [projects[project as keyof Projects], projectEndpoints]),
    );
    const own = createMailwardenHost(await options.createStore({ changes: changes ?? {} }), { outboundEndpoints: endpoints });
    let app: TestApp;
    try {
      app = await startTestApp({ ...appOptions, projects, start: options.start, host: own });
    } catch (error) {
      await own.close();
      throw error;
    }
    onTestFinished(async () => {
      try {
        await app.close();
      } finally {
        await own.close();
      }
    });
    return app;
  };
}
