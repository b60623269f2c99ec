// An application's code against the published packages, typechecked in a project outside the repo under
// `module: nodenext` and under `moduleResolution: bundler`. It is compiled, never run.
import {
  createMailwarden,
  createMemoryStore,
  isMailwardenError,
  MailwardenError,
  attachSendGridTrackingId,
  createHttpHandler,
  type DeliveryEvent,
  type Store,
} from '@mailwarden/core';
import { checkSuppressionResponseSchema, errorBodySchema } from '@mailwarden/core/schemas';
import { createCheckCache, createEmailHasher, type StoredEvent } from '@mailwarden/core/store';
import { createDashboard, dashboardFor, type Dashboard } from '@mailwarden/dashboard';
import { createMailwardenRouter } from '@mailwarden/express';
import { mailwardenFrameworkErrors, mailwardenPlugin } from '@mailwarden/fastify';
import { createPostgresStore, migrate } from '@mailwarden/postgres';
import { createPrometheusMetrics, type PrometheusMetrics } from '@mailwarden/prometheus';
import { createRedisStore } from '@mailwarden/redis';
import { loadConfig, openStore, startService, type Service } from '@mailwarden/server';
import express from 'express';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import postgres from 'postgres';

export async function embedded(): Promise<string[]> {
  const mailwarden = createMailwarden({ store: createMemoryStore() });
  const event: DeliveryEvent = {
    provider: 'sendgrid',
    type: 'bounced',
    bounceClass: 'hard',
    messageId: 'm-1',
    recipient: 'bob@example.com',
    trackingId: 'welcome',
    occurredAt: new Date(),
    eventKey: 'evt-1',
  };
  await mailwarden.applyEvents('acme', [event]);
  const check = checkSuppressionResponseSchema.parse(await mailwarden.suppressions.check('acme', 'bob@example.com'));
  const request = attachSendGridTrackingId({ personalizations: [{ to: [{ email: 'ana@example.com' }] }] }, 'welcome');
  const { allowed } = await mailwarden.filterSuppressed(
    'acme',
    request.personalizations.flatMap((p) => p.to.map((to) => to.email)),
  );
  return check.suppressed ? allowed : [];
}

export async function onRedis(url: string): Promise<Store> {
  const store = createRedisStore({ client: new Redis(url), keyPrefix: 'mailwarden:' });
  return createCheckCache({ store });
}

export async function onPostgres(url: string): Promise<Store> {
  const sql = postgres(url);
  await migrate(sql, { schema: 'mailwarden' });
  return createPostgresStore({ sql, schema: 'mailwarden' });
}

export function inExpress(store: Store): express.Express {
  const app = express();
  app.use('/mailwarden', createMailwardenRouter({ mailwarden: createMailwarden({ store }), apiKeys: { secret: 'acme' }, dashboard: true }));
  return app;
}

export async function inFastify(store: Store, dashboard: Dashboard = createDashboard()): Promise<void> {
  const app = Fastify();
  app.setErrorHandler(mailwardenFrameworkErrors);
  await app.register(mailwardenPlugin, {
    prefix: '/mailwarden',
    mailwarden: createMailwarden({ store }),
    apiKeys: { secret: 'acme' },
    dashboard: dashboardFor(dashboard) ?? false,
  });
}

export async function handlerAlone(): Promise<number> {
  const handler = createHttpHandler(createMailwarden(), { apiKeys: { secret: 'acme' } });
  const answer = await handler.handle({ method: 'GET', path: '/openapi.json', query: '', headers: {} });
  return answer.status;
}

export function codeOf(error: unknown): string | undefined {
  if (isMailwardenError(error)) return error.code;
  return errorBodySchema.safeParse(error).success ? 'body' : undefined;
}

export const hashed: string = createEmailHasher()('bob@example.com');
export const thrown = new MailwardenError('store_unavailable', 'The store did not answer.');
export type Written = StoredEvent['suppression'];

export async function measured(): Promise<string> {
  const metrics: PrometheusMetrics = createPrometheusMetrics({ projectLabel: true });
  await createMailwarden({ metrics }).suppressions.add('acme', 'bob@example.com');
  return `${metrics.contentType}\n${await metrics.text()}`;
}

export async function service(): Promise<Service> {
  const config = loadConfig({ env: {} });
  return startService(config, await openStore({}));
}
