// One-click unsubscribe in the service (docs/unsubscribe.md): its configuration, and a link made with the
// API key then used without one, through `startService`, with a public URL and in the demo.
import { describe, expect, test } from 'vitest';
import { loadConfig, unsubscribeLinksOf, type ServerConfig } from '../src/config.js';
import { DEMO_PROJECT, withDemoProject } from '../src/demo.js';
import { startService, type Service } from '../src/service.js';
import { openStore } from '../src/store.js';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
const quiet = { PORT: '0', MAILWARDEN_LOG_LEVEL: 'silent' };

describe('configuration', () => {
  test('publicUrl and unsubscribeSecrets from the environment: links at publicUrl plus basePath', () => {
    const config = loadConfig({
      env: {
        MAILWARDEN_PUBLIC_URL: 'https://mail.example.com/',
        MAILWARDEN_UNSUBSCRIBE_SECRETS: `${SECRET}, ${SECRET}-old`,
        MAILWARDEN_BASE_PATH: '/mailwarden',
      },
    });
    expect(config.unsubscribeSecrets).toStrictEqual([SECRET, `${SECRET}-old`]);
    expect(unsubscribeLinksOf(config, () => 'http://unused')).toStrictEqual({
      baseUrl: 'https://mail.example.com/mailwarden',
      secrets: [SECRET, `${SECRET}-old`],
    });
    expect(unsubscribeLinksOf(loadConfig({ env: { MAILWARDEN_PUBLIC_URL: 'https://mail.example.com' } }), () => '')).toBeUndefined();
  });

  test.each([
    [{ MAILWARDEN_UNSUBSCRIBE_SECRETS: SECRET }, /publicUrl: unsubscribeSecrets needs publicUrl/],
    [{ MAILWARDEN_PUBLIC_URL: 'https://mail.example.com', MAILWARDEN_UNSUBSCRIBE_SECRETS: 'too-short' }, /unsubscribeSecrets\.0/],
    [{ MAILWARDEN_PUBLIC_URL: 'mail.example.com' }, /publicUrl/],
    [{ MAILWARDEN_PUBLIC_URL: 'ftp://mail.example.com' }, /publicUrl/],
  ])('refuses %o at start', (env, message) => {
    expect(() => loadConfig({ env })).toThrow(message);
  });
});

async function started(config: ServerConfig): Promise<Service> {
  return startService(config, await openStore({}));
}

async function makeLink(service: Service, projectId: string, key: string, body: unknown): Promise<{ url: string }> {
  const answer = await fetch(`${service.url}/projects/${projectId}/unsubscribe-links`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { url: string };
}

const oneClick = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });

describe('mailwarden serve', () => {
  test('a link made with the API key works without one: GET shows the page, POST unsubscribes', async () => {
    const config = loadConfig({
      env: {
        ...quiet,
        MAILWARDEN_API_KEYS: 'acme:key-acme',
        MAILWARDEN_PUBLIC_URL: 'https://mail.example.com',
        MAILWARDEN_UNSUBSCRIBE_SECRETS: SECRET,
      },
    });
    const service = await started(config);
    try {
      const { url } = await makeLink(service, 'acme', 'key-acme', { email: 'ana@example.com', stream: 'marketing' });
      expect(url.startsWith('https://mail.example.com/projects/acme/unsubscribe/')).toBe(true);
      // The public URL is a proxy's: the test reaches the same path on the service itself.
      const local = `${service.url}${new URL(url).pathname}`;
      const page = await fetch(local);
      expect(page.status).toBe(200);
      expect(await service.mailwarden.suppressions.check('acme', 'ana@example.com', { stream: 'marketing' })).toMatchObject({
        suppressed: false,
      });
      for (let i = 0; i < 2; i++) expect((await oneClick(local)).status).toBe(200);
      expect(await service.mailwarden.suppressions.check('acme', 'ana@example.com', { stream: 'marketing' })).toMatchObject({
        suppressed: true,
        source: 'unsubscribe',
        stream: 'marketing',
      });
    } finally {
      await service.close();
    }
  });

  test('without publicUrl and secrets, making a link answers 404 unsubscribe_links_not_configured', async () => {
    const service = await started(loadConfig({ env: { ...quiet, MAILWARDEN_API_KEYS: 'acme:key-acme' } }));
    try {
      const answer = await fetch(`${service.url}/projects/acme/unsubscribe-links`, {
        method: 'POST',
        headers: { 'x-api-key': 'key-acme', 'content-type': 'application/json' },
        body: '{"email":"ana@example.com"}',
      });
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('unsubscribe_links_not_configured');
    } finally {
      await service.close();
    }
  });

  test('the demo: the printed key makes a link at the printed URL, on any port, and it works at once', async () => {
    const { config, apiKey } = withDemoProject(loadConfig({ env: { ...quiet, MAILWARDEN_BASE_PATH: '/mailwarden' } }));
    const service = await started(config);
    try {
      const { url } = await makeLink(service, DEMO_PROJECT, apiKey, { email: 'someone@example.com' });
      expect(url.startsWith(`${service.url}/projects/${DEMO_PROJECT}/unsubscribe/`), url).toBe(true);
      expect((await fetch(url)).status).toBe(200);
      expect((await oneClick(url)).status).toBe(200);
      expect(await service.mailwarden.suppressions.check(DEMO_PROJECT, 'someone@example.com')).toMatchObject({
        suppressed: true,
        reason: 'manual',
        source: 'unsubscribe',
      });
    } finally {
      await service.close();
    }
  });
});
