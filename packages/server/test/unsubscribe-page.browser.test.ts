// The unsubscribe page in Chromium (docs/unsubscribe.md): it passes axe, its button works without
// JavaScript under its Content-Security-Policy, and that policy is the dashboard's but for its form.
import { AxeBuilder } from '@axe-core/playwright';
import { unsubscribePageContentSecurityPolicy } from '@mailwarden/core';
import { dashboardContentSecurityPolicy } from '@mailwarden/dashboard';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { withDemoProject } from '../src/demo.js';
import { startService, type Service } from '../src/service.js';
import { openStore } from '../src/store.js';

let browser: Browser;
let service: Service;
let apiKey: string;

beforeAll(async () => {
  browser = await chromium.connect(inject('browserWsEndpoint'));
  const demo = withDemoProject(loadConfig({ env: { PORT: '0', MAILWARDEN_LOG_LEVEL: 'silent' } }));
  apiKey = demo.apiKey;
  service = await startService(demo.config, await openStore({}));
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

async function linkFor(email: string, stream?: string): Promise<string> {
  const answer = await fetch(`${service.url}/projects/demo/unsubscribe-links`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(stream === undefined ? { email } : { email, stream }),
  });
  return ((await answer.json()) as { url: string }).url;
}

test("the page's policy is the dashboard's, except that its form may post to the page", () => {
  expect(unsubscribePageContentSecurityPolicy).toBe(dashboardContentSecurityPolicy.replace("form-action 'none'", "form-action 'self'"));
});

test('the page and the answer pass axe', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    for (const url of [await linkFor('axe@example.com', 'marketing'), await linkFor('axe@example.com')]) {
      await page.goto(url);
      await page.getByRole('heading', { name: 'Unsubscribe' }).waitFor();
      expect((await new AxeBuilder({ page }).analyze()).violations).toStrictEqual([]);
      await page.getByRole('button', { name: 'Unsubscribe' }).click();
      await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
      expect((await new AxeBuilder({ page }).analyze()).violations).toStrictEqual([]);
    }
  } finally {
    await context.close();
  }
});

test('without JavaScript, opening the link writes nothing and the button unsubscribes', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const violations: string[] = [];
  try {
    const page = await context.newPage();
    page.on('console', (message) => void (message.text().includes('Content Security Policy') && violations.push(message.text())));
    const url = await linkFor('nojs@example.com', 'weekly-digest');
    await page.goto(url);
    expect(await page.getByRole('main').textContent()).toContain('“weekly-digest” email');
    expect(await service.mailwarden.suppressions.check('demo', 'nojs@example.com', { stream: 'weekly-digest' })).toMatchObject({
      suppressed: false,
    });
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
    expect(page.url()).toBe(url);
    expect(await service.mailwarden.suppressions.check('demo', 'nojs@example.com', { stream: 'weekly-digest' })).toMatchObject({
      suppressed: true,
      source: 'unsubscribe',
      stream: 'weekly-digest',
    });
    expect(violations).toStrictEqual([]);
  } finally {
    await context.close();
  }
});
