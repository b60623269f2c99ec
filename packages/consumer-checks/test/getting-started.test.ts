import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Provider } from '@mailwarden/core';
import {
  mailgunWebhook,
  mailerSendWebhook,
  mailjetWebhook,
  brevoWebhook,
  mandrillWebhook,
  postalWebhook,
  postmarkWebhook,
  postWebhook,
  resendWebhook,
  sendGridWebhook,
  sesWebhook,
  sparkPostWebhook,
  webhookUrl,
  type TestEvent,
  type TestWebhook,
} from '@mailwarden/core/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { codeBlocks } from './markdown-blocks.js';

/**
 * docs/getting-started.md, run as a reader would, once per provider. The doc is the only source: the
 * provider's app file is its ```ts file=<provider>/app.ts block, written out and imported; its shell
 * blocks run in `sh` as written (the key pair, the exports, `mailwarden webhooks send`, both `curl`s),
 * with `localhost:3000` moved to a free port, `npx mailwarden` the CLI from source, and `npx tsx app.ts`
 * the import. The provider itself is played here: its send API answers from a stub of `fetch` (SES: a
 * local endpoint for the AWS SDK), which keeps each send request to check its recipients and tracking
 * ID; its delivery webhook comes from `@mailwarden/core/testing`, signed with the doc's local secrets
 * and posted over a socket. It needs `sh`, `curl` and `openssl` on the PATH, as the reader does.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const workDir = fileURLToPath(new URL('../.getting-started/', import.meta.url));
const doc = 'docs/getting-started.md';
const docText = readFileSync(join(root, doc), 'utf8');
const blocks = codeBlocks(root, doc);
const run = promisify(execFile);
const cli = `${process.execPath} --import tsx --conditions=@mailwarden/source ${join(root, 'packages/server/src/cli.ts')}`;

/** The headings of the provider sections. */
const sections: Record<Provider, string> = {
  ses: 'Amazon SES (through SNS)',
  sendgrid: 'SendGrid',
  mailgun: 'Mailgun',
  sparkpost: 'SparkPost',
  postmark: 'Postmark',
  mandrill: 'Mandrill',
  resend: 'Resend',
  brevo: 'Brevo',
  mailjet: 'Mailjet',
  mailersend: 'MailerSend',
  postal: 'Postal',
};

interface SendRequest {
  url: string;
  headers: Headers;
  body: string;
}

/** How a provider's send API answers, and what a test reads from the request it was sent. */
interface ProviderApi {
  /** The answer to a send, giving the message the id its webhooks will name (Mailgun's in angle brackets). */
  answer(messageId: string): { status: number; headers?: Record<string, string>; body: unknown };
  recipients(request: SendRequest): string[];
  /** Every place the tracking ID was attached in this request (one per message or personalization). */
  trackingIds(request: SendRequest): string[];
}

const json = (request: SendRequest) => JSON.parse(request.body) as Record<string, any>;

