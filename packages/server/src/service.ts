import { answerClientError, answerConnect, createMailwarden, isMailwardenError, MailwardenError, type Mailwarden } from '@mailwarden/core';
import { fetchSnsCertificateTrustingTestSigner } from '@mailwarden/core/testing';
import { mailwardenFrameworkErrors, mailwardenPlugin } from '@mailwarden/fastify';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { CONFIG_ACTOR } from '@mailwarden/core/store';
import {
  alertRulesOf,
  apiKeyGrants,
  defaultStreams,
  projectApiKeys,
  outboundOf,
  suppressionRulesOf,
  unsubscribeLinksOf,
  webhookAuth,
  type ServerConfig,
} from './config.js';
import { createServiceMetrics, type ServiceMetrics } from './metrics.js';
import type { OpenedStore } from './store-settings.js';
import { keyNameChanges, restartNeeded } from './reload.js';

export interface Service {
  app: FastifyInstance;
  mailwarden: Mailwarden;
  /** The base URL of the API once listening, e.g. `http://127.0.0.1:3000/mailwarden`. */
  url: string;
  /** `/metrics` on its own listener (`metrics.listen`), once listening; absent when it is served at `url`'s origin or not at all. */
  metricsUrl?: string;
  /**
   * Applies a new configuration without a restart (docs/server.md, "Reloading the configuration"): its
   * keys, webhook secrets and unsubscribe secrets replace the old ones between two requests, then the
   * keys are synced to the store's feed. Refused (logged at error, the old configuration kept, `false`)
   * when it changes a setting that needs a restart.
   */
  reload(next: ServerConfig): Promise<boolean>;
  /** Stops taking requests, lets in-flight ones finish, then closes the store. Safe to call twice. */
  close(): Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often expired data (suppressions, soft-bounce history, token claims, old messages) is purged. */
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** How often with the change feed on: it reports expiries when the sweep deletes them, and trims old changes. */
const FEED_PURGE_INTERVAL_MS = 60 * 1000;
/**
 * Calls of the store's bounded purge per sweep, at most: it goes on while a call deletes something, so a
 * backlog (a large import that expired at once) clears in a few sweeps without one holding the store long.
 */
const PURGE_CALLS_PER_SWEEP = 100;

/**
 * The standalone service: Fastify with the mailwarden plugin (and its dashboard, unless turned off) under
 * `basePath`, `/health` (the process answers) and `/ready` (the store answers). Logs are JSON lines without addresses in clear: query
 * values of `email` are redacted, and handled errors carry only their code.
 */
export async function startService(
  config: ServerConfig,
  opened: OpenedStore,
  options: {
    logStream?: { write(line: string): void };
    /** The metrics `/metrics` serves; default a new Prometheus registry (`@mailwarden/prometheus`) when `metrics.enabled`. */
    metrics?: ServiceMetrics;
  } = {},
): Promise<Service> {
  // The address it listens on (with basePath), once it does: where the demo's unsubscribe links point.
  let listeningUrl = '';
  // What a reload replaces, swapped whole in one assignment: a request reads either the old or the new.
  let live = liveSettings(config);
  const configuredLinks = unsubscribeLinksOf(config, () => listeningUrl);
  const unsubscribeLinks = configuredLinks === undefined ? undefined : { ...configuredLinks, secrets: () => live.unsubscribeSecrets };
  const rules = suppressionRulesOf(config);
  const alerts = alertRulesOf(config);
  const outbound = outboundOf(config);
  const metrics = config.metrics.enabled ? (options.metrics ?? (await createServiceMetrics())) : undefined;
  const app = Fastify({
    trustProxy: config.trustProxy,
    frameworkErrors: mailwardenFrameworkErrors,
    // What Node refuses before Fastify sees it (malformed HTTP, headers too large, a stalled request)
    // gets mailwarden's error body too.
    clientErrorHandler: answerClientError,
    // A stalled upload is closed after `idleTimeoutMs` of silence, however long a steady one takes.
    connectionTimeout: config.idleTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node checks headers and request timeouts every 30 s by default: a second keeps them close to their values.
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs) },
    // One line per request, when its answer is sent (Fastify's own two are an "incoming request" line
    // and a "request completed" line without the path): half the writes of a busy import.
    logController: new LogController({ disableRequestLogging: true }),
    logger: {
      level: config.logLevel,
      ...(options.logStream === undefined ? {} : { stream: options.logStream }),
      serializers: {
        req: (request) => ({ method: request.method, url: redactQuery(request.url), remoteAddress: request.ip }),
      },
    },
  });
  const mailwarden = createMailwarden({
    store: opened.store,
    ...(rules === undefined ? {} : { rules }),
    ...(alerts === undefined ? {} : { alerts }),
    // Delivery runs on timers of its own, never on a request's path (docs/server.md, "Outbound webhooks").
    ...(outbound === undefined ? {} : { outbound }),
    ...(metrics === undefined ? {} : { metrics }),
    ...(unsubscribeLinks === undefined ? {} : { unsubscribeLinks }),
    ...(config.hashKey === undefined ? {} : { hashKey: config.hashKey }),
    ...(config.cursorSecret === undefined ? {} : { cursorSecret: config.cursorSecret }),
    timeline: { personalData: config.timelinePersonalData },
    defaultStream: defaultStreams(config),
    // Outbound failures (an endpoint paused, a cursor overtaken by retention) in the service's own log.
    logger: app.log,
    webhooks: {
      auth: (projectId) => live.webhooks[projectId],
      // Test only (off by default): the testing kit's SNS certificate is trusted besides SNS's own.
      ...(config.unsafeTrustTestSnsCertificate ? { environment: { fetchCertificate: fetchSnsCertificateTrustingTestSigner } } : {}),
    },
  });

  // Connections of requests still running at shutdown are closed after their response, instead of
  // idling in keep-alive and holding `app.close()` up until the keep-alive timeout.
  let draining = false;
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
  });

  if (config.unsafeTrustTestSnsCertificate) {
    app.log.warn(
      "unsafeTrustTestSnsCertificate is on: SES webhooks signed with the testing kit's public SNS test key are accepted for allowlisted topics. Never in production.",
    );
  }
  app.server.on('connect', answerConnect);
  // Outside mailwarden's prefix, Fastify would answer with bodies of its own: every answer of the
  // service has the documented error body instead.
  if (config.basePath !== '') {
    app.setNotFoundHandler((request, reply) =>
      sendError(reply, new MailwardenError('not_found', `No endpoint at ${request.url.split('?')[0]}.`)),
    );
  }
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error }, 'unexpected error');
    sendError(reply, frameworkError(status));
  });
  app.get('/health', async () => ({ status: 'ok' }));
  // A probe that hangs tells a load balancer nothing, and its own timeout may be longer than ours.
  const readyDeadlineMs = 500;
  app.get('/ready', async (_request, reply) => {
    let deadline: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        opened.ready?.() ?? opened.store.getSuppression('mailwarden-ready', '0'.repeat(64)),
        new Promise((_resolve, reject) => {
          deadline = setTimeout(
            reject,
            readyDeadlineMs,
            new MailwardenError('store_unavailable', `The store did not answer within ${readyDeadlineMs} ms.`),
          );
        }),
      ]);
      return { status: 'ready', store: opened.kind };
    } catch (error) {
      const answer =
        isMailwardenError(error) && error.code === 'store_unavailable'
          ? error
          : new MailwardenError('store_unavailable', 'The store does not answer.');
      return reply.code(503).header('retry-after', '5').send(answer.toBody());
    } finally {
      clearTimeout(deadline);
    }
  });
  await app.register(mailwardenPlugin, {
    prefix: config.basePath,
    mailwarden,
    // Looked up by the key's SHA-256 in the current keys (docs/server.md, "API keys").
    apiKeys: (key) => live.grants.get(createHash('sha256').update(key).digest('hex')),
    dashboard: config.dashboard,
    rateLimits: config.rateLimits,
    openapi: { servers: [{ url: config.basePath === '' ? '/' : config.basePath }] },
  });

  // Prometheus scrapes the origin, whatever basePath is; with `listen`, only a listener of its own answers.
  const metricsConfig = config.metrics;
  let metricsApp: FastifyInstance | undefined;
  if (metrics !== undefined) {
    if (metricsConfig.listen === undefined) serveMetrics(app, metrics, metricsConfig.token);
    else {
      metricsApp = Fastify({ clientErrorHandler: answerClientError, frameworkErrors: mailwardenFrameworkErrors });
      metricsApp.server.on('connect', answerConnect);
      metricsApp.setNotFoundHandler((request, reply) =>
        sendError(reply, new MailwardenError('not_found', `No endpoint at ${request.url.split('?')[0]}.`)),
      );
      metricsApp.setErrorHandler((error, _request, reply) =>
        sendError(reply, frameworkError((error as { statusCode?: number }).statusCode ?? 500)),
      );
      serveMetrics(metricsApp, metrics, metricsConfig.token);
    }
  }

  const purgeExpired = opened.purgeExpired;
  // With the feed on, expired suppressions become `suppression.expired` changes when the sweep deletes
  // them: every minute, so the feed reports an expiry within about a minute of it.
  const purgeIntervalMs = opened.store.changes === undefined ? PURGE_INTERVAL_MS : FEED_PURGE_INTERVAL_MS;
  const purge =
    purgeExpired === undefined
      ? undefined
      : setInterval(() => {
          sweepExpired(purgeExpired, Date.now()).then(
            // A sweep that found nothing is a debug line: with the feed on, sweeps come every minute.
            ({ purged, calls }) => app.log[purged === 0 ? 'debug' : 'info']({ purged, calls }, 'purged expired data'),
            (error: unknown) => app.log.error({ err: error }, 'purging expired data failed'),
          );
        }, purgeIntervalMs).unref();

  const address = await app.listen({ host: config.host, port: config.port });
  const metricsAddress =
    metricsApp === undefined
      ? undefined
      : await metricsApp.listen({ host: metricsConfig.listen?.host ?? config.host, port: metricsConfig.listen?.port ?? 0 });
  const url = `${address.replace(/:\/\/(0\.0\.0\.0|\[::1?\])/, '://localhost')}${config.basePath}`;
  listeningUrl = url;
  let closing: Promise<void> | undefined;
  // Key changes go to the feed: the audit trail's `key.*` changes (docs/server.md, "API keys").
  // One sync at a time, in reload order: an older sync never lands after a newer one.
  let syncing = Promise.resolve();
  const syncKeys = (synced: ServerConfig, removedProjects: readonly string[] = []) =>
    (syncing = syncing.then(() =>
      syncApiKeys(opened, synced, removedProjects, (error, projectId) =>
        app.log.error({ err: error, projectId }, 'recording the API keys in the change feed failed'),
      ),
    ));
  // Not awaited: a store slow to answer at start delays the trail's record, not the service.
  void syncKeys(config);
  let current = config;
  return {
    app,
    mailwarden,
    url,
    async reload(next) {
      const needRestart = restartNeeded(current, next);
      if (needRestart.length > 0) {
        app.log.error({ settings: needRestart }, `configuration not reloaded: a restart applies ${needRestart.join(', ')}`);
        return false;
      }
      const keys = keyNameChanges(current, next);
      const removedProjects = Object.keys(current.projects).filter((id) => !Object.hasOwn(next.projects, id));
      live = liveSettings(next);
      current = next;
      app.log.info({ keys }, 'configuration reloaded');
      await syncKeys(next, removedProjects);
      return true;
    },
    ...(metricsAddress === undefined
      ? {}
      : { metricsUrl: `${metricsAddress.replace(/:\/\/(0\.0\.0\.0|\[::1?\])/, '://localhost')}/metrics` }),
    close: () =>
      (closing ??= (async () => {
        clearInterval(purge);
        draining = true;
        await Promise.all([app.close(), metricsApp?.close(), syncing]);
        // Outbound delivery stops (a request in flight finishes, bounded by its timeout) before the
        // store closes under it; then the driver connection. Closing the store twice is harmless.
        await mailwarden.close();
        await opened.close();
      })()),
  };
}

