import { AxeBuilder } from '@axe-core/playwright';
import { createMemoryStore } from '@mailwarden/core';
import { createMailwardenHost, jsonOf, randomProjects, startTestApp, type MailwardenHost, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
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
  withDashboard,
  type ViewportName,
} from './harness.js';

let browser: Browser;
let host: MailwardenHost;
let app: TestApp;

const projects = randomProjects();
/** Never requested: the test host's delivery timers do not fire. */
const crm = {
  id: 'crm',
  url: 'https://crm.example.com/hooks/mailwarden?token=secret',
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
};
/** 5 % bounces over the last 20 messages, from the 10th; a crossing pauses the marketing stream. */
const alerts = { window: 20, minMessages: 10, bounceRate: 5, complaintRate: 0.1, pauseStreams: ['marketing'] };

beforeAll(async () => {
  browser = await connectBrowser();
  host = createMailwardenHost(createMemoryStore({ changes: {} }), { outboundEndpoints: { [projects.acme]: [crm] } });
  app = await startTestApp({ host, projects, alerts: { acme: alerts }, start: withDashboard('fastify') });
  // Ten delivered messages, then a hard bounce: 1 of 11 is 9.09 %, so the bounce alert fires and pauses marketing.
  await app.mailwarden.applyEvents(
    projects.acme,
    Array.from({ length: 10 }, (_, i) => event({ recipient: `r${i}@example.com`, stream: 'marketing' })),
  );
  await app.mailwarden.applyEvents(projects.acme, [event({ recipient: 'gone@example.com', type: 'bounced', stream: 'marketing' })]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await host?.close();
});

const openDeliverability = async (page: Page) => {
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Deliverability' }).click();
  await page.getByRole('heading', { level: 1, name: 'Deliverability' }).waitFor();
};
const card = (page: Page, title: string) => page.locator('.rate-card').filter({ has: page.getByRole('heading', { name: title }) });

// First: the other tests add changes (a resume, an endpoint paused and resumed).
test('changes: newest first, each in a sentence linking what it is about; the kind filter is in the address', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Changes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Changes' }).waitFor();
  const sentences = () => columnTexts(page, 'Change');
  // Ten messages, the bounce's message, its suppression, the crossing and the pause.
  await expect
    .poll(async () => (await sentences()).slice(0, 4))
    .toStrictEqual([
      'Stream marketing paused by the bounce-rate alert',
      'Bounce rate 9.09% (1 of 11 messages) crossed 5%: alert firing',
      'Message to gone@example.com first seen as bounced (bounced event)',
      'Hard bounce suppression added for gone@example.com',
    ]);
  expect((await sentences()).at(-1)).toBe('Message to r0@example.com first seen as delivered (delivered event)');
  expect(await columnTexts(page, 'Seq')).toStrictEqual(Array.from({ length: 14 }, (_, i) => String(14 - i)));

  await page.getByLabel('Kind').selectOption('alert');
  await expect.poll(sentences).toStrictEqual(['Bounce rate 9.09% (1 of 11 messages) crossed 5%: alert firing']);
  expect(new URL(page.url()).search).toBe('?kind=alert');
  await page.reload();
  await expect.poll(sentences).toStrictEqual(['Bounce rate 9.09% (1 of 11 messages) crossed 5%: alert firing']);
  expect(await page.getByLabel('Kind').inputValue()).toBe('alert');

  await page.getByLabel('Kind').selectOption('suppression');
  await page.getByRole('link', { name: 'gone@example.com' }).click();
  await page.getByRole('heading', { level: 1, name: 'Suppressions' }).waitFor();
  expect(new URL(page.url()).searchParams.get('email')).toBe('gone@example.com');
  await page.goBack();
  await page.getByLabel('Kind').selectOption('message');
  await page.getByRole('link', { name: 'gone@example.com' }).click();
  await page.getByRole('heading', { level: 1, name: 'Message' }).waitFor();
  expect(new URL(page.url()).searchParams.get('id')).toBeTruthy();
  await watched.close();
});

