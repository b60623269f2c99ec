import { afterAll, onTestFinished } from 'vitest';
import type { Store } from '@mailwarden/core';
import { createMailwardenHost, type MailwardenHost } from './mailwarden-host.js';
import type { StartServer } from './servers.js';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.js';

export interface HttpConformanceOptions {
  /** Names the binding and store in test titles, e.g. `'express5 on Redis'`. */
  name: string;
  /** Starts an app serving mailwarden through the binding under test. */
  start: StartServer;
  /**
   * The store to test. Called once per suite, closed after it; it may already hold other data. Every
   * test works in projects of its own, with random ids.
   */
  createStore: () => Store | Promise<Store>;
  /** Runs of the "no input gives a 5xx" property (default 100). */
  numRuns?: number;
}

export type OpenOptions = Omit<TestAppOptions, 'start' | 'host' | 'store'>;

/** Opens a test app for the running test; its server is closed when the test finishes. */
export type OpenApp = (options?: OpenOptions) => Promise<TestApp>;

/**
 * Returns the suite's `open`: one mailwarden host on one store for the suite (made on first use), one
 * server per test. Call it inside the suite's `describe`, which closes the host after its tests.
 */
export function appOpener(options: HttpConformanceOptions): OpenApp {
  let host: Promise<MailwardenHost> | undefined;
  afterAll(async () => {
    if (host !== undefined) await (await host).close();
  });
  return async (appOptions = {}) => {
    host ??= Promise.resolve(options.createStore()).then(createMailwardenHost);
    const app = await startTestApp({ ...appOptions, start: options.start, host: await host });
    onTestFinished(() => app.close());
    return app;
  };
}