/** What a reload swaps: the keys' grants by digest, each project's webhook authentication, the unsubscribe secrets. */
function liveSettings(config: ServerConfig) {
  return {
    grants: apiKeyGrants(config),
    webhooks: webhookAuth(config),
    unsubscribeSecrets: config.unsubscribeSecrets ?? [],
  };
}

/**
 * Makes each project's stored keys those of `config` (admin keys in every project), and a removed
 * project's none, as `config` (CONFIG_ACTOR). Only with the feed on: without it nothing reads them, and
 * the store holds what it held before keys were audited (docs/decisions.md, "Service: keys and reload").
 * A failure is logged: the service runs on with its keys, the trail misses the change until the next sync.
 */
export async function syncApiKeys(
  opened: OpenedStore,
  config: ServerConfig,
  removedProjects: readonly string[],
  onError: (error: unknown, projectId: string) => void,
): Promise<void> {
  if (opened.store.changes === undefined) return;
  const now = Date.now();
  const projects = [
    ...Object.keys(config.projects).map((id) => [id, projectApiKeys(config, id)] as const),
    ...removedProjects.map((id) => [id, []] as const),
  ];
  await Promise.all(
    projects.map(([projectId, keys]) =>
      opened.store.syncApiKeys(projectId, keys, now, CONFIG_ACTOR).catch((error: unknown) => onError(error, projectId)),
    ),
  );
}

