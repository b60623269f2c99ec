import {
  createMailwarden,
  type AlertRules,
  type Mailwarden,
  type OutboundEndpoint,
  type ProviderAuth,
  type Store,
  type SuppressionRules,
} from '@mailwarden/core';
import { fetchTestSnsCertificate } from '@mailwarden/core/testing';
import { createTestClock, type TestClock } from './clock.js';
import { createFailingStore, type FailingStore } from './failing-store.js';
import { WEBHOOK_NOW, createWebhookEnvironment, type TestWebhookEnvironment } from './provider-requests.js';

/** What one test gets of a host: its own clock and webhook environment, its projects' webhook auth. */
export interface HostTenancy {
  clock: TestClock;
  environment: TestWebhookEnvironment;
  /** Unregisters the projects and heals the store. */
  end(): void;
}

/**
 * One mailwarden over one store, shared by the tests of a suite (creating a mailwarden is not free),
 * yet each test sees its own: the clock, the webhook environment and the webhook authentication are
 * those of the test that is running, and every test works in projects of its own. Tests of one host
 * run one after the other. The store is wrapped so a test can make it fail; it heals when the test ends.
 */
export interface MailwardenHost {
  mailwarden: Mailwarden;
  store: FailingStore;
  /** Starts a test: its projects' provider authentication, suppression and alert rules, a fresh clock and environment. */
  begin(
    auth: Readonly<Record<string, ProviderAuth>>,
    rules?: Readonly<Record<string, SuppressionRules>>,
    alerts?: Readonly<Record<string, AlertRules>>,
  ): HostTenancy;
  /** Closes the store. */
  close(): Promise<void>;
}

/** Where the host's one-click unsubscribe links point: a public URL in front of the app, whose paths are the app's. */
export const UNSUBSCRIBE_LINK_BASE = 'https://mail.mailwarden.test/base';
/** The host's unsubscribe secrets: a new one that seals, and an old one that still opens. */
export const UNSUBSCRIBE_SECRETS = ['conformance-unsubscribe-secret-new-0001', 'conformance-unsubscribe-secret-old-0001'] as const;

export interface MailwardenHostOptions {
  /**
   * Outbound webhook endpoints by project id. The engine's timers never fire, so it looks at an
   * endpoint only when woken (by a resume): a test moves their state through the store itself.
   */
  outboundEndpoints?: Readonly<Record<string, OutboundEndpoint[]>>;
}

/** Timers that never fire: the outbound engine polls nothing on its own. */
const stoppedTimers = { setTimeout: () => undefined, clearTimeout: () => {} };

export function createMailwardenHost(store: Store, options: MailwardenHostOptions = {}): MailwardenHost {
  const failing = createFailingStore(store);
  const auth = new Map<string, ProviderAuth>();
  // Only the projects of a test that asks for rules have them: every other answer is as without rules.
  const rules = new Map<string, SuppressionRules>();
  const alerts = new Map<string, AlertRules>();
  let clock = createTestClock();
  let environment = createWebhookEnvironment();
  const mailwarden = createMailwarden({
    store: failing,
    now: () => clock.now(),
    rules: (projectId) => rules.get(projectId),
    alerts: (projectId) => alerts.get(projectId),
    ...(options.outboundEndpoints === undefined ? {} : { outbound: { endpoints: options.outboundEndpoints, timers: stoppedTimers } }),
    unsubscribeLinks: { baseUrl: UNSUBSCRIBE_LINK_BASE, secrets: UNSUBSCRIBE_SECRETS },
    webhooks: {
      auth: (projectId) => auth.get(projectId),
      // Read once when the mailwarden is made: every call goes to the running test's environment.
      environment: {
        now: () => WEBHOOK_NOW,
        fetchCertificate: fetchTestSnsCertificate,
        confirmSubscription: (url) => environment.confirmSubscription(url),
      },
    },
  });
  return {
    mailwarden,
    store: failing,
    begin(projectAuth, projectRules = {}, projectAlerts = {}) {
      clock = createTestClock();
      environment = createWebhookEnvironment();
      for (const [projectId, providerAuth] of Object.entries(projectAuth)) auth.set(projectId, providerAuth);
      for (const [projectId, projectRule] of Object.entries(projectRules)) rules.set(projectId, projectRule);
      for (const [projectId, projectAlert] of Object.entries(projectAlerts)) alerts.set(projectId, projectAlert);
      return {
        clock,
        environment,
        end() {
          for (const projectId of Object.keys(projectAuth)) auth.delete(projectId);
          for (const projectId of Object.keys(projectRules)) rules.delete(projectId);
          for (const projectId of Object.keys(projectAlerts)) alerts.delete(projectId);
          failing.failWith(undefined);
        },
      };
    },
    close: () => mailwarden.close(),
  };
}
