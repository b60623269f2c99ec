import { jsonOf, type TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { columnTexts, connectBrowser, dashboardUrl, event, listingTable, openPage, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

/** A record as a store keeps it. */
type SuppressionRecord = Parameters<TestApp['store']['addSuppression']>[1];

const at = (day: number) => Date.parse(`2026-03-${String(day).padStart(2, '0')}T08:00:00.000Z`);

/** A record of one list (`stream`'s, else the project-wide one), stored as the service would. */
function record(email: string, day: number, fields: Partial<SuppressionRecord> = {}): SuppressionRecord {
  return {
    hash: app.mailwarden.suppressions.hashOf(email),
    email,
    reason: 'manual',
    createdAt: at(day),
    provenance: { source: 'api', at: at(day) },
    ...fields,
  };
}

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  const acme = app.projects.acme;
  // The project-wide list: a hard bounce (through an event) and an address added by hand, which is on
  // the marketing list too, with another reason and time there.
  await app.mailwarden.applyEvents(acme, [
    event({ recipient: 'bounced@example.com', type: 'bounced', occurredAt: new Date(at(1)) }),
    // Messages in the marketing stream, to open.
    event({ recipient: 'both@example.com', messageId: 'sg-both-1', stream: 'marketing', occurredAt: new Date(at(9)) }),
    event({ recipient: 'unsub@example.com', messageId: 'sg-unsub-1', stream: 'marketing', occurredAt: new Date(at(9)) }),
    event({ recipient: 'pair@example.com', messageId: 'sg-pair-1', stream: 'marketing', occurredAt: new Date(at(9)) }),
    // A provider's unsubscribe event of a message in the marketing stream: an entry of that list, its cause the event.
    event({
      recipient: 'away@example.com',
      messageId: 'sg-away-1',
      type: 'unsubscribed',
      stream: 'marketing',
      occurredAt: new Date(at(8)),
    }),
  ]);
  for (const suppression of [
    record('both@example.com', 2),
    record('both@example.com', 3, { stream: 'marketing', provenance: { source: 'import', at: at(3) } }),
    // An unsubscribe: reason manual, source unsubscribe (docs/decisions.md, "How an unsubscribe is shown").
    record('unsub@example.com', 4, { stream: 'marketing', provenance: { source: 'unsubscribe', at: at(4) } }),
    record('hand@example.com', 5, { stream: 'marketing' }),
    record('digest@example.com', 6, { stream: 'weekly-digest', reason: 'hard_bounce' }),
    // On both lists, whose messages are in the marketing stream (opened last, after the listings).
    record('pair@example.com', 1, { reason: 'complaint', createdAt: at(1) + 3_600_000, provenance: { source: 'import', at: at(1) } }),
    record('pair@example.com', 7, { stream: 'marketing' }),
  ]) {
    await app.store.addSuppression(acme, suppression);
  }
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

const apiCheck = async (email: string, stream?: string) =>
  jsonOf(
    await app.api(
      'GET',
      `/projects/${app.projects.acme}/suppressions/check?email=${encodeURIComponent(email)}${stream === undefined ? '' : `&stream=${stream}`}`,
    ),
  );

/** Each row of the listing as "email | reason | stream | source and cause". */
async function rows(page: Page): Promise<string[]> {
  await listingTable(page).waitFor();
  const [emails, reasons, streams, sources] = await Promise.all(
    ['Email', 'Reason', 'Stream', 'Source and cause'].map((header) => columnTexts(page, header)),
  );
  return emails!.map((email, index) => `${email} | ${reasons![index]} | ${streams![index]} | ${sources![index]}`);
}

async function openSuppressions(page: Page): Promise<void> {
  await signIn(page, app);
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('heading', { level: 1, name: 'Suppressions' }).waitFor();
}

test('one list at a time: the project-wide one, or a stream’s chosen by name and kept in the address; an unsubscribe says so', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await openSuppressions(page);
  await expect
    .poll(() => rows(page))
    .toStrictEqual([
      'both@example.com | Manual | project-wide | Added through the API or the dashboard',
      'pair@example.com | Complaint | project-wide | Imported with the CLI',
      'bounced@example.com | Hard bounce | project-wide | Provider eventSendGrid, 2026-03-01 08:00:00 UTCMessage m-bounced@example.com · Open the message to bounced@example.com',
    ]);
  expect(await listingTable(page).locator('caption').textContent()).toBe(
    'Suppressed addresses on the project-wide list, newest first by when each was suppressed',
  );

  const filter = page.getByLabel('Stream', { exact: true });
  await filter.fill('marketing');
  await filter.press('Enter');
  await expect
    .poll(() => rows(page))
    .toStrictEqual([
      'away@example.com | Manual Unsubscribed | marketing | The recipient unsubscribedSendGrid, 2026-03-08 08:00:00 UTCMessage sg-away-1 · Open the message to away@example.com',
      'pair@example.com | Manual | marketing | Added through the API or the dashboard',
      'hand@example.com | Manual | marketing | Added through the API or the dashboard',
      'unsub@example.com | Manual Unsubscribed | marketing | The recipient unsubscribed',
      'both@example.com | Manual | marketing | Imported with the CLI',
    ]);
  expect(await columnTexts(page, 'Suppressed since')).toStrictEqual([
    '2026-03-08 08:00:00 UTC',
    '2026-03-07 08:00:00 UTC',
    '2026-03-05 08:00:00 UTC',
    '2026-03-04 08:00:00 UTC',
    '2026-03-03 08:00:00 UTC',
  ]);
  expect(await listingTable(page).locator('caption').textContent()).toBe(
    'Suppressed addresses on the list of stream marketing, newest first by when each was suppressed',
  );
  expect(new URL(page.url()).searchParams.get('stream')).toBe('marketing');

  // The address search applies within the list, and both survive a reload.
  const search = page.getByLabel('Search addresses');
  await search.fill('un');
  await search.press('Enter');
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['unsub@example.com']);
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['unsub@example.com']);
  expect([await filter.inputValue(), await search.inputValue()]).toStrictEqual(['marketing', 'un']);
  expect(Object.fromEntries(new URL(page.url()).searchParams)).toStrictEqual({ stream: 'marketing', email: 'un' });
  await search.fill('nobody');
  await search.press('Enter');
  await page.getByText('No address on the list of stream marketing starts with nobody.').waitFor();

  // A stream with an empty list, and back to the project-wide list by clearing the field.
  await search.fill('');
  await search.press('Enter');
  await filter.fill('product-updates');
  await filter.press('Enter');
  await page.getByText('The list of stream product-updates is empty.').waitFor();
  await filter.fill('');
  await filter.press('Enter');
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(['both@example.com', 'pair@example.com', 'bounced@example.com']);
  expect(new URL(page.url()).search).toBe('');

  // A name that is no stream name shows the API's reason, and no Retry that could not help.
  await filter.fill('Weekly Digest');
  await filter.press('Enter');
  const alert = page.getByRole('alert');
  await expect.poll(() => alert.locator('.failure-title').textContent()).toBe('Could not load the suppressions.');
  expect(await alert.textContent()).toMatch(/stream/i);
  expect(await alert.getByRole('button').count()).toBe(0);
  await watched.close();
});