/**
 * One sweep of expired data at `now`: the store's bounded purge, called again while it deletes
 * something, at most `PURGE_CALLS_PER_SWEEP` times. Returns how many items it deleted and in how many calls.
 */
export async function sweepExpired(
  purgeExpired: (now: number) => Promise<number>,
  now: number,
): Promise<{ purged: number; calls: number }> {
  let purged = 0;
  let calls = 0;
  while (calls < PURGE_CALLS_PER_SWEEP) {
    calls++;
    const deleted = await purgeExpired(now);
    purged += deleted;
    if (deleted === 0) break;
  }
  return { purged, calls };
}

/**
 * `GET /metrics` on `app`, at its root: the metrics' text, behind `Authorization: Bearer <token>` when a
 * token is configured (compared in constant time; 401 with the error body otherwise).
 */
function serveMetrics(app: FastifyInstance, metrics: ServiceMetrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(token);
  app.get('/metrics', async (request, reply) => {
    if (expected !== undefined) {
      const header = request.headers.authorization;
      if (header === undefined)
        return sendError(
          reply.header('www-authenticate', 'Bearer'),
          new MailwardenError('missing_api_key', 'Send the metrics token: Authorization: Bearer <token>.'),
        );
      const given = /^Bearer (.+)$/i.exec(header)?.[1];
      if (given === undefined || !timingSafeEqual(digest(given), expected))
        return sendError(
          reply.header('www-authenticate', 'Bearer'),
          new MailwardenError('invalid_api_key', 'The metrics token is not valid.'),
        );
    }
    return reply
      .header('content-type', metrics.contentType)
      .header('cache-control', 'no-store')
      .send(await metrics.text());
  });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function sendError(reply: FastifyReply, error: MailwardenError): FastifyReply {
  return reply.code(error.status).header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').send(error.toBody());
}

/** Mailwarden's error for a refusal Fastify makes itself, by its status. */
function frameworkError(status: number): MailwardenError {
  if (status === 404) return new MailwardenError('not_found', 'No endpoint here.');
  if (status === 413) return new MailwardenError('payload_too_large', 'The request body is too large.');
  if (status === 415)
    return new MailwardenError('unsupported_media_type', 'The request body has a Content-Type this endpoint does not take.');
  if (status < 500) return new MailwardenError('invalid_request', 'The request cannot be answered as sent.');
  return new MailwardenError('internal_error', 'Something went wrong on our side; the error is logged.');
}

/** Retention in milliseconds, from the configured days. */
export function retentionMs(config: ServerConfig): number | undefined {
  return config.retentionDays === undefined ? undefined : config.retentionDays * DAY_MS;
}

/** A request URL for logs: the value of every `email` query parameter replaced. */
export function redactQuery(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const parameters = new URLSearchParams(url.slice(queryStart + 1));
  for (const name of new Set(parameters.keys())) {
    if (name.toLowerCase().includes('email')) parameters.set(name, 'redacted');
  }
  return `${url.slice(0, queryStart)}?${parameters.toString()}`;
}
