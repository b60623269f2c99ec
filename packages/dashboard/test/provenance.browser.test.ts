import type { SuppressionPage } from '@mailwarden/core';
import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { columnTexts, connectBrowser, dashboardUrl, event, listingTable, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

const hostileDiagnostic = '550 <img src=x onerror="window.__pwned=1"> \u202Egnp.exe <b>bold</b>';

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const acme = app.projects.acme;
  await app.mailwarden.applyEvents(acme, [
    // gone@ had mail from SendGrid before, and from Postmark: the cause is the SendGrid bounce.
    event({ recipient: 'gone@example.com', messageId: 'sg-gone-0', occurredAt: new Date('2026-02-20T09:00:00.000Z') }),
    event({
      recipient: 'gone@example.com',
      messageId: 'pm-gone-0',
      provider: 'postmark',
      occurredAt: new Date('2026-02-25T09:00:00.000Z'),
    }),
    event({
      recipient: 'gone@example.com',
      messageId: 'sg-gone-1',
      type: 'bounced',
      bounceClass: 'hard',
      occurredAt: new Date('2026-03-01T08:00:00.000Z'),
      details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' },
    }),
    event({
      recipient: 'angry@example.com',
      messageId: 'sg-angry-1',
      type: 'complained',
      occurredAt: new Date('2026-03-02T08:00:00.000Z'),
      details: { feedbackType: 'abuse' },
    }),
    event({
      recipient: 'hostile@example.com',
      messageId: 'sg-hostile-1',
      type: 'bounced',
      occurredAt: new Date('2026-03-03T08:00:00.000Z'),
      details: { diagnostic: hostileDiagnostic },
    }),
    event({ recipient: 'nameless@example.com', messageId: null, type: 'bounced', occurredAt: new Date('2026-03-04T08:00:00.000Z') }),
  ]);
  await app.mailwarden.suppressions.add(acme, 'manual@example.com');
  await app.mailwarden.suppressions.add(acme, 'imported@example.com', { source: 'import' });
  // A record stored before suppressions kept their provenance.
  await app.store.addSuppression(acme, {
    hash: app.mailwarden.suppressions.hashOf('old@example.com'),
    email: 'old@example.com',
    reason: 'manual',
    createdAt: Date.parse('2025-01-01T00:00:00.000Z'),
  });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** The "Source and cause" cell of each suppression, by address. */
async function causes(page: Page): Promise<Record<string, string>> {
  await listingTable(page).waitFor();
  const emails = await columnTexts(page, 'Email');
  const shown = await columnTexts(page, 'Source and cause');
  return Object.fromEntries(emails.map((email, index) => [email, shown[index]!]));
}

test('every suppression says how it came to be: the source, and for a provider event its provider, time, diagnostic and message', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Suppressions' }).click();
  expect(await causes(page)).toStrictEqual({
    'imported@example.com': 'Imported with the CLI',
    'manual@example.com': 'Added through the API or the dashboard',
    'nameless@example.com': 'Provider eventSendGrid, 2026-03-04 08:00:00 UTCThe event named no message.',
    'hostile@example.com': `Provider eventSendGrid, 2026-03-03 08:00:00 UTC${hostileDiagnostic}Message sg-hostile-1 · Open the message to hostile@example.com`,
    'angry@example.com': 'Provider eventSendGrid, 2026-03-02 08:00:00 UTCabuseMessage sg-angry-1 · Open the message to angry@example.com',
    'gone@example.com':
      'Provider eventSendGrid, 2026-03-01 08:00:00 UTCsmtp; 550 5.1.1 user unknownMessage sg-gone-1 · Open the message to gone@example.com',
    'old@example.com': 'Not recorded (suppressed before mailwarden kept it)',
  });
  // What the page shows is what the API answers.
  const listed = jsonOf(await app.api('GET', `/projects/${app.projects.acme}/suppressions`)) as SuppressionPage;
  const gone = listed.items.find((item) => item.email === 'gone@example.com')!;
  expect([gone.source, gone.cause?.message_id, gone.cause?.event_at, gone.cause?.diagnostic]).toStrictEqual([
    'webhook',
    'sg-gone-1',
    '2026-03-01T08:00:00.000Z',
    'smtp; 550 5.1.1 user unknown',
  ]);
  expect(listed.items.find((item) => item.email === 'old@example.com')).toMatchObject({ source: null, cause: null });

  // Hostile text from a provider is text: nothing runs, no markup, no wider page.
  expect(await page.evaluate(() => ({ pwned: (window as { __pwned?: unknown }).__pwned, images: document.images.length }))).toStrictEqual({
    pwned: undefined,
    images: 0,
  });
  expect(await page.locator('main b').count()).toBe(0);
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  await watched.close();
});