test('a check for mail of a stream says which list holds the address: the project-wide one answers when both do', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await openSuppressions(page);
  await page.goto(`${dashboardUrl(app, 'suppressions')}?stream=marketing`);
  await listingTable(page).waitFor();
  // The check starts at the list shown.
  const stream = page.getByRole('form', { name: 'Check an address' }).getByLabel('Stream');
  expect(await stream.inputValue()).toBe('marketing');
  const result = page.getByRole('form', { name: 'Check an address' }).locator('.result');
  const check = async (email: string) => {
    await page.getByLabel('Email to check').fill(email);
    await page.getByRole('button', { name: 'Check' }).click();
  };

  await check('both@example.com');
  await expect
    .poll(() => result.locator('p').textContent())
    .toBe('both@example.com is suppressed for stream marketing: Manual, since 2026-03-02 08:00:00 UTC, on the project-wide list.');
  expect(await apiCheck('both@example.com', 'marketing')).toMatchObject({ suppressed: true, stream: null });

  await check('unsub@example.com');
  await expect
    .poll(() => result.textContent())
    .toBe(
      'unsub@example.com is suppressed for stream marketing: Manual, unsubscribed, since 2026-03-04 08:00:00 UTC, on the list of stream marketing.The recipient unsubscribed',
    );
  expect(await apiCheck('unsub@example.com', 'marketing')).toMatchObject({ suppressed: true, source: 'unsubscribe', stream: 'marketing' });

  await check('bounced@example.com');
  await expect
    .poll(() => result.locator('p').textContent())
    .toMatch(/^bounced@example.com is suppressed for stream marketing: Hard bounce, .* on the project-wide list\.$/);
  await check('digest@example.com');
  await expect.poll(() => result.locator('p').textContent()).toBe('digest@example.com is not suppressed for stream marketing.');

  // Without a stream, the project-wide list alone answers, in the words of before streams.
  await stream.fill('');
  await check('unsub@example.com');
  await expect.poll(() => result.textContent()).toBe('unsub@example.com is not suppressed.');
  await check('both@example.com');
  await expect.poll(() => result.locator('p').textContent()).toBe('both@example.com is suppressed: Manual, since 2026-03-02 08:00:00 UTC.');

  // A name that is no stream name: the API's reason.
  await stream.fill('Not A Stream');
  await check('both@example.com');
  await expect
    .poll(() => page.getByRole('form', { name: 'Check an address' }).getByRole('alert').locator('.failure-title').textContent())
    .toBe('Could not check the address.');
  await watched.close();
});

