import { MailwardenError } from '@mailwarden/core';
import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { columnTexts, connectBrowser, event, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({ recipient: 'bounced@example.com', type: 'bounced', occurredAt: new Date('2026-03-01T00:00:00.000Z') }),
    event({ recipient: 'angry@example.com', type: 'complained', occurredAt: new Date('2026-03-02T00:00:00.000Z') }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const checkViaApi = async (email: string) =>
  jsonOf(await app.api('GET', `/projects/${app.projects.acme}/suppressions/check?email=${encodeURIComponent(email)}`));

test('add, check and remove a suppression: each change shows at once and is true in the API', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('heading', { level: 1, name: 'Suppressions' }).waitFor();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com', 'bounced@example.com']);
  expect(await columnTexts(page, 'Reason')).toStrictEqual(['Complaint', 'Hard bounce']);
  expect(await columnTexts(page, 'Suppressed since')).toStrictEqual(['2026-03-02 00:00:00 UTC', '2026-03-01 00:00:00 UTC']);

  // The check's answer follows every change, so it never contradicts the notice beside it.
  const checkResult = page.getByRole('form', { name: 'Check an address' }).locator('.result');
  await page.getByLabel('Email to check').fill('someone@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await expect.poll(() => checkResult.textContent()).toBe('someone@example.com is not suppressed.');

  // Add by hand: the list shows it first, the API agrees.
  await page.getByLabel('Email to suppress').fill('Someone@Example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('Added someone@example.com to the project-wide list.').waitFor();
  await expect.poll(() => checkResult.textContent()).toMatch(/^someone@example.com is suppressed: Manual, since /);
  await expect.poll(async () => (await columnTexts(page, 'Email'))[0]).toBe('someone@example.com');
  expect(await checkViaApi('someone@example.com')).toMatchObject({ suppressed: true, reason: 'manual' });
  // Adding it again changes nothing, and says so.
  await page.getByLabel('Email to suppress').fill('someone@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('someone@example.com was already on the project-wide list (Manual); nothing changed.').waitFor();
  // An invalid address gets the API's own message.
  await page.getByLabel('Email to suppress').fill('not an address');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('Could not add the address.');

  // Check other addresses.
  await page.getByLabel('Email to check').fill('bounced@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('bounced@example.com is suppressed: Hard bounce, since 2026-03-01 00:00:00 UTC.').waitFor();
  await page.getByLabel('Email to check').fill('fresh@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('fresh@example.com is not suppressed.').waitFor();
  await page.getByLabel('Email to check').fill('someone@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await expect.poll(() => checkResult.textContent()).toMatch(/^someone@example.com is suppressed/);

  // Remove asks first; Cancel (or Escape) keeps the entry.
  await page.getByRole('button', { name: 'Remove someone@example.com' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove this suppression?' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Remove someone@example.com' }).click();
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  expect(await checkViaApi('someone@example.com')).toMatchObject({ suppressed: true });

  await page.getByRole('button', { name: 'Remove someone@example.com' }).click();
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed someone@example.com from the project-wide list.').waitFor();
  await expect.poll(() => checkResult.textContent()).toBe('someone@example.com is not suppressed.');
  expect(await page.getByText('someone@example.com is suppressed').count()).toBe(0);
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com', 'bounced@example.com']);
  expect(await checkViaApi('someone@example.com')).toStrictEqual({ email: 'someone@example.com', suppressed: false });
  await watched.close();
});

test('a store that is down: every page says so with the API’s message and offers Retry, which recovers', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/503/] });
  const { page } = watched;
  await signIn(page, app);
  app.store.failWith(() => new MailwardenError('store_unavailable', 'The store did not answer in time.'));
  try {
    // Every part of a page that could not load says so: on Messages, the counts per day and the list.
    for (const [link, failed] of [
      ['Tracking IDs', 1],
      ['Suppressions', 1],
      ['Messages', 2],
    ] as const) {
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link }).click();
      await page.getByRole('heading', { level: 1, name: link }).waitFor();
      await expect
        .poll(() => page.getByRole('alert').allTextContents())
        .toStrictEqual(
          Array<string>(failed).fill('The store is down, so mailwarden cannot answer right now.The store did not answer in time.Retry'),
        );
    }
    // The combobox reports the failure in its status instead of showing no options silently.
    await page.getByRole('button', { name: 'Show tracking IDs' }).click();
    await expect.poll(() => page.locator('.combobox-status').textContent()).toBe('The search failed: The store did not answer in time.');
    await page.keyboard.press('Escape');
  } finally {
    app.store.failWith(undefined);
  }
  // Last to first, so clicking one never moves the others.
  const retries = page.getByRole('button', { name: 'Retry' });
  for (let index = (await retries.count()) - 1; index >= 0; index--) await retries.nth(index).click();
  await page.getByRole('table').waitFor();
  await page
    .getByRole('region', { name: 'Counts per day in the project' })
    .getByText('Loading the counts per day…')
    .waitFor({ state: 'detached' });
  expect(await page.getByRole('alert').count()).toBe(0);
  await watched.close();
});

test('search by the start of an address, kept in the address; paging says where it is and survives a reload', async () => {
  await app.mailwarden.suppressions.addMany(
    app.projects.acme,
    Array.from({ length: 60 }, (_, i) => ({ email: `paged${String(i).padStart(2, '0')}@example.com` })),
  );
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('table').waitFor();
  const pager = page.getByRole('navigation', { name: 'Pages of suppressions' });
  expect(await pager.locator('.position').textContent()).toBe('Showing 1–50');
  const firstPage = await columnTexts(page, 'Email');
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect.poll(() => pager.locator('.position').textContent()).toMatch(/^Showing 51–/);
  const secondPage = await columnTexts(page, 'Email');
  expect(secondPage.some((email) => firstPage.includes(email))).toBe(false);
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(secondPage);
  await pager.getByRole('button', { name: 'Previous page' }).click();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(firstPage);

  const search = page.getByLabel('Search addresses');
  await search.fill('ANG');
  await search.press('Enter');
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com']);
  expect(new URL(page.url()).searchParams.get('email')).toBe('ANG');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com']);
  expect(await search.inputValue()).toBe('ANG');
  await search.fill('nobody-starts-so');
  await search.press('Enter');
  await page.getByText('No address on the project-wide list starts with nobody-starts-so.').waitFor();
  await watched.close();
});
