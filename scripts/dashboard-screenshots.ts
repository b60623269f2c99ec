// Screenshots of every dashboard page for docs/dashboard.md, taken from the demo data as a new user
// sees it, on a laptop (1280×900) and a phone (390×844, `*-phone.png`): `npm run screenshots` (needs
// Debian's chromium, or CHROMIUM_PATH).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import { changeFeedOf, loadConfig } from '../packages/server/src/config.js';
import { seedDemo, withDemoProject, DEMO_PROJECT } from '../packages/server/src/demo.js';
import { startService } from '../packages/server/src/service.js';
import { openStore } from '../packages/server/src/store.js';

const output = new URL('../docs/dashboard/', import.meta.url);
mkdirSync(output, { recursive: true });

const demo = withDemoProject(loadConfig({ env: { PORT: '0', MAILWARDEN_LOG_LEVEL: 'warn' } }));
// Named keys beside the demo's, so the header reads as an operator's would: `ops` may do everything,
// `support` only read (docs/dashboard.md, "What a key may do").
const apiKey = `mw_ops_${randomBytes(16).toString('hex')}`;
const supportKey = `mw_support_${randomBytes(16).toString('hex')}`;
const demoProject = demo.config.projects[DEMO_PROJECT]!;
const config = {
  ...demo.config,
  projects: {
    ...demo.config.projects,
    [DEMO_PROJECT]: {
      ...demoProject,
      apiKeys: [
        ...(demoProject.apiKeys ?? []),
        { name: 'ops', key: apiKey, scopes: ['check', 'read', 'write', 'admin'] as const },
        { name: 'support', key: supportKey, scopes: ['read'] as const },
      ],
    },
  },
};
// The demo's alerts turn the change feed on, as `mailwarden serve --demo` does.
const opened = await openStore({}, { changes: changeFeedOf(config) });
const service = await startService(config, opened);
await seedDemo(service.mailwarden);
// The demo sends in no stream, so its unsubscribes are project-wide: for the pictures of a stream's list,
// recipients who left the newsletter stream (through its one-click link) and one added to it by hand.
for (const email of ['ana.lima@example.com', 'bo.chen@example.net', 'noor.haddad@example.org']) {
  await service.mailwarden.suppressions.add(DEMO_PROJECT, email, { stream: 'newsletter', source: 'unsubscribe' });
}
await service.mailwarden.suppressions.add(DEMO_PROJECT, 'press@example.com', { stream: 'newsletter' });
// Beside the demo's seed inbox, more seeds and the company's own domain, never suppressed by their
// events; one seed also added by hand for a week, which its entry says.
for (const entry of ['@example-company.com', 'seed.gmail@example.com', 'seed.yahoo@example.org']) {
  await service.mailwarden.allowlist.add(DEMO_PROJECT, entry);
}
await service.mailwarden.suppressions.add(DEMO_PROJECT, 'seed.yahoo@example.org', { ttl: 7 * 86_400 });
// A stream an operator paused, so the Deliverability page shows one with its Resume button.
await service.mailwarden.streams.pause(DEMO_PROJECT, 'newsletter');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const shoot = async (name: string, target: Page = page) => {
    await target.screenshot({ path: new URL(`${name}.png`, output).pathname });
    console.log(`docs/dashboard/${name}.png`);
  };

  await page.goto(`${service.url}/dashboard/`);
  await page.getByLabel('Project').fill(DEMO_PROJECT);
  await page.getByLabel('API key').fill(apiKey);
  await shoot('sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('table').waitFor();
  await shoot('messages');

  const combobox = page.getByRole('combobox', { name: 'Tracking ID' });
  await combobox.click();
  await combobox.pressSequentially('news');
  await page.locator('[role="listbox"][data-search="news"]').waitFor();
  await shoot('tracking-id-combobox');
  await page.getByRole('option', { name: /^newsletter-2026-11-20/ }).click();
  await page.getByRole('heading', { name: /Counts for/ }).waitFor();
  await page.getByRole('table').waitFor();
  await page.locator('.chart').waitFor();
  await shoot('messages-filtered');

  // A campaign of the last days, whose whole life fits in a week, with its numbers as a table: the section alone.
  await page.goto(`${service.url}/dashboard/messages?trackingId=black-friday-2026&days=7`);
  await page.getByText('The 7 days up to').waitFor();
  await page.locator('.chart').waitFor();
  await page.getByText('Numbers per day').click();
  const perDay = page.getByRole('region', { name: 'Counts per day' });
  await perDay.screenshot({ path: new URL('counts-per-day.png', output).pathname });
  console.log('docs/dashboard/counts-per-day.png');

  // A message with the most to tell: deferred on its way, delivered, then opened and clicked.
  const { items } = await service.mailwarden.messages.list(DEMO_PROJECT, {
    trackingId: 'newsletter-2026-11-20',
    status: 'delivered',
    limit: 100,
  });
  const eventful = items.find((message) => (['deferred', 'opened', 'clicked'] as const).every((fact) => message.facts.includes(fact)));
  if (eventful === undefined) throw new Error('the demo has no deferred, opened and clicked message in newsletter-2026-11-20');
  await page.goto(`${service.url}/dashboard/messages?trackingId=newsletter-2026-11-20&id=${eventful.id}`);
  await page.locator('.timeline-entry').nth(4).waitFor();
  await shoot('message-timeline');

  await page.getByRole('link', { name: 'Tracking IDs' }).click();
  await page.getByRole('table').waitFor();
  await shoot('tracking-ids');

  await page.getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('table').waitFor();
  await page.getByLabel('Email to check').fill('bounced@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('is suppressed').waitFor();
  await shoot('suppressions');

  // Below the addresses added by hand and imported, the automatic ones with their cause.
  await page
    .getByRole('row')
    .filter({ hasText: 'Provider event' })
    .first()
    .evaluate((row) => {
      row.scrollIntoView({ block: 'start' });
      window.scrollBy(0, -60);
    });
  await shoot('suppressions-causes');

  // The check's cause opens the message that suppressed the address: a hard bounce and what the server said.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByRole('link', { name: 'Open the message to bounced@example.com' }).first().click();
  await page.locator('.timeline-entry').nth(1).waitFor();
  await shoot('message-bounced');

  await page.goBack();
  await page.getByRole('button', { name: 'Remove opted-out@example.com' }).click();
  await page.getByRole('dialog').waitFor();
  await shoot('suppressions-remove');
  await page.keyboard.press('Escape');

  // The entries that expire: the demo's soft-bounce rule suppression with its bounces, and a seed added by hand for a week.
  await page.goto(`${service.url}/dashboard/suppressions?expiring=true`);
  await page.getByRole('table').waitFor();
  await page.locator('.filters').evaluate((filters) => filters.scrollIntoView({ block: 'start' }));
  await shoot('suppressions-rule');

  await page.getByRole('link', { name: 'Allowlist' }).click();
  await page.getByRole('table').waitFor();
  await shoot('allowlist');

  // The demo's rates against SES's review levels, the paused stream, and no outbound endpoint (the demo has none).
  await page.getByRole('link', { name: 'Deliverability' }).click();
  await page.locator('.rate-card').first().waitFor();
  await page.getByRole('table', { name: /^Streams whose mail/ }).waitFor();
  await shoot('deliverability');

  // The feed, newest first; then only the alerts' crossings.
  await page.getByRole('link', { name: 'Changes' }).click();
  await page.getByRole('table').waitFor();
  await shoot('changes');
  await page.getByLabel('Kind').selectOption('alert');
  await page.getByRole('table', { name: /^Changes that match/ }).waitFor();
  await shoot('changes-alerts');

  // One stream's list, and a check for mail of that stream saying which list holds the address.
  await page.goto(`${service.url}/dashboard/suppressions?stream=newsletter`);
  await page.getByRole('table').waitFor();
  await page.getByLabel('Email to check').fill('bo.chen@example.net');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('is suppressed for stream').waitFor();
  await shoot('suppressions-stream');

  // Erasure: the confirmation names what goes and what stays; then what remains.
  await page.goto(`${service.url}/dashboard/suppressions`);
  await page.getByRole('table').waitFor();
  await page.getByLabel('Email to erase').fill('do-not-mail@example.net');
  await page.getByRole('button', { name: 'Erase…' }).click();
  await page.getByRole('dialog').waitFor();
  await shoot('suppressions-erase');
  await page.getByRole('dialog').getByRole('button', { name: 'Erase', exact: true }).click();
  await page.getByText('Erased. The address is kept as').waitFor();
  await shoot('suppressions-erased');

  // The feed by who made each change: the keys' changes only.
  await page.goto(`${service.url}/dashboard/changes?actor=key`);
  await page.getByRole('table').waitFor();
  await shoot('changes-actor');

  // A read-only key: the same page without a control that changes anything, nor the check.
  const support = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  await support.goto(`${service.url}/dashboard/`);
  await support.getByLabel('Project').fill(DEMO_PROJECT);
  await support.getByLabel('API key').fill(supportKey);
  await support.getByRole('button', { name: 'Sign in' }).click();
  await support.getByRole('table').waitFor();
  await support.goto(`${service.url}/dashboard/suppressions`);
  await support.getByRole('table').waitFor();
  await shoot('suppressions-read-only', support);
  await support.close();

  // The same pages on a phone: listings as stacked rows, nothing wider than the screen.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await phone.goto(`${service.url}/dashboard/`);
  await phone.getByLabel('Project').fill(DEMO_PROJECT);
  await phone.getByLabel('API key').fill(apiKey);
  await phone.getByRole('button', { name: 'Sign in' }).click();
  await phone.getByRole('table').waitFor();
  await shoot('messages-phone', phone);
  // Scrolled to the list, which is what a phone shows below the counts.
  await phone
    .getByRole('table')
    .locator('tbody tr')
    .first()
    .evaluate((row) => row.scrollIntoView({ block: 'start' }));
  await shoot('messages-list-phone', phone);

  await phone.goto(`${service.url}/dashboard/messages?trackingId=newsletter-2026-11-20`);
  await phone.getByRole('heading', { name: /Counts for/ }).waitFor();
  await phone.locator('.chart').waitFor();
  await shoot('messages-filtered-phone', phone);

  await phone.goto(`${service.url}/dashboard/suppressions`);
  await phone.getByRole('table').waitFor();
  await phone.getByLabel('Email to check').fill('bounced@example.com');
  await phone.getByRole('button', { name: 'Check' }).click();
  await phone.getByText('is suppressed').waitFor();
  await phone.getByRole('link', { name: 'Open the message to bounced@example.com' }).first().click();
  await phone.getByRole('region', { name: 'Suppression' }).getByText('is suppressed').waitFor();
  await shoot('message-phone', phone);

  await phone.goBack();
  await phone.getByRole('table').waitFor();
  await phone.getByRole('table').evaluate((table) => table.scrollIntoView({ block: 'start' }));
  await shoot('suppressions-phone', phone);
  await phone.getByRole('button', { name: 'Remove opted-out@example.com' }).click();
  await phone.getByRole('dialog').waitFor();
  await shoot('suppressions-remove-phone', phone);
  await phone.keyboard.press('Escape');

  await phone.goto(`${service.url}/dashboard/suppressions?stream=newsletter`);
  await phone.getByRole('table').waitFor();
  await phone.getByRole('table').evaluate((table) => table.scrollIntoView({ block: 'start' }));
  await shoot('suppressions-stream-phone', phone);

  await phone.goto(`${service.url}/dashboard/suppressions?expiring=true`);
  await phone.getByRole('table').waitFor();
  await phone.getByRole('row', { name: /^full-mailbox@example\.com/ }).evaluate((row) => row.scrollIntoView({ block: 'start' }));
  await shoot('suppressions-rule-phone', phone);

  await phone.goto(`${service.url}/dashboard/allowlist`);
  await phone.getByRole('table').waitFor();
  await shoot('allowlist-phone', phone);

  await phone.goto(`${service.url}/dashboard/deliverability`);
  await phone.locator('.rate-card').first().waitFor();
  await phone.getByRole('table', { name: /^Streams whose mail/ }).waitFor();
  await shoot('deliverability-phone', phone);

  await phone.goto(`${service.url}/dashboard/changes`);
  await phone.getByRole('table').waitFor();
  await shoot('changes-phone', phone);

  // Last, as it changes bounced@example.com, which the pages above show as the bounce suppressed it: a
  // history where the provider's bounce added it, then the ops key removed it and added it back by hand.
  await page.goto(`${service.url}/dashboard/suppressions?email=bounced%40`);
  await page.getByRole('button', { name: 'Remove bounced@example.com' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Removed bounced@example.com').waitFor();
  await page.getByLabel('Email to suppress').fill('bounced@example.com');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByText('Added bounced@example.com').waitFor();
  await page.getByRole('button', { name: 'History of bounced@example.com' }).click();
  await page.getByRole('dialog').locator('.history-entries').waitFor();
  await shoot('suppressions-history');
  await page.keyboard.press('Escape');

  await phone.goto(`${service.url}/dashboard/suppressions?email=bounced%40`);
  await phone.getByRole('button', { name: 'History of bounced@example.com' }).click();
  await phone.getByRole('dialog').locator('.history-entries').waitFor();
  await shoot('suppressions-history-phone', phone);
} finally {
  await browser.close();
  await service.close();
}
