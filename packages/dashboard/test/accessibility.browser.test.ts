import { AxeBuilder } from '@axe-core/playwright';
import { MailwardenError } from '@mailwarden/core';
import type { TestApp } from '@mailwarden/http-test-suite';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectBrowser, dashboardUrl, event, openPage, seedMessages, signIn, startDashboardApp } from './harness.js';

let browser: Browser;
let app: TestApp;

beforeAll(async () => {
  browser = await connectBrowser();
  app = await startDashboardApp();
  await seedMessages(app.mailwarden, app.projects.acme, 'newsletter-2026-11', 60);
  await app.mailwarden.suppressions.add(app.projects.acme, 'manual@example.com');
  await app.mailwarden.applyEvents(app.projects.acme, [
    event({
      recipient: 'bounced@example.com',
      type: 'sent',
      trackingId: 'welcome',
      stream: 'weekly-digest',
      occurredAt: new Date('2026-11-20T09:59:00.000Z'),
    }),
    event({
      recipient: 'bounced@example.com',
      type: 'bounced',
      trackingId: 'welcome',
      details: { smtpStatus: '5.1.1', diagnostic: '550 5.1.1 <user unknown>', bounceClassification: 'Permanent/General' },
    }),
    event({ recipient: 'quiet@example.com', type: 'sent', trackingId: 'quiet' }),
    event({ recipient: 'angry@example.com', type: 'complained', trackingId: 'welcome' }),
    event({ recipient: 'late@example.com', type: 'deferred', trackingId: '\u202Ertl-🎉' }),
  ]);
  await app.mailwarden.suppressions.add(app.projects.acme, 'unsubscribed@example.com', { stream: 'weekly-digest', source: 'unsubscribe' });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** Every axe rule (WCAG 2.x A and AA, and best practices) in the page's current state. */
async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  return results.violations.map(
    (violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join('; ')})`,
  );
}

// Each colour scheme once and each width once (a pairwise cover of the four): every page and state takes
// about 18 s here, and the pages' own browser tests run axe at both widths as well.
test.each([
  ['light', 'desktop'],
  ['dark', 'phone'],
] as const)('no axe violations on any page or state (%s colour scheme, %s)', async (colorScheme, viewport) => {
  const watched = await openPage(browser, app, { expectedProblems: [/400|401|404|503/], viewport });
  const { page } = watched;
  await page.emulateMedia({ colorScheme });
  // The checker finds what it should: a nameless button and grey-on-grey text.
  await page.setContent(
    '<html lang="en"><title>t</title><main><h1>t</h1><button></button><p style="color:#bbb;background:#ccc">faint</p></main></html>',
  );
  expect((await violations(page)).map((violation) => violation.split(':')[0])).toStrictEqual(['button-name', 'color-contrast']);
  const states: Record<string, string[]> = {};

  await page.goto(dashboardUrl(app));
  await page.getByLabel('Project').fill(app.projects.acme);
  await page.getByLabel('API key').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  states['sign-in with an error'] = await violations(page);

  await signIn(page, app);
  await page.getByRole('table').waitFor();
  states.messages = await violations(page);

  await page.getByRole('combobox', { name: 'Tracking ID' }).pressSequentially('e');
  await page.locator('[role="listbox"][data-search="e"]').waitFor();
  await page.keyboard.press('ArrowDown');
  states['messages, combobox open'] = await violations(page);
  await page.keyboard.press('Escape');

  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=newsletter-2026-11`);
  await page.getByRole('heading', { name: /Counts for/ }).waitFor();
  await page.getByRole('table').waitFor();
  states['messages of one tracking ID, paged'] = await violations(page);

  await page.locator('.chart').waitFor();
  await page.getByText('Numbers per day').click();
  await page.getByRole('table', { name: /^Messages per UTC day/ }).waitFor();
  states['counts per day, with the numbers shown'] = await violations(page);

  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=welcome`);
  await page.getByRole('link', { name: 'bounced@example.com' }).click();
  await page.locator('.timeline-entry').nth(1).waitFor();
  states['a message and its timeline'] = await violations(page);
  await page.getByRole('button', { name: 'Remove from the suppression list' }).click();
  await page.getByRole('dialog').waitFor();
  states['a message, remove dialog'] = await violations(page);
  await page.keyboard.press('Escape');
  await page.getByRole('link', { name: 'Back to the messages' }).click();

  await page.goto(`${dashboardUrl(app, 'messages')}?trackingId=quiet`);
  await page.getByText('Nothing was delivered').waitFor();
  states['counts per day, nothing counted'] = await violations(page);

  await page.goto(`${dashboardUrl(app, 'messages')}?id=${'0'.repeat(32)}`);
  await page.getByText('There is no such message in this project.').waitFor();
  states['a message not found'] = await violations(page);

  await page.getByRole('link', { name: 'Tracking IDs' }).click();
  await page.getByRole('table').waitFor();
  states['tracking IDs'] = await violations(page);
  await page.getByLabel('Search tracking IDs').fill('nothing like it');
  await page.getByText('No tracking ID contains').waitFor();
  states['tracking IDs, none found'] = await violations(page);

  await page.getByRole('link', { name: 'Suppressions' }).click();
  await page.getByRole('table').waitFor();
  await page.getByLabel('Email to check').fill('bounced@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('is suppressed').waitFor();
  states.suppressions = await violations(page);
  await page.getByRole('button', { name: 'Remove bounced@example.com' }).click();
  await page.getByRole('dialog').waitFor();
  states['suppressions, remove dialog'] = await violations(page);
  await page.keyboard.press('Escape');

  await page.getByLabel('Stream', { exact: true }).fill('weekly-digest');
  await page.getByLabel('Stream', { exact: true }).press('Enter');
  await page.getByRole('row', { name: /unsubscribed@example\.com/ }).waitFor();
  await page.getByLabel('Email to check').fill('bounced@example.com');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByText('is suppressed for stream').waitFor();
  states["a stream's suppressions, checked for the stream"] = await violations(page);
  await page.getByLabel('Stream', { exact: true }).fill('Not A Stream');
  await page.getByLabel('Stream', { exact: true }).press('Enter');
  await page.getByText('Could not load the suppressions.').waitFor();
  states['suppressions, an invalid stream name'] = await violations(page);

  app.store.failWith(() => new MailwardenError('store_unavailable', 'The store did not answer in time.'));
  try {
    await page.getByRole('link', { name: 'Messages', exact: true }).click();
    await page.getByRole('button', { name: 'Retry' }).first().waitFor();
    states['store down'] = await violations(page);
  } finally {
    app.store.failWith(undefined);
  }

  expect(states).toStrictEqual(Object.fromEntries(Object.keys(states).map((state) => [state, []])));
  await watched.close();
});
