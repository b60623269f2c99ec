import { AxeBuilder } from '@axe-core/playwright';
import { createMemoryStore, type ApiKeyEntry, type SuppressionPage } from '@mailwarden/core';
import {
  createMailwardenHost,
  expectError,
  jsonOf,
  randomProjects,
  startTestApp,
  type MailwardenHost,
  type TestApp,
} from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  columnTexts,
  connectBrowser,
  dashboardUrl,
  event,
  layoutProblems,
  openPage,
  signIn,
  withDashboard,
  type ViewportName,
} from './harness.js';

// docs/dashboard.md, "What a key may do", "History" and "Erasure": one app with a key of each kind.

let browser: Browser;
let host: MailwardenHost;
let app: TestApp;

const projects = randomProjects();
const keys = { read: 'k-support', check: 'k-sending-app', write: 'k-ops', admin: 'k-dpo' } as const;
const apiKeys: ApiKeyEntry[] = [
  { name: 'support', key: keys.read, projects: [projects.acme], scopes: ['read'] },
  { name: 'sending-app', key: keys.check, projects: [projects.acme], scopes: ['check'] },
  { name: 'ops', key: keys.write, projects: [projects.acme], scopes: ['check', 'read', 'write'] },
  { name: 'dpo', key: keys.admin, projects: [projects.acme], scopes: ['check', 'read', 'write', 'admin'] },
];

beforeAll(async () => {
  browser = await connectBrowser();
  host = createMailwardenHost(createMemoryStore({ changes: {} }));
  app = await startTestApp({ host, projects, apiKeys, start: withDashboard('fastify') });
  await app.mailwarden.applyEvents(projects.acme, [
    event({ recipient: 'angry@example.com', type: 'sent', occurredAt: new Date('2026-11-20T09:00:00.000Z') }),
    event({ recipient: 'angry@example.com', type: 'complained' }),
  ]);
  await app.mailwarden.allowlist.add(projects.acme, 'seed@example.com');
  await app.mailwarden.streams.pause(projects.acme, 'marketing');
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await host?.close();
});

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name }).click();
/** Every control that changes something, whatever its page. */
const changingControls = (page: Page) => page.getByRole('button', { name: /^(Add|Remove|Resume|Erase)/ });

test('a read-only key: the header names it, no control that changes anything is there, and a crafted change is refused', async () => {
  // The app has no outbound endpoint: the Deliverability page's list of them answers 404.
  const watched = await openPage(browser, app, { expectedProblems: [/404/] });
  const { page } = watched;
  await signIn(page, app, { key: keys.read });
  expect(await page.locator('.who .key').textContent()).toBe('Signed in as support · scopes: read');
  for (const [link, ready] of [
    ['Suppressions', 'table'],
    ['Allowlist', 'table'],
    ['Deliverability', 'table'],
  ] as const) {
    await nav(page, link);
    await page.getByRole(ready).first().waitFor();
    expect(await changingControls(page).count(), link).toBe(0);
  }
  // Reading is all it does: the history of a suppression still opens.
  await nav(page, 'Suppressions');
  await page.getByRole('button', { name: 'History of angry@example.com' }).waitFor();
  expect(await page.getByRole('form', { name: 'Check an address' }).count()).toBe(0);

  const acme = `/projects/${projects.acme}`;
  const { items } = jsonOf(await app.api('GET', `${acme}/suppressions`, { key: keys.read })) as SuppressionPage;
  const refused = [
    await app.api('POST', `${acme}/suppressions`, { key: keys.read, json: { email: 'someone@example.com' } }),
    await app.api('DELETE', `${acme}/suppressions/${items[0]!.hash}`, { key: keys.read }),
    await app.api('POST', `${acme}/erasures`, { key: keys.read, json: { email: 'angry@example.com' } }),
    await app.api('POST', `${acme}/streams/marketing/resume`, { key: keys.read }),
  ];
  for (const answer of refused) expect(expectError(answer, 403, 'insufficient_scope').details).toMatchObject({ scopes: ['read'] });
  expect(jsonOf(await app.api('GET', `${acme}/suppressions/check?email=angry@example.com`, { key: keys.write }))).toMatchObject({
    suppressed: true,
  });
  await watched.close();
});

test('a check-only key: each page says it cannot read; the check still works', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app, { key: keys.check });
  await page.getByText('The key sending-app cannot read the messages: it has the scope check, not read.').waitFor();
  await nav(page, 'Suppressions');
  await page.getByText('The key sending-app cannot read the suppression lists').waitFor();
  expect(await changingControls(page).count()).toBe(0);
  await page.getByLabel('Email to check').fill('angry@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('angry@example.com is suppressed: Complaint').waitFor();
  await watched.close();
});