const providerApis: Record<Provider, ProviderApi> = {
  ses: {
    answer: (id) => ({ status: 200, body: { MessageId: id } }),
    recipients: (request) => json(request)['Destination'].ToAddresses,
    trackingIds: (request) =>
      json(request)
        ['Content'].Simple.Headers.filter((header: { Name: string }) => header.Name === 'X-Service-Id')
        .map((header: { Value: string }) => header.Value),
  },
  sendgrid: {
    answer: (id) => ({ status: 202, headers: { 'x-message-id': id }, body: '' }),
    recipients: (request) => json(request)['personalizations'].flatMap((p: { to: { email: string }[] }) => p.to.map((to) => to.email)),
    trackingIds: (request) => [
      json(request)['custom_args'].service_id,
      ...json(request)['personalizations'].map((p: { custom_args: { service_id: string } }) => p.custom_args.service_id),
    ],
  },
  mailgun: {
    answer: (id) => ({ status: 200, body: { id: `<${id}>`, message: 'Queued. Thank you.' } }),
    recipients: (request) => new URLSearchParams(request.body).getAll('to'),
    trackingIds: (request) => new URLSearchParams(request.body).getAll('v:service_id'),
  },
  sparkpost: {
    answer: (id) => ({ status: 200, body: { results: { total_rejected_recipients: 0, total_accepted_recipients: 1, id } } }),
    recipients: (request) => json(request)['recipients'].map((recipient: { address: { email: string } }) => recipient.address.email),
    trackingIds: (request) => [json(request)['metadata'].service_id],
  },
  postmark: {
    answer: (id) => ({
      status: 200,
      body: [{ ErrorCode: 0, Message: 'OK', MessageID: id, SubmittedAt: new Date().toISOString(), To: 'you@example.com' }],
    }),
    recipients: (request) => (JSON.parse(request.body) as { To: string }[]).map((message) => message.To),
    trackingIds: (request) =>
      (JSON.parse(request.body) as { Metadata: { service_id: string } }[]).map((message) => message.Metadata.service_id),
  },
  mandrill: {
    answer: (id) => ({ status: 200, body: [{ email: 'you@example.com', status: 'sent', _id: id, reject_reason: null }] }),
    recipients: (request) => json(request)['message'].to.map((to: { email: string }) => to.email),
    trackingIds: (request) => [json(request)['message'].metadata.service_id],
  },
  resend: {
    // batch.send: one email per recipient; Resend answers each one's id.
    answer: (id) => ({ status: 200, body: { data: [{ id }] } }),
    recipients: (request) => (JSON.parse(request.body) as { to: string }[]).map((email) => email.to),
    trackingIds: (request) =>
      (JSON.parse(request.body) as { tags: { name: string; value: string }[] }[]).flatMap((email) =>
        email.tags.filter((tag) => tag.name === 'service_id').map((tag) => tag.value),
      ),
  },
  brevo: {
    // Brevo answers the message id in angle brackets; its events carry it so too, and mailwarden keeps it without them.
    answer: (id) => ({ status: 201, body: { messageId: `<${id}>` } }),
    recipients: (request) => json(request)['to'].map((to: { email: string }) => to.email),
    trackingIds: (request) => [JSON.parse(json(request)['headers']['X-Mailin-custom']).service_id],
  },
  mailjet: {
    // Mailjet's MessageID is an integer past 2^53, written as such in its answer.
    answer: (id) => ({ status: 200, body: `{"Messages":[{"Status":"success","To":[{"Email":"you@example.com","MessageID":${id}}]}]}` }),
    recipients: (request) => json(request)['Messages'].flatMap((message: { To: { Email: string }[] }) => message.To.map((to) => to.Email)),
    trackingIds: (request) =>
      json(request)['Messages'].map((message: { EventPayload: string }) => JSON.parse(message.EventPayload).service_id),
  },
  mailersend: {
    // POST /v1/email: 202 with no body; the message id is the X-Message-Id header.
    answer: (id) => ({ status: 202, headers: { 'x-message-id': id }, body: '' }),
    recipients: (request) => json(request)['to'].map((to: { email: string }) => to.email),
    trackingIds: (request) =>
      json(request)
        ['tags'].filter((tag: string) => tag.startsWith('service_id:'))
        .map((tag: string) => tag.slice('service_id:'.length)),
  },
  postal: {
    // Postal answers 200 with a status; the send's Message-ID, and an id and token per recipient.
    answer: (id) => ({
      status: 200,
      body: {
        status: 'success',
        time: 0.05,
        flags: {},
        data: { message_id: id, messages: { 'you@example.com': { id: 1042, token: 'Ab3dE5' } } },
      },
    }),
    recipients: (request) => json(request)['to'],
    trackingIds: (request) => [json(request)['tag']],
  },
};

