import type { TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { columnTexts, connectBrowser, dashboardUrl, event, openPage, seedMessages, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

/** Tracking IDs a hostile or careless sender may use: each must show literally and break nothing. */
const hostile = {
  markup: '<img src=x onerror="window.__pwned=1">',
  bold: '"quotes\' & <b>bold</b>',
  rtl: '\u202Egnp.exe-\u05E9\u05DC\u05D5\u05DD',
  emoji: '🎉📬 launch 👩🏽‍💻',
  long: 'x'.repeat(128),
  longEmoji: '📬'.repeat(128),
  path: '../../projects/other',
};

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const acme = app.projects.acme;
  // Two newsletters, a welcome campaign, a tracking ID with three pages of messages, and untracked mail.
  await app.mailwarden.applyEvents(acme, [
    event({ recipient: 'n1@example.com', trackingId: 'newsletter-2026-10' }),
    event({ recipient: 'n2@example.com', trackingId: 'newsletter-2026-10', type: 'bounced' }),
    event({ recipient: 'n3@example.com', trackingId: 'newsletter-2026-11' }),
    event({ recipient: 'n4@example.com', trackingId: 'newsletter-2026-11', type: 'complained' }),
    event({ recipient: 'w1@example.com', trackingId: 'welcome' }),
    event({ recipient: 'plain@example.com', trackingId: null }),
  ]);
  // A day older than the rest, so the unfiltered first page shows the others.
  await seedMessages(app.mailwarden, acme, 'bulk', 120, Date.parse('2026-11-19T10:00:00.000Z'));
  await app.mailwarden.applyEvents(
    acme,
    Object.values(hostile).map((trackingId, i) => event({ recipient: `hostile${i}@example.com`, trackingId })),
  );
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const combobox = (page: Page) => page.getByRole('combobox', { name: 'Tracking ID' });
/** Waits until the options shown answer `text` (the listbox says which text its options answer). */
const optionsFor = async (page: Page, text: string) => {
  await page.locator(`[role="listbox"][data-search="${text.replace(/["\\]/g, '\\$&')}"]`).waitFor();
  return page.getByRole('listbox').getByRole('option').allTextContents();
};
/** The tracking IDs the options show, `null` for the one that clears the filter. */
const optionIds = (page: Page) =>
  page
    .getByRole('listbox')
    .getByRole('option')
    .evaluateAll((options) => options.map((option) => option.querySelector('bdi')?.textContent ?? null));
const trackingIdParameter = (page: Page) => new URL(page.url()).searchParams.get('trackingId');

test('the combobox by keyboard: typing searches the server, arrows and Enter choose, the page filters and shows the counts', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const input = combobox(page);
  await input.focus();
  // Typed as fast as the keyboard sends: no keystroke may be lost to a re-render.
  await input.pressSequentially('NEWS');
  const options = await optionsFor(page, 'NEWS');
  // A search offers its matches only: All tracking IDs is for an empty box.
  expect(await optionIds(page)).toStrictEqual(['newsletter-2026-10', 'newsletter-2026-11']);
  expect(options[0]).toContain('2 messages · 50% delivered · 1 bounced · 0 complained');
  expect(await input.getAttribute('aria-expanded')).toBe('true');
  expect(await input.getAttribute('aria-activedescendant')).toBeFalsy();

  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  // The highlighted option is the active descendant, and the only one marked selected.
  const highlighted = page.locator(`#${await input.getAttribute('aria-activedescendant')}`);
  expect(await highlighted.locator('bdi').textContent()).toBe('newsletter-2026-11');
  expect(await page.getByRole('listbox').getByRole('option', { selected: true }).allTextContents()).toStrictEqual([
    await highlighted.textContent(),
  ]);
  await page.keyboard.press('Enter');

  await page.getByRole('heading', { name: 'Counts for newsletter-2026-11' }).waitFor();
  expect(trackingIdParameter(page)).toBe('newsletter-2026-11');
  await expect.poll(() => input.inputValue()).toBe('newsletter-2026-11');
  expect(await input.getAttribute('aria-expanded')).toBe('false');
  await expect.poll(async () => (await columnTexts(page, 'Recipient')).sort()).toStrictEqual(['n3@example.com', 'n4@example.com']);
  expect(await page.locator('.count-grid').textContent()).toBe('Messages2Delivered1 50%Bounced0 0%Complained1 50%');
  expect(await page.getByRole('img').getAttribute('aria-label')).toBe('Of 2 messages: delivered 50%, bounced 0%, complained 50%');

  // Escape closes an open list and keeps the filter; on a closed list it changes nothing.
  await input.press('ArrowDown');
  await page.getByRole('listbox').waitFor();
  await input.press('Escape');
  expect(await input.getAttribute('aria-expanded')).toBe('false');
  await input.press('Escape');
  expect([trackingIdParameter(page), await input.inputValue()]).toStrictEqual(['newsletter-2026-11', 'newsletter-2026-11']);
  await watched.close();
});

test.each([
  ['ArrowDown then Enter', ['ArrowDown', 'Enter']],
  ['Enter alone', ['Enter']],
] as const)('after typing, %s chooses the first match', async (_name, keys) => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const input = combobox(page);
  for (const text of ['welc', '2026-1']) {
    await input.fill('');
    await input.pressSequentially(text);
    const [first] = await optionsFor(page, text).then(() => optionIds(page));
    for (const key of keys) await page.keyboard.press(key);
    await page.getByRole('heading', { name: `Counts for ${first}` }).waitFor();
    expect([trackingIdParameter(page), await input.inputValue(), await input.getAttribute('aria-expanded')]).toStrictEqual([
      first,
      first,
      'false',
    ]);
  }
  // Enter before the search has answered waits for it and chooses its first match.
  await input.fill('');
  await input.pressSequentially('newsletter-2026-1');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Counts for newsletter-2026-10' }).waitFor();
  // With the box empty, All tracking IDs is the first option again, and choosing it clears the filter.
  await input.fill('');
  await optionsFor(page, '');
  expect((await optionIds(page))[0]).toBeNull();
  await page.keyboard.press('ArrowDown');
  expect(await page.locator(`#${await input.getAttribute('aria-activedescendant')}`).textContent()).toBe('All tracking IDs');
  await page.keyboard.press('Enter');
  await expect.poll(() => trackingIdParameter(page)).toBeNull();
  expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('combobox');
  await watched.close();
});