test('add to a stream’s list and remove from the list shown, never from another', async () => {
  const watched = await openPage(browser, app, { expectedProblems: [/400/] });
  const { page } = watched;
  await openSuppressions(page);
  await page.goto(`${dashboardUrl(app, 'suppressions')}?stream=newsletter`);
  await page.getByText('The list of stream newsletter is empty.').waitFor();
  const addForm = page.getByRole('form', { name: 'Add a suppression' });
  expect(await addForm.getByLabel('Stream').inputValue()).toBe('newsletter');

  await page.getByLabel('Email to suppress').fill('New@Example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('Added new@example.com to the list of stream newsletter.').waitFor();
  await expect.poll(() => rows(page)).toStrictEqual(['new@example.com | Manual | newsletter | Added through the API or the dashboard']);
  expect(await apiCheck('new@example.com')).toStrictEqual({ email: 'new@example.com', suppressed: false });
  expect(await apiCheck('new@example.com', 'newsletter')).toMatchObject({ suppressed: true, stream: 'newsletter' });
  await page.getByLabel('Email to suppress').fill('new@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('new@example.com was already on the list of stream newsletter (Manual); nothing changed.').waitFor();

  // An invalid stream name in the form: the API's reason, nothing added.
  await addForm.getByLabel('Stream').fill('News Letter');
  await page.getByLabel('Email to suppress').fill('other@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect.poll(() => addForm.getByRole('alert').locator('.failure-title').textContent()).toBe('Could not add the address.');
  expect(await apiCheck('other@example.com')).toStrictEqual({ email: 'other@example.com', suppressed: false });

  await page.getByRole('button', { name: 'Remove new@example.com' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove this suppression?' });
  expect(await dialog.locator('#remove-description').textContent()).toBe(
    'new@example.com (Manual) leaves the list of stream newsletter: mail of that stream is no longer held back, unless the project-wide list holds the address.',
  );
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed new@example.com from the list of stream newsletter.').waitFor();
  await page.getByText('The list of stream newsletter is empty.').waitFor();
  expect(await apiCheck('new@example.com', 'newsletter')).toStrictEqual({ email: 'new@example.com', suppressed: false });

  // Removing from a stream's list leaves the project-wide entry of the same address alone.
  await page.goto(`${dashboardUrl(app, 'suppressions')}?stream=marketing`);
  await page.getByRole('button', { name: 'Remove both@example.com' }).click();
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed both@example.com from the list of stream marketing.').waitFor();
  await expect
    .poll(() => columnTexts(page, 'Email'))
    .toStrictEqual(['away@example.com', 'pair@example.com', 'hand@example.com', 'unsub@example.com']);
  expect(await apiCheck('both@example.com')).toMatchObject({ suppressed: true, reason: 'manual' });
  await watched.close();
});

test('a message of a stream checks its recipient for that stream, and removes from the list that holds the address', async () => {
  const watched = await openPage(browser, app);
  const { page } = watched;
  await signIn(page, app);
  const suppression = page.getByRole('region', { name: 'Suppression' });
  await page.getByRole('link', { name: 'unsub@example.com' }).click();
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe(
      'unsub@example.com is suppressed for stream marketing: Manual, unsubscribed, since 2026-03-04 08:00:00 UTC, on the list of stream marketing. Sending it mail of this stream is held back.',
    );
  await suppression.getByRole('button', { name: 'Remove from the stream’s list' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove this suppression?' });
  await dialog.getByRole('button', { name: 'Remove' }).click();
  // What happened, then the check asked again: nothing holds it back from this stream now.
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe('Removed unsub@example.com from the list of stream marketing.unsub@example.com is not suppressed for stream marketing.');
  expect(await apiCheck('unsub@example.com', 'marketing')).toStrictEqual({ email: 'unsub@example.com', suppressed: false });

  // On both lists, the project-wide one answers; removed from it, the stream's still holds the address back.
  await page.getByRole('link', { name: 'Back to the messages' }).click();
  await page.getByRole('link', { name: 'pair@example.com' }).click();
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe(
      'pair@example.com is suppressed for stream marketing: Complaint, since 2026-03-01 09:00:00 UTC, on the project-wide list. Sending it mail of this stream is held back.',
    );
  await suppression.getByRole('button', { name: 'Remove from the suppression list' }).click();
  expect(await dialog.locator('#remove-description').textContent()).toBe(
    'pair@example.com (Complaint) will no longer be held back from sending.',
  );
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe(
      'Removed pair@example.com from the project-wide list.pair@example.com is suppressed for stream marketing: Manual, since 2026-03-07 08:00:00 UTC, on the list of stream marketing. Sending it mail of this stream is held back.',
    );
  expect(await apiCheck('pair@example.com')).toStrictEqual({ email: 'pair@example.com', suppressed: false });
  await suppression.getByRole('button', { name: 'Remove from the stream’s list' }).click();
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await expect
    .poll(() => suppression.getByRole('status').textContent())
    .toBe('Removed pair@example.com from the list of stream marketing.pair@example.com is not suppressed for stream marketing.');
  await watched.close();
});

test('a stream’s list pages as the project-wide one does: every entry once, and the page survives a reload', async () => {
  await app.mailwarden.suppressions.addMany(
    app.projects.acme,
    Array.from({ length: 55 }, (_, i) => ({ email: `paged${String(i).padStart(2, '0')}@example.com` })),
    { stream: 'paged' },
  );
  const watched = await openPage(browser, app);
  const { page } = watched;
  await openSuppressions(page);
  await page.goto(`${dashboardUrl(app, 'suppressions')}?stream=paged`);
  await listingTable(page).waitFor();
  const pager = page.getByRole('navigation', { name: 'Pages of suppressions' });
  expect(await pager.locator('.position').textContent()).toBe('Showing 1–50');
  const firstPage = await columnTexts(page, 'Email');
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect.poll(() => pager.locator('.position').textContent()).toBe('Showing 51–55');
  const secondPage = await columnTexts(page, 'Email');
  expect(new Set([...firstPage, ...secondPage]).size).toBe(55);
  expect(new Set(await columnTexts(page, 'Stream'))).toStrictEqual(new Set(['paged']));
  expect(new URL(page.url()).searchParams.get('stream')).toBe('paged');
  await page.reload();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(secondPage);
  await pager.getByRole('button', { name: 'Previous page' }).click();
  await expect.poll(() => columnTexts(page, 'Email')).toStrictEqual(firstPage);
  // Another list starts on its first page.
  const filter = page.getByLabel('Stream', { exact: true });
  await filter.fill('marketing');
  await filter.press('Enter');
  await expect.poll(() => new URL(page.url()).search).toBe('?stream=marketing');
  expect(await pager.count()).toBe(0);
  await watched.close();
});
