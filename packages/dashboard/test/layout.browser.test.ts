import type { TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  connectBrowser,
  dashboardUrl,
  event,
  layoutProblems,
  listingTable,
  openPage,
  seedMessages,
  signIn,
  startDashboardApp,
  viewports,
  type ViewportName,
} from './harness.js';

let browser: Browser;
let app: TestApp;

/** An address as long as real ones get, so a card or a row must wrap it rather than widen the page. */
const longAddress = 'first.middle.last-name+newsletter-2026@subdomain.mail.example-company.com';
/** The longest stream name, unbroken: it must wrap in its cell, never widen the page. */
const longStream = 'weekly-digest-'.padEnd(64, 'x');

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const acme = app.projects.acme;
  // Two pages of messages in one tracking ID, two pages of suppressions, and a long address (in a long
  // stream) suppressed by a bounce.
  await seedMessages(app.mailwarden, acme, 'newsletter-2026-11', 60);
  await app.mailwarden.suppressions.addMany(
    acme,
    Array.from({ length: 55 }, (_, i) => ({ email: `person${i}@example.com` })),
  );
  await app.mailwarden.applyEvents(acme, [
    event({
      recipient: longAddress,
      messageId: 'sg-long-1',
      type: 'sent',
      trackingId: 'newsletter-2026-11',
      stream: longStream,
      occurredAt: new Date('2026-11-21T09:00:00.000Z'),
    }),
    event({
      recipient: longAddress,
      messageId: 'sg-long-1',
      type: 'bounced',
      bounceClass: 'hard',
      trackingId: 'newsletter-2026-11',
      occurredAt: new Date('2026-11-21T09:01:00.000Z'),
      details: { smtpStatus: '5.1.1', diagnostic: '550 5.1.1 The email account that you tried to reach does not exist' },
    }),
  ]);
  // The long address unsubscribed from the long stream too: its list, and a check for it.
  await app.mailwarden.suppressions.add(acme, longAddress, { stream: longStream, source: 'unsubscribe' });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** Each page and state a person reaches, ready for a look: `states[name] = layoutProblems`. */
async function everyPage(page: Page): Promise<Record<string, string[]>> {
  const states: Record<string, string[]> = {};
  await page.goto(dashboardUrl(app));
  await page.getByLabel('Project').waitFor();
  states['sign-in'] = await layoutProblems(page);

  await signIn(page, app);
  await listingTable(page).waitFor();
  states.messages = await layoutProblems(page);

  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-11`);
  await page.getByRole('heading', { name: 'Counts for newsletter-2026-11' }).waitFor();
  await page.locator('.chart').waitFor();
  await listingTable(page).waitFor();
  states['messages filtered'] = await layoutProblems(page);

  await page.getByRole('link', { name: longAddress }).click();
  // Its message is of the long stream: checked for it, the project-wide bounce answers.
  await page.getByText(/is suppressed for stream .*: Hard bounce/).waitFor();
  states['one message'] = await layoutProblems(page);
  await page.getByRole('button', { name: 'Remove from the suppression list' }).click();
  await page.getByRole('dialog').waitFor();
  states['one message, remove dialog'] = await layoutProblems(page);
  await page.keyboard.press('Escape');

  await page.getByRole('link', { name: 'Tracking IDs' }).click();
  await listingTable(page).waitFor();
  states['tracking IDs'] = await layoutProblems(page);

  await page.getByRole('link', { name: 'Suppressions' }).click();
  await listingTable(page).waitFor();
  states.suppressions = await layoutProblems(page);
  await page.getByRole('button', { name: `Remove ${longAddress}` }).click();
  await page.getByRole('dialog').waitFor();
  states['suppressions, remove dialog'] = await layoutProblems(page);
  await page.keyboard.press('Escape');

  await page.goto(`${dashboardUrl(app, 'suppressions')}?stream=${longStream}`);
  await listingTable(page).waitFor();
  await page.getByLabel('Email to check').fill(longAddress);
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('is suppressed for stream').waitFor();
  states["a stream's suppressions, checked for the stream"] = await layoutProblems(page);
  await page.getByRole('button', { name: `Remove ${longAddress}` }).click();
  await page.getByRole('dialog').waitFor();
  states["a stream's suppressions, remove dialog"] = await layoutProblems(page);
  await page.keyboard.press('Escape');
  return states;
}

test.each(Object.keys(viewports) as ViewportName[])(
  'at %s size every page fits its width: no page overflow, every control and dialog inside the viewport',
  async (viewport) => {
    const watched = await openPage(browser, app, { viewport });
    const states = await everyPage(watched.page);
    expect(states).toStrictEqual(Object.fromEntries(Object.keys(states).map((state) => [state, []])));
    await watched.close();
  },
);

test('on a phone the listings are stacked rows: each value under its column’s name, a long address on at most three lines', async () => {
  const watched = await openPage(browser, app, { viewport: 'phone' });
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-11`);
  const first = listingTable(page).locator('tbody tr').first();
  await first.waitFor();
  // One column: every cell of a row starts at the row's left edge, one under the other.
  const cells = await first
    .locator('th, td')
    .evaluateAll((elements) =>
      elements.map((element) => element.getBoundingClientRect()).map(({ left, top }) => ({ left: Math.round(left), top })),
    );
  expect(new Set(cells.map((cell) => cell.left)).size).toBe(1);
  expect(cells.map((cell) => cell.top)).toStrictEqual([...cells.map((cell) => cell.top)].sort((a, b) => a - b));
  // Each value beside its name: "Status Delivered", not a bare pill.
  expect(
    await first
      .locator('td')
      .first()
      .evaluate((cell) => getComputedStyle(cell, '::before').content),
  ).toBe('"Status"');
  const address = page.getByRole('link', { name: longAddress });
  const lines = await address.evaluate((link) => link.getClientRects().length);
  expect(lines).toBeLessThanOrEqual(3);
  await watched.close();
});

test('the fold: at 1280×900 with a tracking ID chosen, the first message row is on screen without scrolling', async () => {
  const watched = await openPage(browser, app, { viewport: 'desktop' });
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-11`);
  await page.getByRole('heading', { name: 'Counts for newsletter-2026-11' }).waitFor();
  await page.locator('.chart').waitFor();
  const first = listingTable(page).locator('tbody tr').first();
  await first.waitFor();
  const box = await first.evaluate((row) => ({ bottom: row.getBoundingClientRect().bottom, scrollY, innerHeight }));
  expect(box.scrollY).toBe(0);
  expect(box.bottom).toBeLessThanOrEqual(box.innerHeight);
  await watched.close();
});
