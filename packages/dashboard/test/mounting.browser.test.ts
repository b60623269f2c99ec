import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailwarden, type Mailwarden } from '@mailwarden/core';
import { createMailwardenRouter } from '@mailwarden/express';
import { mailwardenPlugin } from '@mailwarden/fastify';
import { DEMO_PROJECT, loadConfig, openStore, seedDemo, startService, withDemoProject } from '@mailwarden/server';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { columnTexts, connectBrowser, event } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await connectBrowser();
});
afterAll(() => browser?.close());

/** Signs in at `dashboard`, chooses a tracking ID with the combobox, and returns the API calls the page made. */
async function useDashboard(
  page: Page,
  dashboard: string,
  { project, key, trackingId }: { project: string; key: string; trackingId: string },
): Promise<string[]> {
  const calls: string[] = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'fetch') calls.push(new URL(request.url()).pathname);
  });
  await page.goto(dashboard);
  await page.getByLabel('Project').fill(project);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('table').waitFor();
  await page.getByRole('combobox', { name: 'Tracking ID' }).pressSequentially(trackingId.slice(0, 4));
  await page.getByRole('option', { name: new RegExp(`^${trackingId}`) }).click();
  await page.getByRole('heading', { name: `Counts for ${trackingId}` }).waitFor();
  await expect.poll(async () => new Set(await columnTexts(page, 'Tracking ID'))).toStrictEqual(new Set([trackingId]));
  expect(page.url()).toBe(`${dashboard}messages?trackingId=${trackingId}`);
  return calls;
}

describe('under any mount point of the host app', () => {
  let mailwarden: Mailwarden;
  const servers: Server[] = [];
  beforeAll(async () => {
    mailwarden = createMailwarden();
    await mailwarden.applyEvents('acme', [
      event({ recipient: 'a@example.com', trackingId: 'spring-sale' }),
      event({ recipient: 'b@example.com', trackingId: 'other' }),
    ]);
  });
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const options = () => ({ mailwarden, apiKeys: { 'key-acme': 'acme' }, dashboard: true });

  test.each([
    [
      'Express 5, a router inside a router',
      '/admin/mail',
      async () => {
        const app = express();
        const admin = express.Router();
        admin.use('/mail', createMailwardenRouter(options()));
        app.use('/admin', admin);
        return listen(createServer(app));
      },
    ],
    [
      'Express 4',
      '/mail-4',
      async () => {
        const app = express4();
        app.use('/mail-4', createMailwardenRouter(options()));
        return listen(createServer(app));
      },
    ],
    [
      'Fastify, a nested prefix',
      '/admin/mail',
      async () => {
        const app = Fastify();
        await app.register(mailwardenPlugin, { prefix: '/admin/mail', ...options() });
        await app.ready();
        return listen(app.server);
      },
    ],
  ])('%s at %s', async (_name, prefix, start) => {
    const origin = await start();
    const context = await browser.newContext();
    const calls = await useDashboard(await context.newPage(), `${origin}${prefix}/dashboard/`, {
      project: 'acme',
      key: 'key-acme',
      trackingId: 'spring-sale',
    });
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.startsWith(`${prefix}/projects/acme/`), call).toBe(true);
    await context.close();
  });
});

describe('mailwarden serve', () => {
  test('serves the dashboard at {basePath}/dashboard/ with the demo data, for the demo key', async () => {
    const { config, apiKey } = withDemoProject(
      loadConfig({ env: { PORT: '0', MAILWARDEN_BASE_PATH: '/mailwarden', MAILWARDEN_LOG_LEVEL: 'silent' } }),
    );
    const service = await startService(config, await openStore({}));
    try {
      await seedDemo(service.mailwarden);
      const context = await browser.newContext();
      const page = await context.newPage();
      const calls = await useDashboard(page, `${service.url}/dashboard/`, {
        project: DEMO_PROJECT,
        key: apiKey,
        trackingId: 'newsletter-2026-11-20',
      });
      for (const call of calls) expect(call.startsWith('/mailwarden/projects/demo/'), call).toBe(true);
      // The demo looks like real use: several campaigns, hard and soft bounces, complaints, both kinds of suppression.
      await page.getByRole('link', { name: 'Tracking IDs' }).click();
      await expect.poll(async () => (await columnTexts(page, 'Tracking ID')).length).toBeGreaterThanOrEqual(5);
      await page.getByRole('link', { name: 'Messages', exact: true }).click();
      for (const status of ['bounced', 'soft_bounced', 'complained'] as const) {
        await page.getByLabel('Status').selectOption(status);
        await expect.poll(async () => (await columnTexts(page, 'Recipient')).length).toBeGreaterThan(0);
      }
      await page.getByRole('link', { name: 'Suppressions' }).click();
      await expect
        .poll(async () => new Set(await columnTexts(page, 'Reason')))
        .toStrictEqual(new Set(['Manual', 'Complaint', 'Hard bounce']));
      await context.close();
    } finally {
      await service.close();
    }
  });

  test('`dashboard: false` (MAILWARDEN_DASHBOARD=false) turns it off', async () => {
    const config = loadConfig({ env: { PORT: '0', MAILWARDEN_DASHBOARD: 'false', MAILWARDEN_LOG_LEVEL: 'silent' } });
    expect(config.dashboard).toBe(false);
    const service = await startService(config, await openStore({}));
    try {
      expect((await fetch(`${service.url}/dashboard/`)).status).toBe(404);
    } finally {
      await service.close();
    }
  });
});
