import type { Stats } from '@mailwarden/core';
import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { columnTexts, connectBrowser, dashboardUrl, event, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

const day = (date: string, time = '10:00:00') => new Date(`2026-11-${date}T${time}.000Z`);

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const sale = { trackingId: 'spring-sale' };
  // Five days of one campaign, with a day without any event (the 19th) and one after its last send
  // (the 21st): every outcome on some day, and a message whose outcomes fall on different days.
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({ ...sale, recipient: 'a@example.com', occurredAt: day('18') }),
    event({ ...sale, recipient: 'b@example.com', occurredAt: day('18', '11:00:00') }),
    event({ ...sale, recipient: 'c@example.com', occurredAt: day('18', '23:59:59') }),
    event({ ...sale, recipient: 'd@example.com', type: 'bounced', bounceClass: 'hard', occurredAt: day('18') }),
    event({ ...sale, recipient: 'a@example.com', type: 'opened', occurredAt: day('20') }),
    event({ ...sale, recipient: 'e@example.com', occurredAt: day('20', '00:00:00') }),
    event({ ...sale, recipient: 'f@example.com', occurredAt: day('20') }),
    event({ ...sale, recipient: 'g@example.com', type: 'bounced', bounceClass: 'soft', occurredAt: day('20') }),
    event({ ...sale, recipient: 'b@example.com', type: 'complained', occurredAt: day('20') }),
    event({ ...sale, recipient: 'h@example.com', type: 'clicked', occurredAt: day('22') }),
    event({ ...sale, recipient: 'e@example.com', type: 'unsubscribed', occurredAt: day('22', '08:00:00') }),
  ]);
  // Counted nowhere: only sent.
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({ recipient: 'quiet@example.com', trackingId: 'quiet', type: 'sent', occurredAt: day('20') }),
  ]);
  await app.mailwarden.applyEvents(app.projects.acme, [event({ recipient: 'dots@example.com', trackingId: '..' })]);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const columns = ['Day', 'Delivered', 'Hard bounced', 'Soft bounced', 'Complained', 'Opened', 'Clicked', 'Unsubscribed'] as const;
const keys = ['delivered', 'hardBounced', 'softBounced', 'complained', 'opened', 'clicked', 'unsubscribed'] as const;

async function statsOf(path: string, from: string, to: string): Promise<Stats> {
  return jsonOf(await app.api('GET', `/projects/${app.projects.acme}/${path}?from=${from}&to=${to}&interval=day`)) as Stats;
}

/** The table's rows as [day, …counts], after opening it. */
async function tableRows(page: Page): Promise<string[][]> {
  const region = page.getByRole('region', { name: /^Counts per day/ });
  const details = region.locator('details');
  if ((await details.getAttribute('open')) === null) await region.getByText('Numbers per day').click();
  const table = region.getByRole('table', { name: /^Messages per UTC day/ });
  const byColumn = await Promise.all(columns.map((column) => columnTexts(page, column, table)));
  return byColumn[0]!.map((_, row) => byColumn.map((cells) => cells[row]!));
}

/** What the chart draws: per series, the days with a bar and the count of its tooltip. */
async function chartBars(page: Page): Promise<Record<string, string[]>> {
  return page
    .locator('.chart-row')
    .evaluateAll((rows) =>
      Object.fromEntries(
        rows.map((row) => [
          row.querySelector('.chart-label')!.textContent,
          Array.from(row.querySelectorAll('rect'), (bar) => bar.querySelector('title')!.textContent!),
        ]),
      ),
    );
}

const expectedRows = (stats: Stats) =>
  stats.buckets.map((bucket) => [bucket.start.slice(0, 10), ...keys.map((key) => String(bucket[key]))]);
const expectedBars = (stats: Stats) =>
  Object.fromEntries(
    keys.map((key, index) => [
      columns[index + 1],
      stats.buckets
        .filter((bucket) => bucket[key] > 0)
        .map((bucket) => `${bucket.start.slice(0, 10)}: ${bucket[key]} ${columns[index + 1]!.toLowerCase()}`),
    ]),
  );