/** The API's id of the message SendGrid knows as `messageId`, as the listing gives it. */
async function messageIdOf(messageId: string): Promise<string> {
  const page = jsonOf(await app.api('GET', `/projects/${app.projects.acme}/messages?provider=sendgrid&limit=100`)) as {
    items: { id: string; messageId: string }[];
  };
  return page.items.find((item) => item.messageId === messageId)!.id;
}

test('the cause opens its message, whose timeline shows the event that suppressed the address', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(dashboardUrl(app, 'suppressions'));
  const row = listingTable(page).getByRole('row', { name: /^gone@example\.com/ });
  await row.getByRole('link', { name: 'Open the message to gone@example.com' }).click();

  await page.locator('.timeline-entry').first().waitFor();
  expect(page.url()).toBe(`${dashboardUrl(app, 'messages')}?id=${await messageIdOf('sg-gone-1')}`);
  expect(await page.locator('.timeline-entry .entry-head').allTextContents()).toStrictEqual([
    '2026-03-01 08:00:00 UTC Bounced (hard) SendGrid',
  ]);
  expect(await page.locator('.timeline-entry .entry-details').textContent()).toBe('SMTP status5.1.1Diagnosticsmtp; 550 5.1.1 user unknown');
  // Back is the suppression list again.
  await page.goBack();
  await listingTable(page)
    .getByRole('row', { name: /^gone@example\.com/ })
    .waitFor();
  expect(page.url()).toBe(dashboardUrl(app, 'suppressions'));
  await watched.close();
});

test('checking an address shows why it is suppressed, and its link opens the message whatever the spelling typed', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(dashboardUrl(app, 'suppressions'));
  await page.getByLabel('Email to check').fill('Gone@EXAMPLE.com');
  await page.getByRole('button', { name: 'Check' }).click();
  const result = page.locator('.result');
  await expect
    .poll(() => result.textContent())
    .toBe(
      'Gone@EXAMPLE.com is suppressed: Hard bounce, since 2026-03-01 08:00:00 UTC.Provider eventSendGrid, 2026-03-01 08:00:00 UTCsmtp; 550 5.1.1 user unknownMessage sg-gone-1 · Open the message to Gone@EXAMPLE.com',
    );
  await result.getByRole('link').click();
  // The API derives the message's id from the normalized recipient, as it stores messages.
  await page.locator('.timeline-entry').first().waitFor();
  expect(new URL(page.url()).searchParams.get('id')).toBe(await messageIdOf('sg-gone-1'));

  await page.goto(dashboardUrl(app, 'suppressions'));
  for (const [email, shown] of [
    ['manual@example.com', 'Added through the API or the dashboard'],
    ['imported@example.com', 'Imported with the CLI'],
    ['old@example.com', 'Not recorded (suppressed before mailwarden kept it)'],
  ] as const) {
    await page.getByLabel('Email to check').fill(email);
    await page.getByRole('button', { name: 'Check' }).click();
    await expect.poll(() => result.locator('.provenance').textContent()).toBe(shown);
  }
  await watched.close();
});