/** A message id in the form the provider's send API returns it. */
function newMessageId(provider: Provider): string {
  const hex = randomBytes(16).toString('hex');
  if (provider === 'ses') return `0100018c${hex}-000000`;
  if (provider === 'mailgun') return `20261126.${hex}@mg.example.com`;
  if (provider === 'sparkpost') return String(BigInt(`0x${hex.slice(0, 12)}`));
  if (provider === 'postmark' || provider === 'resend') return randomUUID();
  if (provider === 'postal') return `${randomUUID()}@rp.postal.example.com`;
  if (provider === 'brevo') return `${Date.now()}.${hex.slice(0, 11)}@smtp-relay.mailin.fr`;
  if (provider === 'mailjet') return String(10n ** 16n + BigInt(`0x${hex.slice(0, 12)}`));
  return hex;
}

/** The provider's delivery webhook from the testing kit, signed with the secrets the reader exported. */
function deliveryWebhook(provider: Provider, env: Record<string, string>, dir: string, event: TestEvent): TestWebhook {
  const events = [event];
  switch (provider) {
    case 'ses':
      return sesWebhook({ topicArn: env['SES_TOPIC_ARN']!, events });
    case 'sendgrid':
      return sendGridWebhook({ privateKey: readFileSync(join(dir, 'sendgrid.pem'), 'utf8'), events });
    case 'mailgun':
      return mailgunWebhook({ signingKey: env['MAILGUN_WEBHOOK_SIGNING_KEY']!, events });
    case 'sparkpost':
      return sparkPostWebhook({ auth: { basic: { username: 'sparkpost', password: env['SPARKPOST_WEBHOOK_PASSWORD']! } }, events });
    case 'postmark':
      return postmarkWebhook({ auth: { basic: { username: 'postmark', password: env['POSTMARK_WEBHOOK_PASSWORD']! } }, events });
    case 'mandrill':
      return mandrillWebhook({ webhookKey: env['MANDRILL_WEBHOOK_KEY']!, url: env['MANDRILL_WEBHOOK_URL']!, events });
    case 'resend':
      return resendWebhook({ signingSecret: env['RESEND_WEBHOOK_SECRET']!, events });
    case 'brevo':
      return brevoWebhook({ auth: { basic: { username: 'brevo', password: env['BREVO_WEBHOOK_PASSWORD']! } }, events });
    case 'mailjet':
      return mailjetWebhook({ auth: { basic: { username: 'mailjet', password: env['MAILJET_WEBHOOK_PASSWORD']! } }, events });
    case 'mailersend':
      return mailerSendWebhook({ signingSecret: env['MAILERSEND_WEBHOOK_SECRET']!, events });
    case 'postal':
      return postalWebhook({ privateKey: readFileSync(join(dir, 'postal-signing.key'), 'utf8'), events });
  }
}

function only<T>(items: T[], what: string): T {
  expect(items, what).toHaveLength(1);
  return items[0]!;
}

const shellBlocks = (heading: string) => blocks.filter((block) => block.heading === heading && block.info[0] === 'sh');
const commonBlock = (heading: string, starting: string) =>
  only(
    shellBlocks(heading).filter((block) => block.code.startsWith(starting)),
    `one sh block starting "${starting}" under "${heading}"`,
  );

/** The packages the reader installs: step 1 plus the provider section's own `npm install`. */
function installed(section: string): Set<string> {
  const words = [...shellBlocks('1. Create the project'), ...shellBlocks(section)]
    .flatMap((block) => block.code.split('\n'))
    .filter((line) => line.startsWith('npm install'))
    .flatMap((line) => line.split(/\s+/).slice(2))
    .filter((word) => !word.startsWith('-'));
  return new Set(words);
}

