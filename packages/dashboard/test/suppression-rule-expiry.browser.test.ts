import { AxeBuilder } from '@axe-core/playwright';
import type { SuppressionPage } from '@mailwarden/core';
import { CLOCK_START, jsonOf, type TestApp } from '@mailwarden/http-test-suite';
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
  type ViewportName,
} from './harness.js';

let browser: Browser;
let app: TestApp;

const DAY = 86_400_000;
const bounceTimes = ['2026-03-30T08:00:00.000Z', '2026-03-31T08:00:00.000Z', '2026-04-01T08:00:00.000Z'];
const diagnostics = ['452 4.2.2 Mailbox full', '452 4.2.2 Over quota', '552 5.2.2 Mailbox full, try later'];

beforeAll(async () => {
  browser = await connectBrowser();
  // The service's clock stands at CLOCK_START (2026-04-02 10:00 UTC): the bounces are days before it.
  app = await startDashboardApp({ rules: { acme: { softBounces: { bounces: 3, days: 7 } } } });
  const acme = app.projects.acme;
  // Three soft bounces of distinct messages within a week: the rule suppresses full@ at the third,
  // for 30 days (its default expiry). The complaint never expires.
  await app.mailwarden.applyEvents(
    acme,
    bounceTimes.map((at, index) =>
      event({
        recipient: 'full@example.com',
        messageId: `sg-full-${index + 1}`,
        type: 'bounced',
        bounceClass: 'soft',
        occurredAt: new Date(at),
        details: { diagnostic: diagnostics[index]! },
      }),
    ),
  );
  await app.mailwarden.applyEvents(acme, [
    event({ recipient: 'angry@example.com', type: 'complained', occurredAt: new Date('2026-03-02T08:00:00.000Z') }),
  ]);
  // Added by hand for two hours.
  expect((await app.api('POST', `/projects/${acme}/suppressions`, { json: { email: 'brief@example.com', ttl: 7200 } })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A page whose clock is the service's, so "expires in …" is known in advance. */
async function openAtServiceTime(viewport: ViewportName = 'desktop') {
  const watched = await openPage(browser, app, { viewport });
  await watched.page.clock.setFixedTime(CLOCK_START);
  return watched;
}

/** The API's id of the message SendGrid knows as `messageId`. */
async function messageIdOf(messageId: string): Promise<string> {
  const page = jsonOf(await app.api('GET', `/projects/${app.projects.acme}/messages?provider=sendgrid&limit=100`)) as {
    items: { id: string; messageId: string }[];
  };
  return page.items.find((item) => item.messageId === messageId)!.id;
}

/** A column's cell of each row, by address. */
async function cellsOf(page: Page, header: string): Promise<Record<string, string>> {
  await listingTable(page).waitFor();
  const emails = await columnTexts(page, 'Email');
  const cells = await columnTexts(page, header);
  return Object.fromEntries(emails.map((email, index) => [email, cells[index]!]));
}

test('a suppression the soft-bounce rule made shows the rule, each bounce that met it, and when it expires', async () => {
  const watched = await openAtServiceTime();
  const { page } = watched;
  await signIn(page, app);
  await page.goto(dashboardUrl(app, 'suppressions'));

  const bounceText = (index: number) =>
    `SendGrid, ${bounceTimes[index]!.slice(0, 10)} 08:00:00 UTC${diagnostics[index]}Message sg-full-${index + 1} · Open the message to full@example.com, bounce ${index + 1} of 3`;
  expect(await cellsOf(page, 'Source and cause')).toStrictEqual({
    'brief@example.com': 'Added through the API or the dashboard',
    'full@example.com': `Soft-bounce rule: 3 soft bounces in 7 days${[0, 1, 2].map(bounceText).join('')}`,
    'angry@example.com':
      'Provider eventSendGrid, 2026-03-02 08:00:00 UTCMessage m-angry@example.com · Open the message to angry@example.com',
  });
  expect(await cellsOf(page, 'Reason')).toMatchObject({ 'full@example.com': 'Hard bounce' });
  // Expiry under the time it was suppressed: how far, and the exact time for screen readers and in the tooltip.
  expect(await cellsOf(page, 'Suppressed since')).toStrictEqual({
    'brief@example.com': '2026-04-02 10:00:00 UTCExpires in 2 hours (2026-04-02 12:00:00 UTC)',
    'full@example.com': '2026-04-01 08:00:00 UTCExpires in 29 days (2026-05-01 08:00:00 UTC)',
    'angry@example.com': '2026-03-02 08:00:00 UTC',
  });
  const fullRow = listingTable(page).getByRole('row', { name: /^full@example\.com/ });
  expect(await fullRow.locator('.expires time').getAttribute('title')).toBe('2026-05-01 08:00:00 UTC');
  expect(await fullRow.locator('.expires time').getAttribute('datetime')).toBe('2026-05-01T08:00:00.000Z');

  // What the page shows is what the API answers.
  const listed = jsonOf(await app.api('GET', `/projects/${app.projects.acme}/suppressions`)) as SuppressionPage;
  const full = listed.items.find((item) => item.email === 'full@example.com')!;
  expect(full.expires_at).toBe(new Date(Date.parse(bounceTimes[2]!) + 30 * DAY).toISOString());
  expect(full.rule?.events.map((bounce) => [bounce.message_id, bounce.event_at, bounce.diagnostic])).toStrictEqual(
    bounceTimes.map((at, index) => [`sg-full-${index + 1}`, at, diagnostics[index]]),
  );

  // Each bounce opens its own message.
  await fullRow.getByRole('link', { name: 'Open the message to full@example.com, bounce 2 of 3' }).click();
  await page.locator('.timeline-entry').first().waitFor();
  expect(new URL(page.url()).searchParams.get('id')).toBe(await messageIdOf('sg-full-2'));
  // The message's recipient check says when the suppression ends.
  await page.getByRole('region', { name: 'Suppression' }).getByText('is suppressed').waitFor();
  expect(await page.getByRole('region', { name: 'Suppression' }).locator('[role="status"]').textContent()).toBe(
    'full@example.com is suppressed: Hard bounce, since 2026-04-01 08:00:00 UTC, expires in 29 days (2026-05-01 08:00:00 UTC). Sending to it is held back.',
  );
  await page.goBack();

  // A check shows the same.
  await page.getByLabel('Email to check').fill('full@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  const result = page.locator('.result');
  await expect
    .poll(() => result.locator('p').first().textContent())
    .toBe('full@example.com is suppressed: Hard bounce, since 2026-04-01 08:00:00 UTC, expires in 29 days (2026-05-01 08:00:00 UTC).');
  expect(await result.locator('.rule-bounces li').count()).toBe(3);
  await watched.close();
});

test('the Expiry filter shows the entries that expire, or those that never do, and is kept in the address', async () => {
  const watched = await openAtServiceTime();
  const { page } = watched;
  await signIn(page, app);
  await page.goto(dashboardUrl(app, 'suppressions'));
  await listingTable(page).waitFor();
  const expiry = page.getByLabel('Expiry');
  expect(await expiry.inputValue()).toBe('');

  await expiry.selectOption({ label: 'Expires' });
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['brief@example.com', 'full@example.com']);
  expect(new URL(page.url()).searchParams.get('expiring')).toBe('true');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['brief@example.com', 'full@example.com']);
  expect(await expiry.inputValue()).toBe('true');

  await expiry.selectOption({ label: 'Never expires' });
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com']);
  expect(new URL(page.url()).searchParams.get('expiring')).toBe('false');
  // With a search: the filters together.
  await page.getByLabel('Search addresses').fill('full');
  await page.getByLabel('Search addresses').press('Enter');
  await page.getByText('No address on the project-wide list starts with full and never expires.').waitFor();
  expect(new URL(page.url()).search).toBe('?email=full&expiring=false');
  await page.goBack();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['angry@example.com']);

  await expiry.selectOption({ label: 'Any' });
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['brief@example.com', 'full@example.com', 'angry@example.com']);
  expect(new URL(page.url()).searchParams.has('expiring')).toBe(false);
  await watched.close();
});

test.each([
  ['light', 'desktop'],
  ['dark', 'phone'],
] as const)('the rule’s history and expiry fit the page and pass axe (%s colour scheme, %s)', async (colorScheme, viewport) => {
  const watched = await openAtServiceTime(viewport);
  const { page } = watched;
  await page.emulateMedia({ colorScheme });
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'suppressions')}?expiring=true`);
  await listingTable(page)
    .getByRole('row', { name: /^full@example\.com/ })
    .waitFor();
  await page.getByLabel('Email to check').fill('full@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.locator('.result .rule-bounces').waitFor();
  expect(await layoutProblems(page)).toStrictEqual([]);
  const { violations } = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  expect(
    violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join('; ')}`),
  ).toStrictEqual([]);
  await watched.close();
});
