import { randomBytes } from 'node:crypto';
import {
  createMemoryStore,
  type AlertRules,
  type ApiKeys,
  type HttpLogger,
  type Mailwarden,
  type Provider,
  type Store,
  type SuppressionRules,
  type WebhookRequest,
} from '@mailwarden/core';
import type { TestClock } from './clock.js';
import type { FailingStore } from './failing-store.js';
import { send, type Answer, type HttpCall } from './http.js';
import { createMailwardenHost, type MailwardenHost } from './mailwarden-host.js';
import {
  createProviderSecrets,
  headersOf,
  providerAuthOf,
  type ProviderSecrets,
  type TestWebhookEnvironment,
} from './provider-requests.js';
import type { RunningServer, StartServer } from './servers.js';

/** The two projects every test app has; both configure every provider. */
export interface Projects {
  acme: string;
  globex: string;
}

/** The API keys of every test app (unless the test brings its own `apiKeys`), by what they open. */
export const API_KEYS = {
  acme: 'key-acme',
  globex: 'key-globex',
  /** Opens acme and globex, nothing else. */
  both: 'key-acme-globex',
  /** `'*'`: every project. */
  admin: 'key-admin',
} as const;

export type KeyName = keyof typeof API_KEYS;

export interface LoggedError {
  context: Record<string, unknown>;
  message: string;
}

export interface TestAppOptions {
  start: StartServer;
  /** The mailwarden to serve, shared with other tests; else `store` gets a mailwarden of this app's own. */
  host?: MailwardenHost;
  /** Without a `host`: the store of this app's own mailwarden (closed with the app). */
  store?: Store;
  /** Project ids; default: random, so a shared remote store never mixes two tests. */
  projects?: Projects;
  /** Provider secrets per project; default: fresh ones. */
  secrets?: Record<keyof Projects, ProviderSecrets>;
  /** Default: `API_KEYS` mapped onto the projects. */
  apiKeys?: ApiKeys;
  /** Keys that name this app's projects (a list of entries with scopes, say), in place of `apiKeys`. */
  apiKeysOf?: (projects: Projects) => ApiKeys;
  retryAfterSeconds?: number;
  /** Suppression rules of either project (the soft-bounce rule, expiry); default none. */
  rules?: Partial<Record<keyof Projects, SuppressionRules>>;
  /** Alert rules of either project; default none. */
  alerts?: Partial<Record<keyof Projects, AlertRules>>;
}

export interface ApiCall extends Omit<HttpCall, 'method'> {
  /** Sends `X-API-Key` with the key of that name, or this literal key; `null` sends none. Default `'acme'`. */
  key?: KeyName | (string & {}) | null;
}

/** A mailwarden app for one test, served by a binding on a loopback port. */
export interface TestApp {
  server: RunningServer;
  projects: Projects;
  secrets: Record<keyof Projects, ProviderSecrets>;
  clock: TestClock;
  environment: TestWebhookEnvironment;
  mailwarden: Mailwarden;
  /** The mailwarden's store; `failWith` makes it fail until the test ends. */
  store: FailingStore;
  /** What the handler logged (unexpected errors, store failures). */
  logged: LoggedError[];
  /** Any request; `path` is relative to the mount point. */
  request(path: string, call?: HttpCall): Promise<Answer>;
  /** An API request with an `X-API-Key`. */
  api(method: string, path: string, call?: ApiCall): Promise<Answer>;
  /** Posts a provider's request to `/projects/{projectId}/webhooks/{provider}`, bytes and headers unchanged. */
  webhook(provider: Provider | (string & {}), projectId: string, request: WebhookRequest): Promise<Answer>;
  close(): Promise<void>;
}

export function randomProjects(): Projects {
  const suffix = randomBytes(5).toString('hex');
  return { acme: `acme-${suffix}`, globex: `globex-${suffix}` };
}

/** `API_KEYS` on the projects: the map form, every key with every scope. */
function defaultApiKeys(projects: Projects): ApiKeys {
  return {
    [API_KEYS.acme]: projects.acme,
    [API_KEYS.globex]: projects.globex,
    [API_KEYS.both]: [projects.acme, projects.globex],
    [API_KEYS.admin]: '*',
  };
}

/** Serves a mailwarden (the host's, or a fresh one on `store`) through `start`, for the projects of one test. */
export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  const projects = options.projects ?? randomProjects();
  const secrets = options.secrets ?? { acme: createProviderSecrets(projects.acme), globex: createProviderSecrets(projects.globex) };
  const ownHost = options.host === undefined;
  const host = options.host ?? createMailwardenHost(options.store ?? createMemoryStore());
  const byProjectId = <T>(values: Partial<Record<keyof Projects, T>> = {}) =>
    Object.fromEntries(Object.entries(values).map(([project, value]) => [projects[project as keyof Projects], value as T]));
  const tenancy = host.begin(
    { [projects.acme]: providerAuthOf(secrets.acme), [projects.globex]: providerAuthOf(secrets.globex) },
    byProjectId(options.rules),
    byProjectId(options.alerts),
  );
  const logged: LoggedError[] = [];
  const logger: HttpLogger = { error: (context, message) => void logged.push({ context, message }) };
  const apiKeys = options.apiKeysOf?.(projects) ?? options.apiKeys ?? defaultApiKeys(projects);
  let server: RunningServer;
  try {
    server = await options.start({
      mailwarden: host.mailwarden,
      apiKeys,
      logger,
      ...(options.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: options.retryAfterSeconds }),
    });
  } catch (error) {
    tenancy.end();
    if (ownHost) await host.close();
    throw error;
  }

  const request = (path: string, call?: HttpCall) => send(server.baseUrl + path, call);
  return {
    server,
    projects,
    secrets,
    clock: tenancy.clock,
    environment: tenancy.environment,
    mailwarden: host.mailwarden,
    store: host.store,
    logged,
    request,
    api(method, path, { key = 'acme', ...call } = {}) {
      const headers: Record<string, string> = { ...call.headers };
      if (key !== null) headers['x-api-key'] = Object.hasOwn(API_KEYS, key) ? API_KEYS[key as KeyName] : key;
      return request(path, { ...call, method, headers });
    },
    webhook(provider, projectId, webhookRequest) {
      return request(`/projects/${projectId}/webhooks/${provider}`, {
        method: webhookRequest.method,
        headers: headersOf(webhookRequest),
        body: webhookRequest.rawBody,
      });
    },
    async close() {
      try {
        await server.close();
      } finally {
        tenancy.end();
        if (ownHost) await host.close();
      }
    },
  };
}
