// `mailwarden webhooks send <provider>` as a user runs it: against `serve --demo` started as a process,
// with no secrets on the command line, for all six providers, the events then read back through the
// API; against a service configured with secrets of its own, with the same configuration file; and
// against an app that mounts mailwarden with no service configuration, the secrets on the command line.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createMailwarden, createMemoryStore, providers, type Provider, type ProviderAuth } from '@mailwarden/core';
import { createPostalKeyPair, createSendGridKeyPair, fetchSnsCertificateTrustingTestSigner } from '@mailwarden/core/testing';
import { mailwardenPlugin } from '@mailwarden/fastify';
import Fastify from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startService, type Service } from '../src/service.js';
import { cleanEnv, cliCommand, startDemoProcess } from './demo-process.js';

const run = promisify(execFile);

/** Runs the CLI; resolves with its exit code and output, whatever the code. */
async function mailwarden(args: string[], env: NodeJS.ProcessEnv = cleanEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(cliCommand[0], [...cliCommand.slice(1), ...args], { env });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

describe('mailwarden webhooks send, against serve --demo as a process', () => {
  test('posts each of the six providers’ signed webhooks with no secrets given; the service records them, as the API shows', async () => {
    const demo = await startDemoProcess();
    const { output, url, key } = demo;
    try {
      expect(output).toContain(`webhooks send sendgrid --url '${url}' --type bounced --to test@example.com`);
      // The demo trusts the testing kit's SNS certificate, and says so.
      expect(output).toMatch(/unsafeTrustTestSnsCertificate is on/);

      const sent = await Promise.all(
        providers.map((provider) =>
          mailwarden([
            'webhooks',
            'send',
            provider,
            '--url',
            url,
            '--type',
            'bounced',
            '--to',
            `${provider}@example.com`,
            '--tracking-id',
            `cli-${provider}`,
          ]),
        ),
      );
      sent.forEach(({ code, output }, index) => {
        expect(output, providers[index]).toMatch(
          new RegExp(`POST ${url}/projects/demo/webhooks/${providers[index]}\\n  bounced \\(hard\\) ${providers[index]}@example.com`),
        );
        expect(output, providers[index]).toContain('→ 200 {"accepted":1,"duplicates":0,"skipped":0,"warnings":[]}');
        expect(code, output).toBe(0);
      });

      const api = async (path: string) => (await fetch(`${url}/projects/demo${path}`, { headers: { 'x-api-key': key } })).json();
      for (const provider of providers) {
        const messages = (await api(`/messages?trackingId=cli-${provider}`)) as {
          items: { recipient: string; status: string; provider: string }[];
        };
        expect(messages.items, provider).toMatchObject([{ recipient: `${provider}@example.com`, status: 'bounced', provider }]);
        expect(await api(`/suppressions/check?email=${provider}%40example.com`), provider).toMatchObject({
          suppressed: true,
          reason: 'hard_bounce',
        });
      }
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});

describe('mailwarden webhooks send, with the service’s own configuration', () => {
  test('signs with the configured secrets; SendGrid’s private key comes from a file; a wrong secret exits 1 with the service’s answer', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-send-'));
    const sendgrid = createSendGridKeyPair();
    writeFileSync(join(directory, 'sendgrid.pem'), sendgrid.privateKey);
    const project = {
      apiKeys: ['acme-key'],
      webhooks: {
        sendgrid: { publicKey: sendgrid.publicKey },
        mailgun: { signingKey: 'acme-mailgun-key' },
        postmark: { headers: [{ name: 'X-Webhook-Secret', value: 'acme-postmark-secret' }] },
      },
    };
    const file = join(directory, 'mailwarden.json');
    writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', basePath: '/mailwarden', projects: { acme: project } }));
    const service = await startService(loadConfig({ file, env: {} }), {
      kind: 'memory',
      store: createMemoryStore(),
      close: async () => {},
    });
    services.push(service);
    const send = (...args: string[]) =>
      mailwarden(['webhooks', 'send', ...args, '--config', file, '--project', 'acme', '--url', service.url, '--tracking-id', 'acme-test']);

    const mailgun = await send('mailgun', '--type', 'delivered', '--to', 'a@example.com', '--to', 'b@example.com', '--count', '2');
    expect(mailgun.code, mailgun.output).toBe(0);
    // Mailgun posts each event alone: two recipients, two messages each.
    expect(mailgun.output.match(/→ 200/g)).toHaveLength(4);

    // --stream: the message carried a stream (service_stream), which the receiver reads back without a warning.
    const postmark = await send('postmark', '--type', 'complaint', '--to', 'c@example.com', '--stream', 'weekly-digest');
    expect(postmark.code, postmark.output).toBe(0);
    expect(postmark.output).toContain('complained c@example.com');
    expect(postmark.output).toContain('tracking ID "acme-test"  stream weekly-digest');
    expect(postmark.output).toContain('"warnings":[]');

    const unsigned = await send('sendgrid');
    expect(unsigned.code).toBe(1);
    expect(unsigned.output).toMatch(/pass it with --private-key/);
    const signed = await send('sendgrid', '--private-key', join(directory, 'sendgrid.pem'), '--type', 'opened', '--to', 'd@example.com');
    expect(signed.code, signed.output).toBe(0);

    const messages = await service.mailwarden.messages.list('acme', { trackingId: 'acme-test' });
    expect(messages.items.map((message) => `${message.recipient} ${message.status}`).sort()).toEqual([
      'a@example.com delivered',
      'a@example.com delivered',
      'b@example.com delivered',
      'b@example.com delivered',
      'c@example.com complained',
      // An opened message was delivered: that is its status.
      'd@example.com delivered',
    ]);

    // Another project's secret: the service refuses, and the command says what it answered.
    writeFileSync(file, JSON.stringify({ projects: { acme: { webhooks: { mailgun: { signingKey: 'not-acme-s-key' } } } } }));
    const refused = await send('mailgun');
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/→ 401 \{"error":\{"code":"webhook_unauthorized"/);

    const missing = await send('mandrill');
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/Project "acme" has no mandrill webhook settings/);
  });

  test('--type unsubscribe --stream marketing suppresses for marketing; without a stream, in the project’s defaultStream', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-send-'));
    const project = { defaultStream: 'newsletter', webhooks: { mailgun: { signingKey: 'acme-mailgun-key' } } };
    const file = join(directory, 'mailwarden.json');
    writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', projects: { acme: project } }));
    const service = await startService(loadConfig({ file, env: {} }), {
      kind: 'memory',
      store: createMemoryStore(),
      close: async () => {},
    });
    services.push(service);
    const send = (...args: string[]) =>
      mailwarden(['webhooks', 'send', 'mailgun', '--config', file, '--project', 'acme', '--url', service.url, ...args]);

    const marketing = await send('--type', 'unsubscribe', '--to', 'e@example.com', '--stream', 'marketing');
    expect(marketing.code, marketing.output).toBe(0);
    const unsubscribed = { suppressed: true, reason: 'manual', source: 'unsubscribe' };
    const { suppressions } = service.mailwarden;
    expect(await suppressions.check('acme', 'e@example.com', { stream: 'marketing' })).toMatchObject({
      ...unsubscribed,
      stream: 'marketing',
    });
    expect(await suppressions.check('acme', 'e@example.com')).toEqual({ email: 'e@example.com', suppressed: false });

    const unstreamed = await send('--type', 'unsubscribe', '--to', 'f@example.com');
    expect(unstreamed.code, unstreamed.output).toBe(0);
    expect(await suppressions.check('acme', 'f@example.com', { stream: 'newsletter' })).toMatchObject({
      ...unsubscribed,
      stream: 'newsletter',
    });
    expect(await suppressions.check('acme', 'f@example.com')).toEqual({ email: 'f@example.com', suppressed: false });
  });

  test('--unsubscribe-group (SendGrid) and --topic (SES) name the stream of an unsubscribe', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-send-'));
    const sendgrid = createSendGridKeyPair();
    writeFileSync(join(directory, 'sendgrid.pem'), sendgrid.privateKey);
    const topicArn = 'arn:aws:sns:us-east-1:123456789012:acme-ses';
    const project = {
      webhooks: {
        sendgrid: { publicKey: sendgrid.publicKey, unsubscribeGroups: { '4521': 'product-updates' } },
        ses: { topicArns: [topicArn] },
      },
    };
    const file = join(directory, 'mailwarden.json');
    writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', unsafeTrustTestSnsCertificate: true, projects: { acme: project } }));
    const service = await startService(loadConfig({ file, env: {} }), {
      kind: 'memory',
      store: createMemoryStore(),
      close: async () => {},
    });
    services.push(service);
    const send = (...args: string[]) =>
      mailwarden(['webhooks', 'send', ...args, '--config', file, '--project', 'acme', '--url', service.url, '--type', 'unsubscribe']);

    const group = await send(
      'sendgrid',
      '--private-key',
      join(directory, 'sendgrid.pem'),
      '--to',
      'g@example.com',
      '--unsubscribe-group',
      '4521',
    );
    expect(group.code, group.output).toBe(0);
    // The command shows where the service records it: the group's stream.
    expect(group.output).toContain('stream product-updates');
    const topic = await send('ses', '--to', 'h@example.com', '--stream', 'marketing', '--topic', 'weekly-digest');
    expect(topic.code, topic.output).toBe(0);
    expect(topic.output).toContain('stream weekly-digest');

    const { suppressions } = service.mailwarden;
    expect(await suppressions.check('acme', 'g@example.com', { stream: 'product-updates' })).toMatchObject({
      suppressed: true,
      source: 'unsubscribe',
    });
    expect(await suppressions.check('acme', 'h@example.com', { stream: 'weekly-digest' })).toMatchObject({
      suppressed: true,
      source: 'unsubscribe',
    });
    expect(await suppressions.check('acme', 'h@example.com', { stream: 'marketing' })).toEqual({
      email: 'h@example.com',
      suppressed: false,
    });

    const misplaced = await send('mailgun', '--unsubscribe-group', '4521');
    expect([misplaced.code, misplaced.output]).toEqual([1, expect.stringContaining('--unsubscribe-group goes with sendgrid')]);
  });

  test('defaultStream and unsubscribeGroups take stream names only', () => {
    const load = (project: object) => {
      const directory = mkdtempSync(join(tmpdir(), 'mailwarden-config-'));
      const file = join(directory, 'mailwarden.json');
      writeFileSync(file, JSON.stringify({ projects: { acme: project } }));
      return () => loadConfig({ file, env: {} });
    };
    const sendgrid = (unsubscribeGroups: object) => ({ webhooks: { sendgrid: { publicKey: 'key', unsubscribeGroups } } });
    expect(load({ defaultStream: 'newsletter', ...sendgrid({ '42': 'product-updates' }) })().projects['acme']).toMatchObject({
      defaultStream: 'newsletter',
    });
    expect(load({ defaultStream: 'Newsletter' })).toThrow(/defaultStream/);
    expect(load(sendgrid({ '42': 'Product Updates' }))).toThrow(/unsubscribeGroups/);
    expect(load(sendgrid({ marketing: 'product-updates' }))).toThrow(/unsubscribeGroups/);
  });

  test('unsafeTrustTestSnsCertificate is off unless set; the environment variable takes true or false only', () => {
    expect(loadConfig({ env: {} }).unsafeTrustTestSnsCertificate).toBe(false);
    expect(loadConfig({ env: { MAILWARDEN_UNSAFE_TRUST_TEST_SNS_CERTIFICATE: 'true' } }).unsafeTrustTestSnsCertificate).toBe(true);
    expect(() => loadConfig({ env: { MAILWARDEN_UNSAFE_TRUST_TEST_SNS_CERTIFICATE: 'yes' } })).toThrow(/unsafeTrustTestSnsCertificate/);
  });
});

describe('mailwarden webhooks send, against an app with no service configuration', () => {
  test('signs with the secrets on the command line for each provider; a wrong one exits 1 with the app’s 401', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'mailwarden-send-app-'));
    // The SendGrid pair made with the commands docs/server.md gives, so those commands are proven here.
    const pem = join(directory, 'sendgrid.pem');
    await run('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', pem]);
    const { stdout: publicKey } = await run('sh', [
      '-c',
      'openssl ec -in "$1" -pubout -outform DER 2>/dev/null | openssl base64 -A',
      'sh',
      pem,
    ]);
    const otherPem = join(directory, 'other.pem');
    writeFileSync(otherPem, createSendGridKeyPair().privateKey);
    // Postal's server key: the private half stays with Postal (here a file for the command), the public half is the app's.
    const postalKeys = createPostalKeyPair();
    const postalPem = join(directory, 'postal.pem');
    writeFileSync(postalPem, postalKeys.privateKey);
    const otherPostalPem = join(directory, 'other-postal.pem');
    writeFileSync(otherPostalPem, createPostalKeyPair().privateKey);
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:shop-ses-events';

    const app = Fastify();
    let baseUrl = '';
    const auth = (): ProviderAuth => ({
      ses: { topicArns: [topicArn] },
      sendgrid: { publicKey },
      mailgun: { signingKey: 'shop-mailgun-key' },
      sparkpost: { basic: [{ username: 'sparkpost', password: 'shop-sparkpost-password' }] },
      postmark: { basic: [{ username: 'postmark', password: 'shop-postmark-password' }] },
      brevo: { basic: [{ username: 'brevo', password: 'shop-brevo-password' }] },
      mailjet: { basic: [{ username: 'mailjet', password: 'shop-mailjet-password' }] },
      // Mandrill signs the URL as entered at Mandrill: here, the one the command posts to.
      mandrill: { webhookKey: 'shop-mandrill-key', url: `${baseUrl}/projects/shop/webhooks/mandrill` },
      resend: { signingSecret: 'whsec_c2hvcC1yZXNlbmQtc2VjcmV0' },
      mailersend: { signingSecret: 'shop-mailersend-secret' },
      postal: { publicKey: postalKeys.publicKey },
    });
    const embedded = createMailwarden({
      webhooks: {
        auth: (projectId) => (projectId === 'shop' ? auth() : undefined),
        environment: { fetchCertificate: fetchSnsCertificateTrustingTestSigner },
      },
    });
    await app.register(mailwardenPlugin, { prefix: '/mailwarden', mailwarden: embedded, apiKeys: {} });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `${address}/mailwarden`;
    try {
      const right: Record<Provider, string[]> = {
        ses: ['--topic-arn', topicArn],
        sendgrid: ['--private-key', pem],
        mailgun: ['--secret', 'shop-mailgun-key'],
        sparkpost: ['--secret', 'sparkpost:shop-sparkpost-password'],
        postmark: ['--secret', 'postmark:shop-postmark-password'],
        brevo: ['--secret', 'brevo:shop-brevo-password'],
        mailjet: ['--secret', 'mailjet:shop-mailjet-password'],
        mandrill: ['--secret', 'shop-mandrill-key'],
        resend: ['--secret', 'whsec_c2hvcC1yZXNlbmQtc2VjcmV0'],
        mailersend: ['--secret', 'shop-mailersend-secret'],
        postal: ['--private-key', postalPem],
      };
      const wrong: Record<Provider, string[]> = {
        ses: ['--topic-arn', 'arn:aws:sns:eu-west-1:123456789012:someone-else'],
        sendgrid: ['--private-key', otherPem],
        mailgun: ['--secret', 'not-the-key'],
        sparkpost: ['--secret', 'sparkpost:not-the-password'],
        postmark: ['--secret', 'postmark:not-the-password'],
        brevo: ['--secret', 'brevo:not-the-password'],
        mailjet: ['--secret', 'mailjet:not-the-password'],
        mandrill: ['--secret', 'not-the-key'],
        resend: ['--secret', 'whsec_bm90LXRoZS1zZWNyZXQ='],
        mailersend: ['--secret', 'not-the-secret'],
        postal: ['--private-key', otherPostalPem],
      };
      const send = (provider: Provider, secrets: string[]) =>
        mailwarden([
          'webhooks',
          'send',
          provider,
          ...secrets,
          '--url',
          baseUrl,
          '--project',
          'shop',
          '--type',
          'bounced',
          '--to',
          `${provider}@example.com`,
          '--tracking-id',
          'from-cli',
        ]);

      const sent = await Promise.all(providers.map((provider) => send(provider, right[provider])));
      sent.forEach(({ code, output }, index) => {
        expect(output, providers[index]).toContain(`POST ${baseUrl}/projects/shop/webhooks/${providers[index]}`);
        expect(output, providers[index]).toContain('→ 200 {"accepted":1,"duplicates":0,"skipped":0,"warnings":[]}');
        expect(code, output).toBe(0);
      });
      const { items } = await embedded.messages.list('shop', { trackingId: 'from-cli' });
      expect(items.map((message) => `${message.provider} ${message.status}`).sort()).toEqual(
        providers.map((provider) => `${provider} bounced`).sort(),
      );

      const refused = await Promise.all(providers.map((provider) => send(provider, wrong[provider])));
      refused.forEach(({ code, output }, index) => {
        expect(output, providers[index]).toMatch(/→ 401 \{"error":\{"code":"webhook_unauthorized"/);
        expect(code, output).toBe(1);
      });

      // Nothing to sign with: the command names the flag instead of posting.
      const unsigned = await mailwarden(['webhooks', 'send', 'mailgun', '--url', baseUrl, '--project', 'shop']);
      expect(unsigned.code).toBe(1);
      expect(unsigned.output).toMatch(/pass --secret <Mailgun's webhook signing key>/);
      const notBasic = await send('postmark', ['--secret', 'no-colon']);
      expect(notBasic.code).toBe(1);
      expect(notBasic.output).toMatch(/user:password/);
    } finally {
      await app.close();
    }
  });
});