test('a tracking ID’s counts per day: the chart and the table show what the API answers, zero days included, up to its last event', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=spring-sale&days=7`);
  const region = page.getByRole('region', { name: 'Counts per day' });
  await region.locator('.chart').waitFor();
  // The last event is on the 22nd: the 7 days are the 16th to the 22nd.
  expect(await region.locator('#per-day-range-note').textContent()).toContain(
    'The 7 days up to its last event: 2026-11-16 to 2026-11-22, UTC.',
  );
  const stats = await statsOf('tracking-ids/spring-sale/stats', '2026-11-16', '2026-11-23');
  const rows = await tableRows(page);
  expect(rows).toStrictEqual(expectedRows(stats));
  // Written out once, so the test does not only agree with the API but with what happened.
  expect(rows).toStrictEqual([
    ['2026-11-16', '0', '0', '0', '0', '0', '0', '0'],
    ['2026-11-17', '0', '0', '0', '0', '0', '0', '0'],
    ['2026-11-18', '3', '1', '0', '0', '0', '0', '0'],
    ['2026-11-19', '0', '0', '0', '0', '0', '0', '0'],
    ['2026-11-20', '2', '0', '1', '1', '1', '0', '0'],
    ['2026-11-21', '0', '0', '0', '0', '0', '0', '0'],
    ['2026-11-22', '1', '0', '0', '0', '0', '1', '1'],
  ]);
  expect(await region.locator('tfoot').textContent()).toBe('Total6111111');
  expect(await chartBars(page)).toStrictEqual(expectedBars(stats));
  expect(await region.locator('.per-day-totals').textContent()).toBe(
    'In these days: 6 delivered · 1 hard bounced · 1 soft bounced · 1 complained · 1 opened · 1 clicked · 1 unsubscribed.',
  );
  // The chart is for the eye; the table is what assistive technology reads.
  expect(await region.locator('.chart').getAttribute('aria-hidden')).toBe('true');
  await watched.close();
});

test('the range is a choice kept in the address: 30 days by default, 7 or 90, restored by reload, back and forward', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=spring-sale`);
  const days = page.getByLabel('Days');
  await page.locator('.chart').waitFor();
  expect(await days.inputValue()).toBe('30');
  expect(await tableRows(page)).toStrictEqual(expectedRows(await statsOf('tracking-ids/spring-sale/stats', '2026-10-24', '2026-11-23')));
  expect((await tableRows(page)).length).toBe(30);

  await days.selectOption('90');
  await expect.poll(() => new URL(page.url()).search).toBe('?trackingId=spring-sale&days=90');
  await expect.poll(async () => (await tableRows(page)).length).toBe(90);
  expect(await tableRows(page)).toStrictEqual(expectedRows(await statsOf('tracking-ids/spring-sale/stats', '2026-08-25', '2026-11-23')));
  await page.reload();
  await page.locator('.chart').waitFor();
  expect(await page.getByLabel('Days').inputValue()).toBe('90');
  await page.goBack();
  await expect.poll(() => page.getByLabel('Days').inputValue()).toBe('30');
  await page.goForward();
  await expect.poll(() => page.getByLabel('Days').inputValue()).toBe('90');
  await watched.close();
});

test('the whole project’s counts per day, up to today in UTC (the page’s clock set by the test)', async () => {
  // Just before midnight UTC, where it is already the next afternoon: a local-time slip would show the wrong days.
  const watched = await openPage(browser, app, { timezoneId: 'Pacific/Kiritimati' });
  const { page } = watched;
  await page.clock.setFixedTime(new Date('2026-11-22T23:30:00.000Z'));
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?days=7`);
  const region = page.getByRole('region', { name: 'Counts per day in the project' });
  await region.locator('.chart').waitFor();
  expect(await region.locator('#per-day-range-note').textContent()).toContain('The 7 days up to today: 2026-11-16 to 2026-11-22, UTC.');
  const stats = await statsOf('stats', '2026-11-16', '2026-11-23');
  expect(await tableRows(page)).toStrictEqual(expectedRows(stats));
  expect(await chartBars(page)).toStrictEqual(expectedBars(stats));
  // A day later, the range moves with it.
  await page.clock.setFixedTime(new Date('2026-11-23T00:30:00.000Z'));
  await page.reload();
  await region.locator('.chart').waitFor();
  expect(await region.locator('#per-day-range-note').textContent()).toContain('2026-11-17 to 2026-11-23');
  await watched.close();
});

test('nothing counted says so; a tracking ID no URL path can carry says why instead of asking', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=quiet`);
  const region = page.getByRole('region', { name: 'Counts per day' });
  await region.getByText('Nothing was delivered, bounced, complained about, opened, clicked or unsubscribed from in these days.').waitFor();
  expect(await region.getByRole('table').count()).toBe(0);
  expect(await region.locator('.chart').count()).toBe(0);

  const asked = watched.requests.length;
  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=..`);
  await page.getByRole('heading', { name: 'Counts for ..' }).waitFor();
  await expect
    .poll(() => region.getByRole('alert').textContent())
    .toBe('Could not load the counts per day.“..” cannot be sent as one segment of a URL path, so the API cannot be asked about it.Retry');
  expect(watched.requests.slice(asked).filter((url) => url.includes('/stats'))).toStrictEqual([]);
  await watched.close();
});