test('the combobox by mouse, and its first option clears the filter', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('button', { name: 'Show tracking IDs' }).click();
  const all = await optionsFor(page, '');
  expect(all.length).toBe(1 + 4 + Object.keys(hostile).length);
  await page.getByRole('option', { name: /^welcome/ }).click();
  await page.getByRole('heading', { name: 'Counts for welcome' }).waitFor();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['w1@example.com']);

  // Opening again shows every tracking ID, not only the chosen one.
  await page.getByRole('button', { name: 'Show tracking IDs' }).click();
  expect((await optionsFor(page, '')).length).toBe(all.length);
  await page.getByRole('option', { name: 'All tracking IDs' }).click();
  await expect.poll(() => trackingIdParameter(page)).toBeNull();
  await expect.poll(() => combobox(page).inputValue()).toBe('');
  expect(await page.getByRole('heading', { name: /Counts for/ }).count()).toBe(0);
  await expect.poll(async () => (await columnTexts(page, 'Recipient')).includes('plain@example.com')).toBe(true);

  // A tracking ID in the table is a link to the same filter.
  await page.getByRole('link', { name: 'newsletter-2026-10' }).first().click();
  await page.getByRole('heading', { name: 'Counts for newsletter-2026-10' }).waitFor();
  await watched.close();
});

test('the filter lives in the URL: shareable, and reload, back and forward restore it', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const choose = async (text: string, name: string) => {
    await combobox(page).fill('');
    await combobox(page).pressSequentially(text);
    await optionsFor(page, text);
    await page.getByRole('option', { name: new RegExp(`^${name}`) }).click();
    await page.getByRole('heading', { name: `Counts for ${name}` }).waitFor();
  };
  await choose('welc', 'welcome');
  await choose('2026-10', 'newsletter-2026-10');
  expect(page.url()).toBe(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-10`);

  await page.reload();
  await page.getByRole('heading', { name: 'Counts for newsletter-2026-10' }).waitFor();
  await expect.poll(() => combobox(page).inputValue()).toBe('newsletter-2026-10');

  await page.goBack();
  await page.getByRole('heading', { name: 'Counts for welcome' }).waitFor();
  await expect.poll(() => combobox(page).inputValue()).toBe('welcome');
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['w1@example.com']);
  await page.goBack();
  await expect.poll(() => trackingIdParameter(page)).toBeNull();
  await expect.poll(() => combobox(page).inputValue()).toBe('');
  await page.goForward();
  await page.getByRole('heading', { name: 'Counts for welcome' }).waitFor();

  // A link opened straight away, in a signed-in tab, shows the same.
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=bulk&status=delivered`);
  await page.getByRole('heading', { name: 'Counts for bulk' }).waitFor();
  expect(await page.getByLabel('Status').inputValue()).toBe('delivered');
  await watched.close();
});