/** The names the lines `export NAME=value …` of a shell block assign. */
function exportedNames(code: string): string[] {
  return code
    .split('\n')
    .filter((line) => line.startsWith('export '))
    .flatMap((line) => [...line.matchAll(/(?:^export |\s)([A-Z][A-Z0-9_]*)=/g)].map((match) => match[1]!));
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs a shell snippet of the doc as the reader would, in the project folder, with `localhost:3000` moved to `port`. */
async function sh(code: string, dir: string, port: number, env: Record<string, string> = {}): Promise<string> {
  const script = code.replaceAll('localhost:3000', `localhost:${port}`).replaceAll('npx mailwarden ', `${cli} `);
  const { stdout } = await run('sh', ['-ec', script], { cwd: dir, env: { ...process.env, ...env }, timeout: 60_000 });
  return stdout;
}

// The provider's send API: requests to its host are kept and answered as the provider answers.
const providerHosts: Record<string, Provider> = {
  'api.sendgrid.com': 'sendgrid',
  'api.mailgun.net': 'mailgun',
  'api.sparkpost.com': 'sparkpost',
  'api.postmarkapp.com': 'postmark',
  'mandrillapp.com': 'mandrill',
  'api.resend.com': 'resend',
  'api.brevo.com': 'brevo',
  'api.mailjet.com': 'mailjet',
  'api.mailersend.com': 'mailersend',
  'postal.example.com': 'postal',
};
const sent: { provider: Provider; request: SendRequest; messageId: string }[] = [];
const realFetch = globalThis.fetch;
const providerFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const provider = providerHosts[new URL(request.url).host];
  if (provider === undefined) return realFetch(request);
  const messageId = newMessageId(provider);
  sent.push({ provider, request: { url: request.url, headers: request.headers, body: await request.text() }, messageId });
  const answer = providerApis[provider].answer(messageId);
  const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return new Response(body, { status: answer.status, headers: { 'content-type': 'application/json', ...answer.headers } });
};

// SES: the AWS SDK does not use fetch; AWS_ENDPOINT_URL_SESV2 points it here.
let sesEndpoint: Server;
async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  rmSync(workDir, { recursive: true, force: true });
  vi.stubGlobal('fetch', providerFetch);
  sesEndpoint = createServer((request, response) => {
    void readBody(request).then((body) => {
      const messageId = newMessageId('ses');
      sent.push({
        provider: 'ses',
        request: { url: request.url!, headers: new Headers(request.headers as Record<string, string>), body },
        messageId,
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(providerApis.ses.answer(messageId).body));
    });
  });
  await new Promise<void>((resolve) => sesEndpoint.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  vi.unstubAllGlobals();
  await new Promise<void>((resolve) => sesEndpoint.close(() => resolve()));
});

