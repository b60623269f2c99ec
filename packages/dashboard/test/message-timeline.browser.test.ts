import type { MessageDetail, MessagePage } from '@mailwarden/core';
import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectBrowser, dashboardUrl, event, listingTable, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

/** What a provider may say that must show literally: markup, a right-to-left override, a long unbroken reply. */
const hostileDiagnostic = `550 5.1.1 <img src=x onerror="window.__pwned=1"> <b>no</b> \u202Eliam-on ${'x'.repeat(300)}`;

const at = (time: string) => new Date(`2026-11-20T${time}.000Z`);

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const message = { recipient: 'ana@example.com', messageId: 'sg-ana-1', trackingId: 'welcome' };
  // Applied newest first: the timeline orders them by when they happened, not when they arrived.
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({
      ...message,
      type: 'bounced',
      bounceClass: 'hard',
      occurredAt: at('10:05:00'),
      details: { smtpStatus: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown', bounceClassification: 'Permanent/General' },
    }),
    event({
      ...message,
      type: 'deferred',
      occurredAt: at('10:00:30'),
      details: { smtpStatus: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' },
    }),
    event({ ...message, type: 'sent', occurredAt: at('10:00:00') }),
  ]);
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({ recipient: 'ben@example.com', messageId: 'sg-ben-1', type: 'delivered', occurredAt: at('11:00:00') }),
    event({
      recipient: 'ben@example.com',
      messageId: 'sg-ben-1',
      type: 'complained',
      occurredAt: at('12:00:00'),
      details: { feedbackType: 'abuse' },
    }),
    event({
      recipient: 'cy@example.com',
      messageId: 'pm-cy-1',
      provider: 'postmark',
      type: 'rejected',
      occurredAt: at('13:00:00'),
      details: { rejectReason: 'Inactive recipient' },
    }),
    event({
      recipient: 'dee@example.com',
      messageId: 'sg-dee-1',
      type: 'bounced',
      bounceClass: 'hard',
      occurredAt: at('14:00:00'),
      details: { smtpStatus: '550', diagnostic: hostileDiagnostic },
    }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** The API's id of the message to `recipient`, as the listing gives it. */
async function idOf(recipient: string): Promise<string> {
  const page = jsonOf(
    await app.api('GET', `/projects/${app.projects.acme}/messages?recipient=${encodeURIComponent(recipient)}`),
  ) as MessagePage;
  return page.items[0]!.id;
}

async function messageOf(id: string): Promise<MessageDetail> {
  return jsonOf(await app.api('GET', `/projects/${app.projects.acme}/messages/${id}`)) as MessageDetail;
}

/** Each timeline entry as shown: its line (time, event, provider) and its details as `label: value`. */
const shownTimeline = (page: Page) =>
  page.locator('.timeline-entry').evaluateAll((entries) =>
    entries.map((entry) => ({
      line: entry.querySelector('.entry-head')!.textContent,
      details: Array.from(
        entry.querySelectorAll('.entry-details div'),
        (detail) => `${detail.querySelector('dt')!.textContent}: ${detail.querySelector('dd')!.textContent}`,
      ),
    })),
  );
const focusedId = (page: Page) =>
  page.evaluate(
    () => document.activeElement?.id || document.activeElement?.getAttribute('data-message') || document.activeElement?.tagName,
  );

test('a message opens from its row by keyboard, shows its timeline in order with what the provider said, and focus comes back to the row', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const id = await idOf('ana@example.com');
  const link = listingTable(page).getByRole('link', { name: 'ana@example.com' });
  // A real link: it opens in a new tab too.
  expect(await link.getAttribute('href')).toBe(`${new URL(dashboardUrl(app, 'messages')).pathname}?id=${id}`);
  await link.focus();
  await page.keyboard.press('Enter');

  const heading = page.getByRole('heading', { level: 1, name: 'Message' });
  await heading.waitFor();
  expect(page.url()).toBe(`${dashboardUrl(app, 'messages')}?id=${id}`);
  expect(await focusedId(page)).toBe('message-title');
  expect(await page.title()).toMatch(/^Message · /);
  await page.locator('.timeline-entry').first().waitFor();
  // The list is behind the message, out of sight and out of the accessibility tree.
  expect(await page.getByRole('table').count()).toBe(0);

  expect(await page.locator('.message-facts').textContent()).toBe(
    'Recipientana@example.comStatusBouncedTracking IDwelcomeProviderSendGridProvider’s message IDsg-ana-1First event2026-11-20 10:00:00 UTCLast event2026-11-20 10:05:00 UTC',
  );
  const timeline = await shownTimeline(page);
  expect(timeline).toStrictEqual([
    { line: '2026-11-20 10:00:00 UTC Sent SendGrid', details: [] },
    { line: '2026-11-20 10:00:30 UTC Deferred SendGrid', details: ['SMTP status: 4.2.2', 'Diagnostic: 452 4.2.2 Mailbox full'] },
    {
      line: '2026-11-20 10:05:00 UTC Bounced (hard) SendGrid',
      details: ['SMTP status: 5.1.1', 'Diagnostic: smtp; 550 5.1.1 user unknown', 'Provider’s classification: Permanent/General'],
    },
  ]);
  // The same entries, in the same order, as the API answers.
  const answered = await messageOf(id);
  expect(
    await page
      .locator('.timeline-entry')
      .evaluateAll((entries) => entries.map((entry) => [entry.querySelector('time')!.dateTime, entry.className])),
  ).toStrictEqual(answered.timeline.map((entry) => [entry.occurredAt, `timeline-entry event-${entry.type}`]));

  // Back to the list: the link that opened the message has the focus again.
  await page.getByRole('link', { name: 'Back to the messages' }).click();
  await listingTable(page).waitFor();
  expect(await focusedId(page)).toBe(id);
  await watched.close();
});