test('deliverability: the rates against their thresholds in words, a paused stream resumed after a confirmation, a paused endpoint resumed', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await openDeliverability(page);
  expect(page.url()).toBe(dashboardUrl(app, 'deliverability'));
  await page.getByText('Over the last 20 messages the project sent (its window): 11 so far.').waitFor();
  const bounce = card(page, 'Bounce rate');
  expect(await bounce.locator('.rate-figure').textContent()).toBe('9.09% 1 of 11 hard-bounced');
  expect(await bounce.locator('.alert-state').textContent()).toBe(
    'Firing · Alert firing: the rate reached the 5% threshold. It resolves below 4%.',
  );
  expect(await card(page, 'Complaint rate').locator('.alert-state').textContent()).toBe('OK · No alert: below the 0.1% threshold.');

  // The crossing paused marketing; resuming it asks first, and Cancel changes nothing.
  const paused = page.getByRole('table', { name: /^Streams whose mail/ });
  expect(await columnTexts(page, 'Stream', paused)).toStrictEqual(['marketing']);
  expect(await columnTexts(page, 'By', paused)).toStrictEqual(['The bounce-rate alert']);
  await page.getByRole('button', { name: 'Resume marketing' }).click();
  const dialog = page.getByRole('dialog', { name: 'Resume stream marketing?' });
  await dialog.waitFor();
  expect(await dialog.textContent()).toContain('resuming does not reset the alert');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByRole('button', { name: 'Resume marketing' }).click();
  await dialog.getByRole('button', { name: 'Resume' }).click();
  await page.getByText('Resumed stream marketing: its mail is sent again.').waitFor();
  await page.getByText('No stream is paused').waitFor();
  expect(jsonOf(await app.api('GET', `/projects/${projects.acme}/streams/paused`))).toStrictEqual({ items: [] });

  // The endpoint delivers; failing too long, as the engine would leave it, it is paused and resumed here.
  const endpoints = page.getByRole('table', { name: /^Endpoints/ });
  expect(await columnTexts(page, 'Endpoint', endpoints)).toStrictEqual(['crmhttps://crm.example.com/hooks/mailwarden?…']);
  expect(await columnTexts(page, 'State', endpoints)).toStrictEqual(['Delivering']);
  const now = app.clock.advance(60_000);
  const lease = await app.store.leaseOutbound(projects.acme, 'crm', 'test', now, now + 1000);
  const progress = {
    cursor: lease!.cursor,
    failures: 8,
    failingSince: now - 1000,
    nextAttemptAt: 0,
    pausedAt: now,
    lastError: 'HTTP 503',
    lastSuccessAt: null,
  };
  expect(await app.store.saveOutbound(projects.acme, 'crm', 'test', progress, now)).toBe(true);
  await page.reload();
  await expect.poll(() => columnTexts(page, 'State', endpoints)).toStrictEqual(['Paused since 2026-04-02 10:01:00 UTC']);
  expect(await columnTexts(page, 'Last error', endpoints)).toStrictEqual(['HTTP 503 (8 failures in a row)']);
  expect(await columnTexts(page, 'Next attempt', endpoints)).toStrictEqual(['When resumed']);
  await page.getByRole('button', { name: 'Resume crm' }).click();
  await page.getByText('Resumed crm: it delivers again from its cursor, losing nothing.').waitFor();
  await expect.poll(() => columnTexts(page, 'State', endpoints)).toStrictEqual(['Delivering']);
  await watched.close();
});

test('deliverability without alert rules or endpoints says so and links the docs that configure them', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/404/] });
  const { page } = watched;
  await signIn(page, app, { project: projects.globex, key: 'key-globex' });
  await openDeliverability(page);
  const alertsLink = page.getByRole('link', { name: 'How to configure deliverability alerts' });
  expect(await alertsLink.getAttribute('href')).toBe(
    'https://github.com/mailwarden/mailwarden/blob/main/docs/server.md#deliverability-alerts',
  );
  await page.getByText('Alerts are not configured for this project').waitFor();
  await page.getByText('No stream is paused').waitFor();
  expect(await page.getByRole('link', { name: 'How to configure outbound webhooks' }).getAttribute('href')).toBe(
    'https://github.com/mailwarden/mailwarden/blob/main/docs/outbound-webhooks.md#configuration',
  );
  await watched.close();
});