test('a write key adds and removes; the history names who did it; the Changes page shows and filters actors; an admin erases', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app, { key: keys.write });
  expect(await page.locator('.who .key').textContent()).toBe('Signed in as ops · scopes: check, read, write');
  await nav(page, 'Suppressions');
  await page.getByRole('table').waitFor();
  expect(await page.getByRole('form', { name: 'Erase an address' }).count()).toBe(0);
  await page.getByLabel('Email to suppress').fill('someone@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('Added someone@example.com to the project-wide list.').waitFor();
  await page.getByRole('button', { name: 'Remove someone@example.com' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed someone@example.com from the project-wide list.').waitFor();
  // Another key adds it again.
  await app.api('POST', `/projects/${projects.acme}/suppressions`, { key: keys.admin, json: { email: 'someone@example.com' } });
  await page.reload();

  const history = page.getByRole('dialog', { name: 'History of someone@example.com' });
  const entries = () => history.locator('.history-sentence').allTextContents();
  await page.getByRole('button', { name: 'History of someone@example.com' }).click();
  await expect
    .poll(entries)
    .toStrictEqual([
      'Key dpo added it to the project-wide list (Manual)',
      'Key ops removed it from the project-wide list',
      'Key ops added it to the project-wide list (Manual)',
    ]);
  await history.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'History of angry@example.com' }).click();
  await expect
    .poll(() => page.getByRole('dialog').locator('.history-sentence').allTextContents())
    .toStrictEqual(['SendGrid complaint event added it to the project-wide list (Complaint)']);
  await page.keyboard.press('Escape');

  await nav(page, 'Changes');
  await page.getByRole('table').waitFor();
  expect((await columnTexts(page, 'By')).slice(0, 3)).toStrictEqual(['Key dpo', 'Key ops', 'Key ops']);
  await page.getByLabel('By').fill('key:ops');
  await page.getByLabel('By').press('Enter');
  await expect.poll(() => columnTexts(page, 'By')).toStrictEqual(['Key ops', 'Key ops']);
  expect(new URL(page.url()).searchParams.get('actor')).toBe('key:ops');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'By')).toStrictEqual(['Key ops', 'Key ops']);

  // The admin key erases through the form, after a confirmation naming what goes and what stays.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page, app, { key: keys.admin });
  expect(await page.locator('.who .key').textContent()).toBe('Signed in as dpo · all scopes');
  await nav(page, 'Suppressions');
  await page.getByLabel('Email to erase').fill('angry@example.com');
  await page.getByRole('button', { name: 'Erase…' }).click();
  const confirm = page.getByRole('dialog', { name: 'Erase this address?' });
  expect(await confirm.textContent()).toContain('its messages and their timelines');
  expect(await confirm.textContent()).toContain('mail to it is still held back');
  await confirm.getByRole('button', { name: 'Erase', exact: true }).click();
  const result = page.getByRole('form', { name: 'Erase an address' }).locator('.result');
  await expect
    .poll(() => result.textContent())
    .toMatch(
      /^Erased\. The address is kept as [0-9a-f]{16}@erased\.invalid \(hash [0-9a-f]{16}…\), still suppressed on 1 list\. Deleted 1 message and 3 changes about it\.$/,
    );
  const placeholder = /kept as (\S+) /.exec((await result.textContent()) ?? '')![1]!;
  await expect.poll(() => columnTexts(page, 'Email')).toContain(placeholder);
  expect(await columnTexts(page, 'Email')).not.toContain('angry@example.com');
  expect(
    jsonOf(await app.api('GET', `/projects/${projects.acme}/suppressions/check?email=angry@example.com`, { key: keys.check })),
  ).toMatchObject({
    suppressed: true,
  });
  // Its history now is the erasure alone, by the admin key.
  await page.getByRole('button', { name: `History of ${placeholder}` }).click();
  await expect
    .poll(() => page.getByRole('dialog').locator('.history-sentence').allTextContents())
    .toStrictEqual(['Key dpo erased the address (1 message and 3 changes deleted)']);
  await watched.close();
});

test.each(['desktop', 'phone'] as const)('the new controls fit the width and pass axe (%s)', async (viewport: ViewportName) => {
  const watched = await openPage(browser, app, { viewport });
  const { page } = watched;
  const states: Record<string, string[]> = {};
  const check = async (name: string) => {
    const { violations } = await new AxeBuilder({ page })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
      .analyze();
    states[name] = [
      ...(await layoutProblems(page)),
      ...violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join('; ')}`),
    ];
  };
  await signIn(page, app, { key: keys.admin });
  await page.goto(dashboardUrl(app, 'suppressions'));
  await page.getByRole('table').waitFor();
  await check('suppressions, with the erase form');
  await page
    .getByRole('button', { name: /^History of / })
    .first()
    .click();
  await page.getByRole('dialog').locator('.history-entries').waitFor();
  await check('a history');
  await page.keyboard.press('Escape');
  await page.getByLabel('Email to erase').fill('nobody@example.com');
  await page.getByRole('button', { name: 'Erase…' }).click();
  await page.getByRole('dialog').waitFor();
  await check('the erasure confirmation');
  await page.keyboard.press('Escape');
  await page.goto(dashboardUrl(app, 'changes'));
  await page.getByRole('table').waitFor();
  await check('changes, with actors');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signIn(page, app, { key: keys.check });
  await page.getByText('cannot read the messages').waitFor();
  await check('a check-only key');
  expect(states).toStrictEqual(Object.fromEntries(Object.keys(states).map((state) => [state, []])));
  await watched.close();
});
