// `mailwarden webhooks send postal`: Postal signs with its server's private key, which the service never
// sees, so the command signs with the demo's key for the demo, else with the key file given by
// --private-key; a project whose key is not the demo's and no file is a usage error, not a forged post.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailwarden, isMailwardenError, type ProviderAuth } from '@mailwarden/core';
import { createPostalKeyPair } from '@mailwarden/core/testing';
import { mailwardenPlugin } from '@mailwarden/fastify';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/config.js';
import { demoWebhookAuth } from '../src/demo.js';
import { sendTestWebhooks } from '../src/webhooks-send.js';

const shopKeys = createPostalKeyPair();
const shopAuth: ProviderAuth = { postal: { publicKey: shopKeys.publicKey } };
const embedded = createMailwarden({
  webhooks: {
    auth: (projectId) => (projectId === 'shop' ? shopAuth : projectId === 'demo' ? { postal: demoWebhookAuth.postal } : undefined),
  },
});
const app = Fastify();
let baseUrl = '';
const directory = mkdtempSync(join(tmpdir(), 'mailwarden-send-postal-'));
const shopKeyFile = join(directory, 'signing.key');
writeFileSync(shopKeyFile, shopKeys.privateKey);

beforeAll(async () => {
  await app.register(mailwardenPlugin, { prefix: '/mailwarden', mailwarden: embedded, apiKeys: {} });
  baseUrl = `${await app.listen({ port: 0, host: '127.0.0.1' })}/mailwarden`;
});
afterAll(async () => {
  await app.close();
  await embedded.close();
});

const config: ServerConfig = loadConfig({ env: {} });

async function send(options: Partial<Parameters<typeof sendTestWebhooks>[1]>, withConfig = config) {
  const lines: string[] = [];
  const accepted = await sendTestWebhooks(withConfig, { provider: 'postal', url: baseUrl, ...options }, (line) => lines.push(line));
  return { accepted, output: lines.join('\n') };
}

async function usageError(options: Partial<Parameters<typeof sendTestWebhooks>[1]>, withConfig = config): Promise<string> {
  try {
    await send(options, withConfig);
  } catch (error) {
    if (isMailwardenError(error) && error.code === 'invalid_request') return error.message;
    throw error;
  }
  throw new Error('expected a usage error');
}

describe('mailwarden webhooks send postal', () => {
  test("the demo project, no key given: signed with the demo's key; a hard bounce suppresses", async () => {
    const { accepted, output } = await send({ type: 'bounced', to: ['postal-demo@example.com'], trackingId: 'from-postal' });
    expect(output).toContain(`POST ${baseUrl}/projects/demo/webhooks/postal`);
    expect(output).toContain('→ 200 {"accepted":1,"duplicates":0,"skipped":0,"warnings":[]}');
    expect(accepted).toBe(true);
    const { items } = await embedded.messages.list('demo', { trackingId: 'from-postal' });
    expect(items.map((message) => `${message.provider} ${message.status} ${message.recipient}`)).toEqual([
      'postal bounced postal-demo@example.com',
    ]);
    expect(await embedded.suppressions.check('demo', 'postal-demo@example.com')).toMatchObject({ suppressed: true, reason: 'hard_bounce' });
  });

  test('--private-key: the Postal server key signs; another key is the app’s 401', async () => {
    const right = await send({ projectId: 'shop', privateKeyFile: shopKeyFile, type: 'opened', to: ['postal-shop@example.com'] });
    expect(right.output).toContain('→ 200 {"accepted":1');
    const otherFile = join(directory, 'other.key');
    writeFileSync(otherFile, createPostalKeyPair().privateKey);
    const wrong = await send({ projectId: 'shop', privateKeyFile: otherFile });
    expect(wrong.output).toMatch(/→ 401 \{"error":\{"code":"webhook_unauthorized"/);
    expect(wrong.output).toContain('--private-key for SendGrid and Postal');
    expect(wrong.accepted).toBe(false);
  });

  test('a configured key that is not the demo’s, and no file: told to pass --private-key', async () => {
    const shopConfig = loadConfig({ env: {}, file: undefined });
    const withShop: ServerConfig = { ...shopConfig, projects: { shop: { webhooks: { postal: { publicKey: shopKeys.publicKey } } } } };
    expect(await usageError({ projectId: 'shop' }, withShop)).toMatch(/--private-key/);
    expect(await usageError({ projectId: 'shop', privateKeyFile: join(directory, 'missing.key') })).toMatch(
      /Cannot read the Postal private key/,
    );
  });

  test('Postal reports no complaint, no unsubscribe and no stream: the command says so', async () => {
    expect(await usageError({ type: 'complained' })).toMatch(/Postal has no complaint event/);
    expect(await usageError({ type: 'unsubscribed' })).toMatch(/Postal has no unsubscribe event/);
    expect(await usageError({ stream: 'marketing' })).toMatch(/cannot carry a stream/);
  });
});
