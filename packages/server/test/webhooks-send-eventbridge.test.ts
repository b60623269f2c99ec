// `mailwarden webhooks send ses-eventbridge`: the second SES route, posted as an EventBridge API
// destination posts, with the demo's connection secret, a Basic connection's user:password, or the
// service configuration's; its events are SES's.
import { createMailwarden, type ProviderAuth } from '@mailwarden/core';
import { mailwardenPlugin } from '@mailwarden/fastify';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type ServerConfig } from '../src/config.js';
import { demoWebhookAuth } from '../src/demo.js';
import { sendTestWebhooks } from '../src/webhooks-send.js';

const shopAuth: ProviderAuth = { 'ses-eventbridge': { basic: [{ username: 'eventbridge', password: 'shop-connection-password' }] } };
const embedded = createMailwarden({
  webhooks: {
    auth: (projectId) =>
      projectId === 'shop' ? shopAuth : projectId === 'demo' ? { 'ses-eventbridge': demoWebhookAuth['ses-eventbridge'] } : undefined,
  },
});
const app = Fastify();
let baseUrl = '';

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
  const accepted = await sendTestWebhooks(withConfig, { provider: 'ses-eventbridge', url: baseUrl, ...options }, (line) =>
    lines.push(line),
  );
  return { accepted, output: lines.join('\n') };
}

describe('mailwarden webhooks send ses-eventbridge', () => {
  test("the demo project, no secret given: the demo's connection header; the events are SES's", async () => {
    const { accepted, output } = await send({ type: 'bounced', to: ['eb-demo@example.com'], trackingId: 'from-eventbridge' });
    expect(output).toContain(`POST ${baseUrl}/projects/demo/webhooks/ses-eventbridge`);
    expect(output).toContain('→ 200 {"accepted":1,"duplicates":0,"skipped":0,"warnings":[]}');
    expect(accepted).toBe(true);
    const { items } = await embedded.messages.list('demo', { trackingId: 'from-eventbridge' });
    expect(items.map((message) => `${message.provider} ${message.status} ${message.recipient}`)).toEqual([
      'ses bounced eb-demo@example.com',
    ]);
  });

  test("--secret user:password as a Basic connection's; a wrong one is 401", async () => {
    const right = await send({ projectId: 'shop', secret: 'eventbridge:shop-connection-password', to: ['eb-shop@example.com'] });
    expect(right.output).toContain('→ 200 {"accepted":1');
    expect(right.accepted).toBe(true);
    const wrong = await send({ projectId: 'shop', secret: 'eventbridge:not-the-password' });
    expect(wrong.output).toMatch(/→ 401 \{"error":\{"code":"webhook_unauthorized"/);
    expect(wrong.accepted).toBe(false);
  });

  test("the service configuration's connection secret, and --topic for an unsubscribe", async () => {
    const configured: ServerConfig = { ...config, projects: { shop: { webhooks: shopAuth } } } as ServerConfig;
    const { accepted, output } = await send(
      { projectId: 'shop', type: 'unsubscribe', topic: 'weekly-digest', to: ['eb-topic@example.com'] },
      configured,
    );
    expect(output).toContain('→ 200 {"accepted":1');
    expect(accepted).toBe(true);
    expect(await embedded.suppressions.check('shop', 'eb-topic@example.com', { stream: 'weekly-digest' })).toMatchObject({
      suppressed: true,
    });
  });

  test('a project with no ses-eventbridge settings and no secret: the command names --secret', async () => {
    await expect(send({ projectId: 'elsewhere' })).rejects.toThrow(/--secret <user:password>/);
  });
});
