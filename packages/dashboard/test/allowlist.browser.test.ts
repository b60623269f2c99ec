import { AxeBuilder } from '@axe-core/playwright';
import { MailwardenError } from '@mailwarden/core';
import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  columnTexts,
  connectBrowser,
  dashboardUrl,
  event,
  layoutProblems,
  listingTable,
  openPage,
  signIn,
  startDashboardApp,
} from './harness.js';

let browser: Browser;
let app: TestApp;

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const allowlistViaApi = async () =>
  (jsonOf(await app.api('GET', `/projects/${app.projects.acme}/allowlist`)) as { items: { entry: string }[] }).items.map(
    (item) => item.entry,
  );

test('add and remove allowlist entries: each change shows at once and is true in the API; an allowlisted address is not suppressed by its bounce', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400|404|503/] });
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Allowlist' }).click();
  await page.getByRole('heading', { level: 1, name: 'Allowlist' }).waitFor();
  expect(page.url()).toBe(dashboardUrl(app, 'allowlist'));
  await page.getByText('The allowlist is empty').waitFor();

  const entry = page.getByLabel('Address or @domain');
  const add = page.getByRole('button', { name: 'Add', exact: true });
  await entry.fill(' Seed@Example.com ');
  await add.click();
  await page.getByText('Added seed@example.com to the allowlist.').waitFor();
  expect(await entry.inputValue()).toBe('');
  await entry.fill('@Example.ORG');
  await add.click();
  await page.getByText('Added @example.org to the allowlist.').waitFor();
  await expect.poll(() => columnTexts(page, 'Entry')).toStrictEqual(['@example.org', 'seed@example.com']);
  expect(await columnTexts(page, 'Kind')).toStrictEqual(['Domain', 'Address']);
  expect(await columnTexts(page, 'Added')).toStrictEqual(['2026-04-02 10:00:00 UTC', '2026-04-02 10:00:00 UTC']);
  expect(await allowlistViaApi()).toStrictEqual(['@example.org', 'seed@example.com']);
  // Again: nothing changes, and the page says so. Not an address: the API's own message.
  await entry.fill('seed@example.com');
  await add.click();
  await page.getByText('seed@example.com was already on the allowlist.').waitFor();
  await entry.fill('not an address');
  await add.click();
  await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Could not add to the allowlist\./);
  expect(await entry.inputValue()).toBe('not an address');

  // Its hard bounce is recorded, not suppressed; an add by hand still is, and says the address was allowlisted.
  await app.mailwarden.applyEvents(app.projects.acme, [event({ recipient: 'seed@example.com', type: 'bounced' })]);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Suppressions' }).click();
  await page.getByLabel('Email to check').fill('seed@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('seed@example.com is not suppressed.').waitFor();
  await page.getByLabel('Email to suppress').fill('seed@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('Added seed@example.com to the project-wide list.').waitFor();
  const row = listingTable(page).getByRole('row', { name: /^seed@example\.com/ });
  await expect
    .poll(() => row.locator('.provenance').textContent())
    .toBe('Added through the API or the dashboardAdded while the address was on the allowlist, which events never suppress.');
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'Allowlist' }).waitFor();

  // Remove: at once, no confirmation (adding it back undoes it).
  await page.getByRole('button', { name: 'Remove @example.org' }).click();
  await page.getByText('Removed @example.org from the allowlist: events may suppress it again.').waitFor();
  await expect.poll(() => columnTexts(page, 'Entry')).toStrictEqual(['seed@example.com']);
  expect(await allowlistViaApi()).toStrictEqual(['seed@example.com']);
  // Removed meanwhile elsewhere: the page says so, and shows the list as it is now.
  expect((await app.api('DELETE', `/projects/${app.projects.acme}/allowlist/seed%40example.com`)).status).toBe(204);
  await page.getByRole('button', { name: 'Remove seed@example.com' }).click();
  await page.getByText('seed@example.com was no longer on the allowlist; nothing changed.').waitFor();
  await page.getByText('The allowlist is empty').waitFor();
  // A failure is shown as the other forms show it.
  app.store.failWith(() => new MailwardenError('store_unavailable', 'The store did not answer in time.'));
  try {
    await entry.fill('again@example.com');
    await add.click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('The store is down, so mailwarden cannot answer right now.The store did not answer in time.');
  } finally {
    app.store.failWith(undefined);
  }
  await watched.close();
});

test('the allowlist pages by entry, and the page is in the address', async () => {
  for (let index = 0; index < 55; index++) {
    await app.mailwarden.allowlist.add(app.projects.globex, `seed${String(index).padStart(2, '0')}@example.com`);
  }
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app, { project: app.projects.globex, key: 'key-globex' });
  await page.goto(dashboardUrl(app, 'allowlist'));
  const pager = page.getByRole('navigation', { name: 'Pages of the allowlist' });
  expect(await pager.locator('.position').textContent()).toBe('Showing 1–50');
  expect((await columnTexts(page, 'Entry')).at(-1)).toBe('seed49@example.com');
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect
    .poll(() => columnTexts(page, 'Entry'))
    .toStrictEqual(['seed50', 'seed51', 'seed52', 'seed53', 'seed54'].map((local) => `${local}@example.com`));
  await page.reload();
  await expect.poll(() => pager.locator('.position').textContent()).toBe('Showing 51–55');
  await watched.close();
});

test.each([
  ['light', 'desktop'],
  ['dark', 'phone'],
] as const)('the allowlist fits the page and passes axe, with an error shown (%s colour scheme, %s)', async (colorScheme, viewport) => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/], viewport });
  const { page } = watched;
  await page.emulateMedia({ colorScheme });
  await signIn(page, app, { project: app.projects.globex, key: 'key-globex' });
  await page.goto(dashboardUrl(app, 'allowlist'));
  await listingTable(page).waitFor();
  await page.getByLabel('Address or @domain').fill('@');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('alert').waitFor();
  expect(await layoutProblems(page)).toStrictEqual([]);
  const { violations } = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  expect(
    violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join('; ')}`),
  ).toStrictEqual([]);
  await watched.close();
});
