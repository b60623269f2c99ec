import type { TestApp } from '@mailwarden/http-test-suite';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectBrowser, dashboardUrl, event, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;
/** Keys the resolver no longer accepts: revoking one while a person is signed in. */
const revoked = new Set<string>();

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp({
    apiKeys: (key) => {
      if (revoked.has(key)) return undefined;
      if (key === 'key-acme' || key === 'key-acme-2') return app.projects.acme;
      if (key === 'key-globex') return app.projects.globex;
      return undefined;
    },
  });
  await app.mailwarden.applyEvents(app.projects.acme, [event({ recipient: 'alice@example.com', trackingId: 'acme-launch' })]);
  await app.mailwarden.applyEvents(app.projects.globex, [event({ recipient: 'secret@globex.example', trackingId: 'globex-secret' })]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

test('a good key opens the project; the key lives in this tab’s sessionStorage only, never the URL, localStorage or a cookie', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('rowheader', { name: 'alice@example.com', exact: true }).waitFor();
  expect(page.url()).toBe(dashboardUrl(app, 'messages'));
  const storage = await page.evaluate(() => ({
    session: Object.values(sessionStorage),
    local: localStorage.length,
    cookie: document.cookie,
    history: history.length,
  }));
  expect(storage.session.join()).toContain('key-acme');
  expect([storage.local, storage.cookie]).toStrictEqual([0, '']);
  expect(watched.requests.filter((url) => url.includes('key-acme'))).toStrictEqual([]);
  expect((await watched.context.cookies()).length).toBe(0);

  // A reload keeps the session (same tab); a new tab does not have it.
  await page.reload();
  await page.getByRole('rowheader', { name: 'alice@example.com', exact: true }).waitFor();
  const other = await watched.context.newPage();
  await other.goto(dashboardUrl(app, 'messages'));
  await other.getByRole('button', { name: 'Sign in' }).waitFor();
  await other.close();

  // Sign out forgets the key.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await watched.close();
});

test('a shared link opened signed out leads through sign-in to the same view', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=acme-launch`);
  await page.getByLabel('Project').fill(app.projects.acme);
  await page.getByLabel('API key').fill('key-acme');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Counts for acme-launch' }).waitFor();
  expect(page.url()).toBe(`${dashboardUrl(app, 'messages')}?trackingId=acme-launch`);
  await watched.close();
});

test('a wrong key shows the API’s refusal and nothing of the project', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/401/] });
  const { page } = watched;
  await page.goto(dashboardUrl(app));
  await page.getByLabel('Project').fill(app.projects.acme);
  await page.getByLabel('API key').fill('not-a-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('The API key is not valid.');
  expect(await page.getByRole('navigation', { name: 'Dashboard' }).count()).toBe(0);
  expect(await page.getByRole('table').count()).toBe(0);
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await watched.close();
});

test('another project’s key is refused for this project, and shows none of either', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/403/] });
  const { page } = watched;
  await page.goto(dashboardUrl(app));
  await page.getByLabel('Project').fill(app.projects.acme);
  await page.getByLabel('API key').fill('key-globex');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('This API key is not valid for this project.');
  const text = await page.locator('body').textContent();
  expect(text).not.toContain('alice@example.com');
  expect(text).not.toContain('globex-secret');
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await watched.close();
});

test('a 401 from any later call (the key was revoked) returns to sign-in with the reason', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/401/] });
  const { page } = watched;
  await signIn(page, app, { key: 'key-acme-2' });
  revoked.add('key-acme-2');
  await page.getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('The API key is not valid.');
  expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  await watched.close();
});
