// The same application as a CommonJS module (`require`, the `.d.cts` declarations), typechecked under
// `module: nodenext`. The server is ESM-only: on Node 20.19+ `require()` loads it, and TypeScript's
// nodenext allows it since 5.8.
import core = require('@mailwarden/core');
import schemas = require('@mailwarden/core/schemas');
import storeKit = require('@mailwarden/core/store');
import dashboard = require('@mailwarden/dashboard');
import mailwardenExpress = require('@mailwarden/express');
import mailwardenFastify = require('@mailwarden/fastify');
import mailwardenPostgres = require('@mailwarden/postgres');
import mailwardenPrometheus = require('@mailwarden/prometheus');
import mailwardenRedis = require('@mailwarden/redis');
import server = require('@mailwarden/server');
import express = require('express');
import Fastify = require('fastify');
import ioredis = require('ioredis');
import postgres = require('postgres');

export async function embedded(): Promise<boolean> {
  const mailwarden = core.createMailwarden({ store: core.createMemoryStore() });
  await mailwarden.suppressions.add('acme', 'bob@example.com');
  return schemas.checkSuppressionResponseSchema.parse(await mailwarden.suppressions.check('acme', 'bob@example.com')).suppressed;
}

export async function measured(): Promise<string> {
  const metrics = mailwardenPrometheus.createPrometheusMetrics({ defaultMetrics: false });
  await core.createMailwarden({ metrics }).suppressions.add('acme', 'bob@example.com');
  return metrics.text();
}

export async function onRedis(url: string): Promise<core.Store> {
  return storeKit.createCheckCache({
    store: mailwardenRedis.createRedisStore({ client: new ioredis.Redis(url), keyPrefix: 'mailwarden:' }),
  });
}

export async function onPostgres(url: string): Promise<core.Store> {
  const sql = postgres(url);
  await mailwardenPostgres.migrate(sql);
  return mailwardenPostgres.createPostgresStore({ sql });
}

export async function bindings(store: core.Store): Promise<void> {
  const mailwarden = core.createMailwarden({ store });
  express().use(
    '/mailwarden',
    mailwardenExpress.createMailwardenRouter({ mailwarden, apiKeys: { secret: 'acme' }, dashboard: dashboard.createDashboard() }),
  );
  await Fastify.fastify().register(mailwardenFastify.mailwardenPlugin, {
    prefix: '/mailwarden',
    mailwarden,
    apiKeys: { secret: 'acme' },
    dashboard: true,
  });
}

export function codeOf(error: unknown): core.ErrorCode | undefined {
  return core.isMailwardenError(error) ? error.code : undefined;
}

export async function service(): Promise<string> {
  const started = await server.startService(server.loadConfig({ env: {} }), await server.openStore({}));
  await started.close();
  return started.url;
}
