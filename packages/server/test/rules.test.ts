// The service's suppression rules and allowlist: `rules` in a project's configuration, checked at start
// with the field named; the demo's "3 soft bounces in 7 days" met by three signed webhooks; the hourly
// sweep of expired data; and the allowlist commands, on a store opened here and over HTTP.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailwarden, createMemoryStore } from '@mailwarden/core';
import { afterEach, describe, expect, test } from 'vitest';
import { remoteAllowlist, runAllowlistCommand, type AllowlistTarget } from '../src/allowlist.js';
import { loadConfig, suppressionRulesOf, type ServerConfig } from '../src/config.js';
import { DEMO_PROJECT, DEMO_RULES, withDemoProject } from '../src/demo.js';
import { startService, sweepExpired, type Service } from '../src/service.js';
import { sendTestWebhooks } from '../src/webhooks-send.js';

const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

function configWith(overrides: Record<string, unknown>): ServerConfig {
  const directory = mkdtempSync(join(tmpdir(), 'mailwarden-rules-'));
  const file = join(directory, 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, logLevel: 'silent', ...overrides }));
  return loadConfig({ file, env: {} });
}

async function start(config: ServerConfig): Promise<Service> {
  const store = createMemoryStore();
  const service = await startService(config, { kind: 'memory', store, close: () => store.close() });
  services.push(service);
  return service;
}

describe('rules in the configuration', () => {
  test('"suppress after 3 soft bounces in 7 days" is one line; each project gets its own rules, and none without', () => {
    const config = configWith({
      projects: {
        acme: { rules: { softBounces: { bounces: 3, days: 7 } } },
        beta: {
          rules: { softBounces: { bounces: 5, days: 2.5, resetOnDelivery: true }, expireAfterDays: { hardBounce: 365, softBounces: null } },
        },
        gamma: {},
      },
    });
    const rules = suppressionRulesOf(config)!;
    expect(rules('acme')).toStrictEqual({ softBounces: { bounces: 3, days: 7 } });
    expect(rules('beta')).toStrictEqual({
      softBounces: { bounces: 5, days: 2.5, resetOnDelivery: true },
      expireAfterDays: { hardBounce: 365, softBounces: null },
    });
    expect(rules('gamma')).toBeUndefined();
    expect(rules('unknown')).toBeUndefined();
    // No project with rules: the service is created without the option, exactly as before rules.
    expect(suppressionRulesOf(configWith({ projects: { gamma: {} } }))).toBeUndefined();
  });

  test.each([
    [{ softBounces: { bounces: 0, days: 7 } }, 'projects.acme.rules.softBounces.bounces: must be an integer from 1 to 100'],
    [{ softBounces: { bounces: 2.5, days: 7 } }, 'projects.acme.rules.softBounces.bounces: must be an integer from 1 to 100'],
    [{ softBounces: { bounces: 3, days: 0 } }, 'projects.acme.rules.softBounces.days: must be a number of days above 0, at most 365'],
    [{ softBounces: { bounces: 3, days: 400 } }, 'projects.acme.rules.softBounces.days'],
    [{ softBounces: { bounces: 3 } }, 'projects.acme.rules.softBounces.days'],
    [{ softBounces: { bounces: 3, days: 7, resetOnDelivery: 'yes' } }, 'projects.acme.rules.softBounces.resetOnDelivery'],
    [{ softBounces: { bounces: 3, days: 7, resetOnDeliveries: true } }, 'resetOnDeliveries'],
    [{ softBounce: { bounces: 3, days: 7 } }, 'softBounce'],
    [{ softBounces: null }, 'projects.acme.rules.softBounces'],
    [{ expireAfterDays: { hardBounces: 365 } }, 'hardBounces'],
    [{ expireAfterDays: { manual: -1 } }, 'projects.acme.rules.expireAfterDays.manual: must be a number of days above 0'],
    [{ expireAfterDays: { complaint: '30' } }, 'projects.acme.rules.expireAfterDays.complaint'],
    ['3 soft bounces in 7 days', 'projects.acme.rules'],
  ])('a wrong rule fails the start, naming the field: %j', (rules, named) => {
    expect(() => configWith({ projects: { acme: { rules } } })).toThrow(named);
  });
});