test('paging a tracking ID with more messages than a page: every message once, none skipped, back and forth', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=bulk`);
  await page.getByRole('heading', { name: 'Counts for bulk' }).waitFor();
  const pager = page.getByRole('navigation', { name: 'Pages of messages' });
  const positions = ['1–50', '51–100', '101–120'];
  const pages: string[][] = [];
  for (;;) {
    await page.getByRole('table').waitFor();
    await expect.poll(async () => pager.locator('.position').textContent()).toBe(`Showing ${positions[pages.length]}`);
    pages.push(await columnTexts(page, 'Recipient'));
    const next = pager.getByRole('button', { name: 'Next page' });
    if (await next.isDisabled()) break;
    await next.click();
  }
  expect(pages.map((rows) => rows.length)).toStrictEqual([50, 50, 20]);
  const seen = pages.flat();
  expect(new Set(seen).size).toBe(120);
  expect(new Set(seen)).toStrictEqual(new Set(Array.from({ length: 120 }, (_, i) => `r${i}.bulk@example.com`)));
  // Newest first across the pages.
  expect(seen[0]).toBe('r119.bulk@example.com');
  expect(seen.at(-1)).toBe('r0.bulk@example.com');

  // The place is in the address: a reload shows the same page, and Previous still knows the way back.
  expect(new URL(page.url()).searchParams.get('page')).toBe('3');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(pages[2]);
  expect(await pager.locator('.position').textContent()).toBe('Showing 101–120');
  await pager.getByRole('button', { name: 'Previous page' }).click();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(pages[1]);
  expect(await pager.locator('.position').textContent()).toBe('Showing 51–100');
  // Back returns to the page before, as for any link.
  await page.goBack();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(pages[2]);
  const shared = page.url();

  // A message opened from page 3 and closed again returns to page 3.
  await page.getByRole('link', { name: pages[2]![0]! }).click();
  await page.getByRole('link', { name: 'Back to the messages' }).click();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(pages[2]);

  // A shared link, opened in another tab, shows the same rows; with no way back known, First page is the way.
  const other = await openPage(browser, app);
  await signIn(other.page, app);
  await other.page.goto(shared);
  await expect.poll(() => columnTexts(other.page, 'Recipient')).toStrictEqual(pages[2]);
  const otherPager = other.page.getByRole('navigation', { name: 'Pages of messages' });
  expect(await otherPager.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
  await otherPager.getByRole('button', { name: 'First page' }).click();
  await expect.poll(() => columnTexts(other.page, 'Recipient')).toStrictEqual(pages[0]);
  expect(new URL(other.page.url()).searchParams.has('cursor')).toBe(false);
  await other.close();
  await watched.close();
});

test('a page address whose cursor the API refuses offers the first page, not a Retry that cannot help', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=bulk&page=2&cursor=not-a-cursor`);
  const alert = page.getByRole('alert');
  await expect.poll(() => alert.textContent()).toContain('Invalid cursor');
  expect(await alert.getByRole('button', { name: 'Retry' }).count()).toBe(0);
  await alert.getByRole('button', { name: 'First page' }).click();
  await expect.poll(async () => (await columnTexts(page, 'Recipient')).length).toBe(50);
  expect(new URL(page.url()).search).toBe('?trackingId=bulk');
  await watched.close();
});

test('the list shows, labelled, the time it is ordered by: the first event', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=bulk`);
  await page.getByRole('table').waitFor();
  expect(await page.getByRole('table').locator('caption').textContent()).toContain('newest first by their first event');
  const shown = await columnTexts(page, 'First event');
  expect(shown.slice(0, 2)).toStrictEqual(['2026-11-19 10:01:59 UTC', '2026-11-19 10:01:58 UTC']);
  expect(shown).toStrictEqual([...shown].sort().reverse());
  await watched.close();
});

test('the status filter narrows the table and is kept in the URL', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByLabel('Status').selectOption('complained');
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['n4@example.com']);
  expect(new URL(page.url()).searchParams.get('status')).toBe('complained');
  await page.getByLabel('Status').selectOption('bounced');
  await expect.poll(() => columnTexts(page, 'Status')).toStrictEqual(['Bounced']);
  await combobox(page).pressSequentially('welcome');
  await optionsFor(page, 'welcome');
  await page.getByRole('option', { name: /^welcome/ }).click();
  await page.getByText('No messages match these filters.').waitFor();
  expect(new URL(page.url()).search).toBe('?trackingId=welcome&status=bounced');
  await watched.close();
});

test('hostile tracking IDs show literally everywhere, never run, and never widen the page', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const noOverflow = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

  await page.getByRole('button', { name: 'Show tracking IDs' }).click();
  await optionsFor(page, '');
  const options = await optionIds(page);
  for (const trackingId of Object.values(hostile)) expect(options).toContain(trackingId);
  expect(await noOverflow()).toBe(true);
  await page.keyboard.press('Escape');

  for (const trackingId of Object.values(hostile)) {
    await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=${encodeURIComponent(trackingId)}`);
    await page.getByRole('heading', { name: /Counts for/ }).waitFor();
    expect(await page.locator('#counts-title bdi').textContent()).toBe(trackingId);
    await expect.poll(() => combobox(page).inputValue()).toBe(trackingId);
    await expect.poll(() => columnTexts(page, 'Tracking ID')).toStrictEqual([trackingId]);
    expect(await noOverflow(), trackingId).toBe(true);
  }
  await page.getByRole('link', { name: 'Tracking IDs' }).click();
  await page.getByRole('table').waitFor();
  const listed = await columnTexts(page, 'Tracking ID');
  for (const trackingId of Object.values(hostile)) expect(listed).toContain(trackingId);
  expect(await noOverflow()).toBe(true);

  expect(await page.evaluate(() => ({ pwned: (window as { __pwned?: unknown }).__pwned, images: document.images.length }))).toStrictEqual({
    pwned: undefined,
    images: 0,
  });
  expect(await page.locator('b').count()).toBe(0);
  await watched.close();
});