describe.each(Object.entries(sections) as [Provider, string][])('docs/getting-started.md with %s', (provider, section) => {
  const appBlock = only(
    blocks.filter((block) => block.heading === section && block.info.includes(`file=${provider}/app.ts`)),
    `the app file of ${section}`,
  );
  const runBlock = only(
    shellBlocks(section).filter((block) => block.code.includes('npx tsx app.ts')),
    `the block that runs the app in ${section}`,
  );
  const webhookCommand = only(
    shellBlocks(section).filter((block) => block.code.startsWith(`npx mailwarden webhooks send ${provider} `)),
    `the test webhook of ${section}`,
  ).code;
  const envRead = [...new Set([...appBlock.code.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]!))];

  it('installs every package its app file imports', () => {
    const imported = [...appBlock.code.matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]!);
    const packages = imported.map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    );
    const have = installed(section);
    expect(packages.filter((name) => !have.has(name))).toEqual([]);
    expect(have.has('@mailwarden/server'), 'the mailwarden command').toBe(true);
  });

  it('exports every variable its app file reads (PORT has a default)', () => {
    const exported = exportedNames(runBlock.code);
    expect(envRead.filter((name) => name !== 'PORT' && !exported.includes(name))).toEqual([]);
  });

  it('gates the send, attaches the tracking ID, takes the signed webhooks and shows the messages', async () => {
    const dir = join(workDir, provider);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'app.ts'), appBlock.code);
    const port = await freePort();

    // Step 2: the exports as the doc writes them (SendGrid's block also makes the key pair with openssl), then the app.
    const envJson = await sh(
      runBlock.code.replace('npx tsx app.ts', `node -e 'process.stdout.write(JSON.stringify(process.env))'`),
      dir,
      port,
    );
    const shellEnv = JSON.parse(envJson) as Record<string, string>;
    const env: Record<string, string> = Object.fromEntries(exportedNames(runBlock.code).map((name) => [name, shellEnv[name]!]));
    env['PORT'] = String(port);
    if (provider === 'ses') {
      Object.assign(env, {
        AWS_ENDPOINT_URL_SESV2: `http://127.0.0.1:${(sesEndpoint.address() as { port: number }).port}`,
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'test-secret',
      });
    }
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    Object.assign(process.env, env);
    const { server } = (await import(join(dir, 'app.ts'))) as { server: Server };
    try {
      if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));

      // Step 2: the test webhook, with the command and flags the doc gives: a hard bounce suppresses bounced@example.com.
      const posted = await sh(webhookCommand, dir, port, env);
      expect(posted).toMatch(/→ 200 \{"accepted":1,/);

      // Step 3: the send, through the gate; the answer is the one the doc shows.
      const before = sent.length;
      const answer = await sh(commonBlock('3. Send through the gate', 'curl ').code, dir, port, env);
      const shown = only(
        blocks.filter((block) => block.heading === '3. Send through the gate' && block.info[0] === 'json'),
        'the answer shown',
      ).code;
      expect(JSON.parse(answer)).toEqual(JSON.parse(shown));
      const requests = sent.slice(before).filter((entry) => entry.provider === provider);
      expect(requests.length).toBeGreaterThan(0);
      const api = providerApis[provider];
      expect(requests.flatMap((entry) => api.recipients(entry.request))).toEqual(['you@example.com']);
      for (const entry of requests) {
        const trackingIds = api.trackingIds(entry.request);
        expect(trackingIds.length).toBeGreaterThan(0);
        expect(new Set(trackingIds)).toEqual(new Set(['welcome']));
      }

      // Step 4: the doc's command with the flags it names, then the provider's delivery webhook for the
      // message just sent, from the testing kit, over a socket.
      expect(docText, 'step 4 names the flags it swaps in').toContain('`--type delivered --to you@example.com`');
      const reported = await sh(
        webhookCommand.replace('--type bounced --to bounced@example.com', '--type delivered --to you@example.com'),
        dir,
        port,
        env,
      );
      expect(reported).toMatch(/→ 200 \{"accepted":1,/);
      const messageId = requests[0]!.messageId;
      const webhook = deliveryWebhook(provider, env, dir, {
        type: 'delivered',
        recipient: 'you@example.com',
        trackingId: 'welcome',
        messageId,
      });
      const delivered = await postWebhook(webhookUrl(`http://localhost:${port}/mailwarden`, 'acme', provider), webhook);
      expect(delivered.status).toBe(200);
      expect(await delivered.json()).toMatchObject({ accepted: 1 });

      // Step 5: the API the dashboard reads shows both messages; the dashboard's pages are served.
      const listed = JSON.parse(await sh(commonBlock('5. Open the dashboard', 'curl ').code, dir, port, env)) as {
        items: Record<string, unknown>[];
      };
      expect(listed.items).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ recipient: 'you@example.com', status: 'delivered', trackingId: 'welcome', provider, messageId }),
          expect.objectContaining({ recipient: 'bounced@example.com', status: 'bounced', trackingId: 'welcome', provider }),
        ]),
      );
      // The message sent in step 3, and the one step 4's command made up.
      expect(listed.items.filter((item) => item.recipient === 'you@example.com' && item.status === 'delivered')).toHaveLength(2);
      const pages = [
        ...new Set([...docText.matchAll(/<(http:\/\/localhost:3000\/mailwarden\/dashboard\/[^>]*)>/g)].map((match) => match[1]!)),
      ];
      expect(pages.length).toBeGreaterThanOrEqual(3);
      for (const page of pages) {
        const response = await realFetch(page.replace('localhost:3000', `localhost:${port}`));
        expect(response.status, page).toBe(200);
        expect(response.headers.get('content-type'), page).toMatch(/^text\/html/);
        await response.arrayBuffer();
      }
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