describe('the demo project', () => {
  test('has the rule, unless configured with its own', () => {
    expect(withDemoProject(configWith({})).config.projects[DEMO_PROJECT]?.rules).toStrictEqual(DEMO_RULES);
    const own = { softBounces: { bounces: 5, days: 3 } };
    expect(withDemoProject(configWith({ projects: { demo: { rules: own } } })).config.projects[DEMO_PROJECT]?.rules).toStrictEqual(own);
  });

  test('three signed soft-bounce webhooks of distinct messages suppress the address, with the rule and its bounces', async () => {
    const { config, apiKey } = withDemoProject(configWith({}));
    const service = await start(config);
    const lines: string[] = [];
    const send = (count: string) =>
      sendTestWebhooks(
        config,
        { provider: 'sendgrid', url: service.url, projectId: DEMO_PROJECT, type: 'soft-bounced', to: ['full@example.com'], count },
        (line) => lines.push(line),
      );
    const check = async () => {
      const response = await fetch(`${service.url}/projects/${DEMO_PROJECT}/suppressions/check?email=full@example.com`, {
        headers: { 'x-api-key': apiKey },
      });
      return (await response.json()) as Record<string, unknown>;
    };

    expect(await send('2')).toBe(true);
    expect(await check()).toStrictEqual({ email: 'full@example.com', suppressed: false });
    expect(await send('1')).toBe(true);
    const answer = await check();
    expect(answer).toMatchObject({ suppressed: true, reason: 'hard_bounce', source: 'webhook', cause: { provider: 'sendgrid' } });
    const rule = answer.rule as { bounces: number; days: number; reset_on_delivery: boolean; events: { message_id: string }[] };
    expect(rule).toMatchObject({ bounces: 3, days: 7, reset_on_delivery: false });
    expect(new Set(rule.events.map((event) => event.message_id)).size).toBe(3);
    // The rule's suppressions expire after 30 days by default, counted from the last bounce.
    const cause = answer.cause as { event_at: string };
    expect(Date.parse(answer.expires_at as string) - Date.parse(cause.event_at)).toBe(30 * 24 * 60 * 60 * 1000);
  });
});

describe('the sweep of expired data', () => {
  test('calls the bounded purge again while it deletes something, and reports what it deleted', async () => {
    const answers = [1000, 1000, 7, 0, 5];
    const calls: number[] = [];
    const purge = async (now: number) => {
      calls.push(now);
      return answers.shift()!;
    };
    expect(await sweepExpired(purge, 42)).toStrictEqual({ purged: 2007, calls: 4 });
    expect(calls).toStrictEqual([42, 42, 42, 42]);
  });

  test('stops after 100 calls, leaving the rest to the next sweep', async () => {
    expect(await sweepExpired(async () => 1000, 0)).toStrictEqual({ purged: 100_000, calls: 100 });
  });
});

describe('mailwarden allowlist', () => {
  async function run(target: AllowlistTarget, action: 'list' | 'add' | 'remove', entries: string[] = []) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAllowlistCommand(
      target,
      { action, projectId: 'acme', entries },
      { write: (line) => out.push(line), error: (line) => err.push(line) },
    );
    return { code, out, err };
  }

  async function commands(target: AllowlistTarget) {
    expect(await run(target, 'add', ['Seed@Example.com', '@Our-Company.example'])).toStrictEqual({
      code: 0,
      out: ['Added seed@example.com (address).', 'Added @our-company.example (domain).'],
      err: [],
    });
    expect(await run(target, 'add', ['seed@example.com', 'not an address'])).toMatchObject({
      code: 1,
      out: ['seed@example.com was already on the allowlist.'],
      err: [expect.stringMatching(/^not an address: /)],
    });
    const listed = await run(target, 'list');
    expect(listed.code).toBe(0);
    expect(listed.out.map((line) => line.split('\t').slice(0, 2))).toStrictEqual([
      ['@our-company.example', 'domain'],
      ['seed@example.com', 'address'],
    ]);
    expect(listed.out[0]).toMatch(/\t\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(listed.err).toStrictEqual(['2 entries on the allowlist of acme.']);
    expect(await run(target, 'remove', ['@our-company.example', '@elsewhere.example'])).toStrictEqual({
      code: 1,
      out: ['Removed @our-company.example.'],
      err: ['@elsewhere.example is not on the allowlist of acme.'],
    });
    expect((await run(target, 'list')).out.map((line) => line.split('\t')[0])).toStrictEqual(['seed@example.com']);
  }

  test('add, list and remove on a store opened here', async () => {
    await commands(createMailwarden().allowlist);
  });

  test('the same through a running service (--url)', async () => {
    const service = await start(configWith({ projects: { acme: { apiKeys: ['acme-key'] } } }));
    await commands(remoteAllowlist({ url: service.url, apiKey: 'acme-key' }).allowlist);
    // What the service holds is what the commands said.
    expect((await service.mailwarden.allowlist.list('acme')).items.map((item) => item.entry)).toStrictEqual(['seed@example.com']);
  });

  test('more than a page is listed whole', async () => {
    const mailwarden = createMailwarden();
    for (let i = 0; i < 101; i++) await mailwarden.allowlist.add('acme', `seed${String(i).padStart(3, '0')}@example.com`);
    const listed = await run(mailwarden.allowlist, 'list');
    expect(listed.out).toHaveLength(101);
    expect(listed.out.at(-1)).toMatch(/^seed100@example\.com\taddress\t/);
  });
});