test('the Tracking IDs page: counts and rates, server-side search, and each ID opens its messages', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.getByRole('link', { name: 'Tracking IDs' }).click();
  await page.getByRole('table').waitFor();
  await page.getByLabel('Search tracking IDs').fill('newsletter');
  await expect.poll(() => columnTexts(page, 'Tracking ID')).toStrictEqual(['newsletter-2026-10', 'newsletter-2026-11']);
  expect(new URL(page.url()).searchParams.get('search')).toBe('newsletter');
  expect(await page.getByRole('row', { name: /newsletter-2026-10/ }).textContent()).toContain('1 50%');
  await page.getByLabel('Search tracking IDs').fill('no such campaign');
  await page.getByText('No tracking ID contains').waitFor();
  await page.getByLabel('Search tracking IDs').fill('bulk');
  await page.getByRole('link', { name: 'bulk' }).click();
  await page.getByRole('heading', { name: 'Counts for bulk' }).waitFor();
  expect(trackingIdParameter(page)).toBe('bulk');
  await watched.close();
});

test('the Recipient box searches by the start of an address, or by domain after @; partial text is a search, never an error', async () => {
  await app.mailwarden.applyEvents(app.projects.acme, [event({ recipient: 'n5@other.example', trackingId: 'newsletter-2026-11' })]);
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-11`);
  await page.getByRole('table').waitFor();
  const recipient = page.getByLabel('Recipient');
  const search = async (text: string) => {
    await recipient.fill(text);
    await recipient.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('recipient')).toBe(text);
  };
  await search('N');
  await expect
    .poll(async () => (await columnTexts(page, 'Recipient')).sort())
    .toStrictEqual(['n3@example.com', 'n4@example.com', 'n5@other.example']);
  await search('n4@EX');
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['n4@example.com']);
  await search('@other.example');
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['n5@other.example']);
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['n5@other.example']);
  expect(await recipient.inputValue()).toBe('@other.example');
  await search('zz');
  await page.getByText('No messages match these filters.').waitFor();
  expect(await page.getByRole('alert').count()).toBe(0);
  await watched.close();
});

test('the Stream box filters by a stream’s whole name, kept in the URL; the list and the message show the stream', async () => {
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({ recipient: 's1@example.com', trackingId: 'streamed', stream: 'weekly-digest' }),
    event({ recipient: 's2@example.com', trackingId: 'streamed', stream: 'receipts' }),
    event({ recipient: 's3@example.com', trackingId: 'streamed' }),
  ]);
  // The last search is refused (400), which the browser logs.
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=streamed`);
  await page.getByRole('table').waitFor();
  expect((await columnTexts(page, 'Stream')).sort()).toStrictEqual(['none', 'receipts', 'weekly-digest']);

  const stream = page.getByRole('searchbox', { name: 'Stream' });
  await stream.fill('weekly-digest');
  await stream.press('Enter');
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['s1@example.com']);
  expect(new URL(page.url()).search).toBe('?trackingId=streamed&stream=weekly-digest');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Recipient')).toStrictEqual(['s1@example.com']);
  expect(await stream.inputValue()).toBe('weekly-digest');

  await page.getByRole('link', { name: 's1@example.com' }).click();
  await expect.poll(() => page.locator('dt:text-is("Stream") + dd').textContent()).toBe('weekly-digest');
  await page.goBack();

  // A name that cannot be a stream's: the API's reason, and no Retry that cannot help.
  await stream.fill('Weekly Digest');
  await stream.press('Enter');
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toContain('lower-case');
  expect(await page.getByRole('alert').getByRole('button').count()).toBe(0);
  await watched.close();
});
