import type { DeliveryEvent, Mailwarden } from '@mailwarden/core';
import { bindings, startTestApp, type StartServer, type TestApp, type TestAppOptions } from '@mailwarden/http-test-suite';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { createDashboard } from '../src/index.js';

export type BindingName = keyof typeof bindings;

/** The dashboard's files, read once for every test app of a file. */
const dashboard = createDashboard();

/** Starts a binding with the dashboard on, as `createMailwardenRouter` / `mailwardenPlugin` do with `dashboard: true`. */
export function withDashboard(binding: BindingName): StartServer {
  return (options) => bindings[binding]({ ...options, dashboard });
}

/** A test app (see http-test-suite) serving the dashboard, by default on Fastify and the memory store. */
export function startDashboardApp(options: Partial<TestAppOptions> & { binding?: BindingName } = {}): Promise<TestApp> {
  const { binding = 'fastify', ...rest } = options;
  return startTestApp({ ...rest, start: withDashboard(binding) });
}

/** The dashboard's URL in a test app: `{origin}/mw/dashboard/`. */
export function dashboardUrl(app: TestApp, page = ''): string {
  return `${app.server.baseUrl}/dashboard/${page}`;
}

export function connectBrowser(): Promise<Browser> {
  return chromium.connect(inject('browserWsEndpoint'));
}

/** A page in a fresh browser context, watched for what must never happen (see `assertClean`). */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Every URL the page requested. */
  requests: string[];
  /** Uncaught errors, console errors (a CSP violation is one) and failed requests. */
  problems: string[];
  /** Asserts no request left the app's origin and nothing broke; then closes the context. */
  close(): Promise<void>;
}

/** The screens every page is tested at: a laptop, and a phone (an iPhone 12–15's CSS pixels). */
export const viewports = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof viewports;

export async function openPage(
  browser: Browser,
  app: TestApp,
  {
    expectedProblems = [] as RegExp[],
    timezoneId,
    viewport = 'desktop',
  }: { expectedProblems?: RegExp[]; timezoneId?: string; viewport?: ViewportName } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: viewports[viewport],
    ...(viewport === 'phone' ? { isMobile: true, hasTouch: true } : {}),
    ...(timezoneId === undefined ? {} : { timezoneId }),
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  return {
    page,
    context,
    requests,
    problems,
    async close() {
      await context.close();
      const origin = new URL(app.server.origin).origin;
      expect(requests.filter((url) => new URL(url).origin !== origin && !url.startsWith('data:'))).toStrictEqual([]);
      // Failed API calls (401, 503…) are logged by Chromium as console errors; tests that provoke them say so.
      expect(problems.filter((problem) => !expectedProblems.some((expected) => expected.test(problem)))).toStrictEqual([]);
    },
  };
}

/** Signs in through the form and waits for the Messages page. */
export async function signIn(page: Page, app: TestApp, { project = app.projects.acme, key = 'key-acme' } = {}): Promise<void> {
  await page.goto(dashboardUrl(app));
  await page.getByLabel('Project').fill(project);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
}

/** A delivery event of the test apps' projects, with defaults for what a test does not care about. */
export function event(fields: Partial<DeliveryEvent> & Pick<DeliveryEvent, 'recipient'>): DeliveryEvent {
  const type = fields.type ?? 'delivered';
  const occurredAt = fields.occurredAt ?? new Date('2026-11-20T10:00:00.000Z');
  return {
    provider: 'sendgrid',
    type,
    messageId: `m-${fields.recipient}`,
    trackingId: null,
    occurredAt,
    eventKey: `${type}-${fields.messageId ?? fields.recipient}-${occurredAt.getTime()}`,
    ...(type === 'bounced' ? { bounceClass: 'hard' as const } : {}),
    ...fields,
  };
}

/** `count` delivered messages of one tracking ID, a second apart, newest last. */
export async function seedMessages(
  mailwarden: Mailwarden,
  projectId: string,
  trackingId: string | null,
  count: number,
  start = Date.parse('2026-11-20T10:00:00.000Z'),
): Promise<void> {
  const events = Array.from({ length: count }, (_, i) =>
    event({
      recipient: `r${i}.${trackingId ?? 'none'}@example.com`.replace(/[^a-z0-9.@]/gi, 'x'),
      messageId: `m-${trackingId}-${i}`,
      trackingId,
      occurredAt: new Date(start + i * 1000),
    }),
  );
  for (let at = 0; at < events.length; at += 500) await mailwarden.applyEvents(projectId, events.slice(at, at + 500));
}

/** The page's listing: its table of messages, tracking IDs or suppressions (not the numbers per day). */
export const listingTable = (page: Page): Locator => page.locator('table:not(.per-day-table)');

/** The text of every cell of a column of a table (the listing by default), by its header; `[]` while no table is shown. */
export async function columnTexts(page: Page, header: string, table: Locator = listingTable(page)): Promise<string[]> {
  const headers = await table.locator('thead th').allTextContents();
  if (headers.length === 0) return [];
  const column = headers.indexOf(header);
  if (column === -1) throw new Error(`No column "${header}" in ${JSON.stringify(headers)}`);
  return table.locator(`tbody tr > :nth-child(${column + 1})`).allTextContents();
}

/**
 * What keeps a control out of reach in the page's current state: the viewport wider than the screen
 * (a phone zoomed out), the page wider than the viewport (`scrollWidth > innerWidth`), a visible
 * control not wholly inside the viewport's width (one below the fold is reached by scrolling; one
 * beside it is not), an open dialog not wholly inside the viewport. `[]` when all is well; each
 * problem names the element.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  const screen = page.viewportSize()?.width ?? Infinity;
  return page.evaluate((screen) => {
    const problems: string[] = [];
    // A phone zooms out to fit a page wider than its screen, so its viewport grows with the page.
    if (innerWidth > screen) problems.push(`the viewport is ${innerWidth} px wide on a ${screen} px screen`);
    const { scrollWidth } = document.documentElement;
    if (scrollWidth > innerWidth) problems.push(`the page is ${scrollWidth} px wide in a ${innerWidth} px viewport`);
    const name = (element: Element) =>
      `${element.tagName.toLowerCase()} “${(element.textContent ?? '').trim().slice(0, 40) || element.getAttribute('aria-label') || element.id}”`;
    for (const control of Array.from(document.querySelectorAll('button, input, select, a[href], summary'))) {
      const box = control.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || control.closest('.visually-hidden, .skip-link') !== null) continue;
      if (box.left < 0 || box.right > innerWidth + 0.5)
        problems.push(`${name(control)} spans x ${Math.round(box.left)}–${Math.round(box.right)}`);
    }
    for (const dialog of Array.from(document.querySelectorAll('dialog[open]'))) {
      const box = dialog.getBoundingClientRect();
      if (box.left < 0 || box.top < 0 || box.right > innerWidth + 0.5 || box.bottom > innerHeight + 0.5) {
        problems.push(
          `dialog “${dialog.querySelector('h2')?.textContent}” spans ${Math.round(box.left)},${Math.round(box.top)}–${Math.round(box.right)},${Math.round(box.bottom)}`,
        );
      }
    }
    return problems;
  }, screen);
}