test('changes page by stretches of the feed, newer and older, and a link keeps its changes as new ones arrive', async () => {
  await app.mailwarden.suppressions.addMany(
    projects.globex,
    Array.from({ length: 120 }, (_, i) => ({ email: `p${String(i + 1).padStart(3, '0')}@example.com` })),
  );
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app, { project: projects.globex, key: 'key-globex' });
  await page.goto(dashboardUrl(app, 'changes'));
  const seqs = async () => (await columnTexts(page, 'Seq')).map(Number);
  const range = (high: number, low: number) => Array.from({ length: high - low + 1 }, (_, i) => high - i);
  await expect.poll(seqs).toStrictEqual(range(120, 71));
  const pager = page.getByRole('navigation', { name: 'Pages of the changes' });
  expect(await pager.locator('[aria-disabled="true"]').allTextContents()).toStrictEqual(['Newer changes']);
  await pager.getByRole('link', { name: 'Older changes' }).click();
  await expect.poll(seqs).toStrictEqual(range(70, 21));
  await pager.getByRole('link', { name: 'Older changes' }).click();
  await expect.poll(seqs).toStrictEqual(range(20, 1));
  expect(await pager.locator('[aria-disabled="true"]').allTextContents()).toStrictEqual(['Older changes']);
  await pager.getByRole('link', { name: 'Newer changes' }).click();
  await expect.poll(seqs).toStrictEqual(range(70, 21));
  // New changes arrive: this page's address still shows the same ones; Latest shows them.
  await app.mailwarden.suppressions.add(projects.globex, 'late@example.com');
  await page.reload();
  await expect.poll(seqs).toStrictEqual(range(70, 21));
  await pager.getByRole('link', { name: 'Latest changes' }).click();
  await expect.poll(seqs).toStrictEqual(range(121, 72));
  expect((await columnTexts(page, 'Change'))[0]).toBe('Manual suppression added for late@example.com');
  // A filter looks further back, a thousand changes at a time, for a kind written long ago.
  await app.mailwarden.allowlist.add(projects.globex, 'seed@example.com');
  for (const batch of [0, 1]) {
    await app.mailwarden.suppressions.addMany(
      projects.globex,
      Array.from({ length: 550 }, (_, i) => ({ email: `q${batch}-${i}@example.com` })),
    );
  }
  await page.goto(`${dashboardUrl(app, 'changes')}?kind=allowlist`);
  await expect.poll(() => columnTexts(page, 'Change')).toStrictEqual(['seed@example.com added to the allowlist']);
  expect(await page.getByRole('table').locator('caption').textContent()).toBe(
    'Changes that match, newest first, among changes 1–1,222 of 1,222',
  );
  expect(await pager.locator('[aria-disabled="true"]').allTextContents()).toStrictEqual(['Newer changes', 'Older changes']);
  await watched.close();
});

test('changes and a suppression’s history without a feed say so and link the docs that turn it on', async () => {
  const plain = await startDashboardApp();
  try {
    const watched = await openPage(browser, plain, { expectedProblems: [/404/] });
    const { page } = watched;
    await signIn(page, plain);
    await page.goto(dashboardUrl(plain, 'changes'));
    await page.getByText('The change feed is off for this service').waitFor();
    expect(await page.getByRole('link', { name: 'How to turn on the change feed' }).getAttribute('href')).toBe(
      'https://github.com/mailwarden/mailwarden/blob/main/docs/server.md#the-change-feed',
    );
    // A suppression's history is the feed's too.
    await plain.mailwarden.suppressions.add(plain.projects.acme, 'kept@example.com');
    await page.goto(dashboardUrl(plain, 'suppressions'));
    await page.getByRole('button', { name: 'History of kept@example.com' }).click();
    await page.getByRole('dialog').getByText('The history needs the change feed, which is off for this service.').waitFor();
    await watched.close();
  } finally {
    await plain.close();
  }
});

test.each([
  ['light', 'desktop'],
  ['dark', 'phone'],
] as const)(
  'both pages fit the width and pass axe, the dialog open too (%s colour scheme, %s)',
  async (colorScheme, viewport: ViewportName) => {
    await app.mailwarden.streams.pause(projects.acme, `${'weekly-digest-'.padEnd(64, 'x')}`);
    const watched = await openPage(browser, app, { viewport });
    const { page } = watched;
    await page.emulateMedia({ colorScheme });
    await signIn(page, app);
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
    await page.goto(dashboardUrl(app, 'deliverability'));
    await page.getByRole('table', { name: /^Streams whose mail/ }).waitFor();
    await page.getByRole('table', { name: /^Endpoints/ }).waitFor();
    await check('deliverability');
    await page.getByRole('button', { name: /^Resume weekly-digest/ }).click();
    await page.getByRole('dialog').waitFor();
    await check('deliverability, resume dialog');
    await page.keyboard.press('Escape');
    await page.goto(dashboardUrl(app, 'changes'));
    await listingTable(page).waitFor();
    await check('changes');
    expect(states).toStrictEqual(Object.fromEntries(Object.keys(states).map((state) => [state, []])));
    await watched.close();
  },
);