test('complaints, rejections and hostile diagnostics: each detail under its name, shown literally', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const expected = {
    'ben@example.com': [
      { line: '2026-11-20 11:00:00 UTC Delivered SendGrid', details: [] },
      { line: '2026-11-20 12:00:00 UTC Complained SendGrid', details: ['Feedback type: abuse'] },
    ],
    'cy@example.com': [{ line: '2026-11-20 13:00:00 UTC Rejected Postmark', details: ['Reject reason: Inactive recipient'] }],
    'dee@example.com': [
      { line: '2026-11-20 14:00:00 UTC Bounced (hard) SendGrid', details: ['SMTP status: 550', `Diagnostic: ${hostileDiagnostic}`] },
    ],
  };
  for (const [recipient, timeline] of Object.entries(expected)) {
    await page.goto(`${dashboardUrl(app, 'messages')}?id=${await idOf(recipient)}`);
    await page.locator('.timeline-entry').first().waitFor();
    expect(await shownTimeline(page), recipient).toStrictEqual(timeline);
  }
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  expect(await page.evaluate(() => ({ pwned: (window as { __pwned?: unknown }).__pwned, images: document.images.length }))).toStrictEqual({
    pwned: undefined,
    images: 0,
  });
  expect(await page.locator('main b').count()).toBe(0);
  await watched.close();
});

test('the opened message lives in the address: reload, back and forward restore it, and the filters come back with the list', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const id = await idOf('ana@example.com');
  await page.getByLabel('Provider').selectOption('sendgrid');
  await page.getByLabel('Status').selectOption('bounced');
  await expect.poll(() => listingTable(page).locator('tbody th').allTextContents()).toStrictEqual(['dee@example.com', 'ana@example.com']);
  const list = page.url();
  await listingTable(page).getByRole('link', { name: 'ana@example.com' }).click();
  await page.locator('.timeline-entry').first().waitFor();
  expect(page.url()).toBe(`${list}&id=${id}`);

  await page.reload();
  await page.locator('.timeline-entry').nth(2).waitFor();
  expect(await page.locator('.message-facts dd').first().textContent()).toBe('ana@example.com');

  await page.goBack();
  await expect.poll(() => page.url()).toBe(list);
  await listingTable(page).waitFor();
  // The list was made anew after the reload, so there is no row that opened the message: its heading has the focus.
  expect(await focusedId(page)).toBe('messages-title');
  expect(await page.getByLabel('Status').inputValue()).toBe('bounced');
  expect(await page.getByLabel('Provider').inputValue()).toBe('sendgrid');
  await page.goForward();
  await page.getByRole('heading', { level: 1, name: 'Message' }).waitFor();
  await page.locator('.timeline-entry').nth(2).waitFor();
  expect(await page.getByRole('table').count()).toBe(0);
  await page.goBack();
  await expect.poll(() => listingTable(page).locator('tbody th').allTextContents()).toStrictEqual(['dee@example.com', 'ana@example.com']);
  // This time the list was there behind the message: the row that opened it has the focus.
  await expect.poll(() => focusedId(page)).toBe(id);
  await watched.close();
});

test('a message that is not there (removed by retention, or a wrong address) says so, and the way back works', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/404|400/] });
  const { page } = watched;
  await signIn(page, app);
  for (const id of ['0'.repeat(32), 'not-a-message-id']) {
    await page.goto(`${dashboardUrl(app, 'messages')}?id=${id}`);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.locator('.failure-title').textContent()).toBe('There is no such message in this project.');
    expect(await alert.textContent()).toContain('retention removed it');
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
  }
  await page.getByRole('link', { name: 'Back to the messages' }).click();
  await listingTable(page).waitFor();
  expect(page.url()).toBe(dashboardUrl(app, 'messages'));
  await watched.close();
});
