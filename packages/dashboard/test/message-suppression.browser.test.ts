import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectBrowser, dashboardUrl, event, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({
      recipient: 'gone@example.com',
      messageId: 'sg-gone-1',
      type: 'bounced',
      bounceClass: 'hard',
      occurredAt: new Date('2026-11-20T10:00:00.000Z'),
    }),
    event({ recipient: 'fine@example.com', messageId: 'sg-fine-1', type: 'delivered', occurredAt: new Date('2026-11-20T11:00:00.000Z') }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const checkViaApi = async (email: string) =>
  jsonOf(await app.api('GET', `/projects/${app.projects.acme}/suppressions/check?email=${encodeURIComponent(email)}`));

test('a message says whether its recipient is suppressed, and removing it there asks first, then says it is done', async () => {
  // The history asks the feed, which this app has not: 404.
  const watched = await openPage(browser, app, { expectedProblems: [/404/] });
  const { page } = watched;
  await signIn(page, app);
  const suppression = page.getByRole('region', { name: 'Suppression' });

  await page.getByRole('link', { name: 'fine@example.com' }).click();
  await expect.poll(() => suppression.getByRole('status').textContent()).toBe('fine@example.com is not suppressed.');
  // Nothing to remove; its history is the change feed's, which this app has not.
  expect(await suppression.getByRole('button').allTextContents()).toStrictEqual(['History of the suppressions of fine@example.com']);
  await suppression.getByRole('button', { name: /^History/ }).click();
  await page.getByRole('dialog').getByText('The history needs the change feed').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('link', { name: 'Back to the messages' }).click();

  await page.getByRole('link', { name: 'gone@example.com' }).click();
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe('gone@example.com is suppressed: Hard bounce, since 2026-11-20 10:00:00 UTC. Sending to it is held back.');

  // The same confirmation as on the Suppressions page; Cancel keeps it.
  const remove = suppression.getByRole('button', { name: 'Remove from the suppression list' });
  await remove.click();
  const dialog = page.getByRole('dialog', { name: 'Remove this suppression?' });
  expect(await dialog.locator('#remove-description').textContent()).toBe(
    'gone@example.com (Hard bounce) will no longer be held back from sending.',
  );
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  expect(await checkViaApi('gone@example.com')).toMatchObject({ suppressed: true });

  await remove.click();
  await dialog.getByRole('button', { name: 'Remove' }).click();
  // What happened replaces the old answer: nothing on the page still says it is suppressed.
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe('Removed gone@example.com from the suppression list: it is no longer held back from sending.');
  expect(await page.getByText('is suppressed').count()).toBe(0);
  expect(await remove.count()).toBe(0);
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('recipient-suppression-title');
  expect(await checkViaApi('gone@example.com')).toStrictEqual({ email: 'gone@example.com', suppressed: false });

  // Reopened, the message asks again.
  await page.reload();
  await expect.poll(() => suppression.getByRole('status').textContent()).toBe('gone@example.com is not suppressed.');
  await page.goto(dashboardUrl(app, 'suppressions'));
  await page.getByText('The project-wide list is empty.').waitFor();
  await watched.close();
});
