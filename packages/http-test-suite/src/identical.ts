import { createHash } from 'node:crypto';
import { MailwardenError, createMemoryStore, type WebhookRequest } from '@mailwarden/core';
import { expect } from 'vitest';
import { send, type Answer } from './http.js';
import { createProviderSecrets, headersOf, webhookCases, sesBounce, sendgridEvents, type ProviderSecrets } from './provider-requests.js';
import type { StartServer } from './servers.js';
import { API_KEYS, startTestApp, type Projects } from './test-app.js';

/** Headers whose values must be the same from every binding. */
export const COMPARED_HEADERS = [
  'content-type',
  'cache-control',
  'allow',
  'retry-after',
  'www-authenticate',
  'x-content-type-options',
] as const;

/** Headers that differ from one response to the next whatever serves them. */
const VOLATILE_HEADERS = new Set(['date']);

/** One request of the script, and what to do to the app just before it. */
export interface ScriptStep {
  method: string;
  /** Relative to the mount point; `''` is the mount point itself. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Milliseconds to move the app's clock first. */
  advanceClock?: number;
  /** The store's state from this step on. */
  store?: 'healthy' | 'unavailable' | 'broken';
}

/** Fixed projects and provider secrets, so the script's requests are the same bytes for every binding. */
export interface ScriptFixture {
  projects: Projects;
  secrets: Record<keyof Projects, ProviderSecrets>;
}

export function createScriptFixture(): ScriptFixture {
  return {
    projects: { acme: 'acme', globex: 'globex' },
    secrets: { acme: createProviderSecrets('acme'), globex: createProviderSecrets('globex') },
  };
}

const key = (name: keyof typeof API_KEYS) => ({ 'x-api-key': API_KEYS[name] });
const jsonHeaders = (name: keyof typeof API_KEYS = 'acme') => ({ ...key(name), 'content-type': 'application/json' });

function webhookStep(provider: string, projectId: string, request: WebhookRequest): ScriptStep {
  return { method: 'POST', path: `/projects/${projectId}/webhooks/${provider}`, headers: headersOf(request), body: request.rawBody };
}

/** About fifty requests covering every route and every error of docs/http.md, in an order that builds state. */
export function conformanceScript({ projects, secrets }: ScriptFixture): ScriptStep[] {
  const { acme, globex } = projects;
  const list = `/projects/${acme}/suppressions`;
  const anaHash = createHash('sha256').update('ana@example.com').digest('hex');
  const cases = Object.fromEntries(webhookCases.map((c) => [c.provider, c]));
  const sendgrid = cases['sendgrid']!.request(secrets.acme);
  const mailgun = cases['mailgun']!.request(secrets.acme);
  return [
    { method: 'GET', path: '/openapi.json' },
    { method: 'HEAD', path: '/openapi.json' },
    { method: 'GET', path: list },
    { method: 'GET', path: list, headers: key('acme') },
    { method: 'GET', path: list, headers: { 'x-api-key': 'unknown' } },
    { method: 'GET', path: `/projects/${globex}/suppressions`, headers: key('acme') },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":" Ana@Example.com "}' },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":"ana@example.com"}', advanceClock: 1000 },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":"bo@example.com"}', advanceClock: 1000 },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":"not-an-address"}' },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{}' },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":' },
    { method: 'POST', path: list, headers: { ...key('acme'), 'content-type': 'text/plain' }, body: '{"email":"cy@example.com"}' },
    { method: 'POST', path: list, headers: key('acme'), body: new TextEncoder().encode('{"email":"cy@example.com"}') },
    { method: 'POST', path: list, headers: jsonHeaders(), body: new Uint8Array(1024 * 1024 + 1).fill(0x20) },
    { method: 'GET', path: `${list}/check?email=ANA%40example.com` },
    { method: 'GET', path: `${list}/check?email=ANA%40example.com`, headers: key('acme') },
    { method: 'GET', path: `${list}/check?email=nobody%40example.com`, headers: key('acme') },
    { method: 'GET', path: `${list}/check?email=nobody`, headers: key('acme') },
    {
      method: 'POST',
      path: `${list}/check`,
      headers: jsonHeaders(),
      body: '{"emails":["Ana@example.com","x@example.com","ana@example.com"]}',
    },
    { method: 'POST', path: `${list}/check`, headers: jsonHeaders(), body: '{"emails":["ok@example.com","nope",7]}' },
    {
      method: 'POST',
      path: `${list}/check`,
      headers: jsonHeaders(),
      body: JSON.stringify({ emails: Array.from({ length: 101 }, (_, i) => `u${i}@example.com`) }),
    },
    // Streams (docs/http.md, "Streams"): a list per stream beside the project-wide one.
    {
      method: 'POST',
      path: list,
      headers: jsonHeaders(),
      body: '{"email":"ana@example.com","stream":"marketing","source":"unsubscribe"}',
      advanceClock: 1000,
    },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":"cy@example.com","stream":"marketing"}' },
    { method: 'POST', path: list, headers: jsonHeaders(), body: '{"email":"cy@example.com","stream":""}' },
    { method: 'GET', path: `${list}/check?email=ANA%40example.com&stream=marketing`, headers: key('acme') },
    { method: 'GET', path: `${list}/check?email=cy%40example.com&stream=marketing`, headers: key('acme') },
    { method: 'GET', path: `${list}/check?email=cy%40example.com&stream=weekly-digest`, headers: key('acme') },
    { method: 'GET', path: `${list}?stream=marketing&limit=1`, headers: key('acme') },
    { method: 'GET', path: `${list}?stream=Marketing`, headers: key('acme') },
    {
      method: 'POST',
      path: `${list}/bulk-check`,
      headers: jsonHeaders(),
      body: '{"emails":["ana@example.com","cy@example.com","x@example.com"],"stream":"marketing"}',
    },
    {
      method: 'POST',
      path: `${list}/bulk`,
      headers: jsonHeaders(),
      body: '{"items":[{"email":"dee@example.com","reason":"complaint"},{"email":"nope"}],"stream":"weekly-digest"}',
    },
    {
      method: 'POST',
      path: `${list}/bulk-delete`,
      headers: jsonHeaders(),
      body: '{"items":[{"email":"dee@example.com"},{"email":"cy@example.com"}],"stream":"weekly-digest"}',
    },
    { method: 'DELETE', path: `${list}/${anaHash}?stream=marketing`, headers: key('acme') },
    { method: 'DELETE', path: `${list}/${anaHash}?stream=marketing`, headers: key('acme') },
    { method: 'POST', path: `${list}/check?stream=marketing`, headers: jsonHeaders(), body: '{"emails":["ana@example.com"]}' },
    { method: 'GET', path: `${list}?limit=1`, headers: key('acme') },
    { method: 'GET', path: `${list}?limit=0`, headers: key('acme') },
    { method: 'GET', path: `${list}?cursor=garbage`, headers: key('acme') },
    { method: 'GET', path: `${list}?limit=1&limit=2`, headers: key('acme') },
    { method: 'GET', path: `/projects/%61cme/suppressions/`, headers: key('acme') },
    { method: 'HEAD', path: list, headers: key('acme') },
    { method: 'PUT', path: list, headers: jsonHeaders(), body: '{}' },
    { method: 'OPTIONS', path: list },
    { method: 'DELETE', path: `${list}/check`, headers: key('acme') },
    { method: 'DELETE', path: `${list}/${anaHash}`, headers: key('acme') },
    { method: 'DELETE', path: `${list}/xyz`, headers: key('acme') },
    { method: 'DELETE', path: `${list}/${'0'.repeat(64)}`, headers: key('globex') },
    { method: 'GET', path: '/nope', headers: key('acme') },
    { method: 'GET', path: `/projects/${acme}`, headers: key('acme') },
    webhookStep('ses', acme, sesBounce(secrets.acme, ['dee@example.org', 'eve@example.org'], 'Frühling 🌷 2026')),
    webhookStep('sendgrid', acme, sendgrid),
    webhookStep('sendgrid', acme, sendgrid),
    webhookStep('mailgun', acme, mailgun),
    webhookStep('mailgun', acme, mailgun),
    webhookStep('sparkpost', acme, cases['sparkpost']!.forged(secrets.acme)),
    webhookStep('postmark', acme, cases['postmark']!.notJson(secrets.acme)),
    webhookStep('mandrill', acme, cases['mandrill']!.request(secrets.acme)),
    { method: 'HEAD', path: `/projects/${acme}/webhooks/mandrill` },
    webhookStep('smtp2go', acme, sendgrid),
    {
      method: 'POST',
      path: `/projects/${acme}/webhooks/sendgrid`,
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20),
    },
    { method: 'GET', path: `/projects/${acme}/messages`, headers: key('acme') },
    {
      method: 'GET',
      path: `/projects/${acme}/messages?trackingId=Fr%C3%BChling%20%F0%9F%8C%B7%202026&status=bounced&limit=1`,
      headers: key('acme'),
    },
    { method: 'GET', path: `/projects/${acme}/messages?trackingId=${'x'.repeat(129)}`, headers: key('acme') },
    { method: 'GET', path: `/projects/${acme}/tracking-ids?search=%C3%BCH`, headers: key('both') },
    {
      method: 'GET',
      path: `/projects/${acme}/tracking-ids?trackingId=Fr%C3%BChling%20%F0%9F%8C%B7%202026&search=%C3%BCH`,
      headers: key('acme'),
    },
    { method: 'GET', path: list, headers: key('admin'), store: 'unavailable' },
    webhookStep('sendgrid', acme, sendgridEvents(secrets.acme, ['kim@example.com'], 'delivered', 'retry')),
    { method: 'GET', path: list, headers: key('admin'), store: 'broken' },
    { method: 'GET', path: list, headers: key('admin'), store: 'healthy' },
    // Where bindings are known to differ: a method no route knows, a malformed path, the mount point,
    // a malformed Content-Type.
    { method: 'PROPFIND', path: list, headers: key('acme') },
    { method: 'GET', path: '/projects/%E0%A4%A/suppressions', headers: key('acme') },
    { method: 'GET', path: '' },
    { method: 'DELETE', path: list, headers: { ...key('acme'), 'content-type': '' } },
  ];
}

/** What one binding answered to one step. */
interface Recorded {
  status: number;
  text: string;
  headers: Record<string, string>;
}

export interface ResponseDifference {
  step: string;
  binding: string;
  what: string;
  expected: string | number | null;
  actual: string | number | null;
}

/**
 * A header outside `COMPARED_HEADERS` whose value differs between bindings that gave the same answer
 * otherwise, with every value seen.
 */
export interface OtherHeaderDifference {
  header: string;
  values: Record<string, string[]>;
}

export interface ResponseComparison {
  bindings: string[];
  differences: ResponseDifference[];
  otherHeaders: OtherHeaderDifference[];
}

async function record(
  start: StartServer,
  fixture: ScriptFixture,
  steps: readonly ScriptStep[],
): Promise<{ name: string; answers: Recorded[] }> {
  const app = await startTestApp({ start, store: createMemoryStore(), projects: fixture.projects, secrets: fixture.secrets });
  try {
    const answers: Recorded[] = [];
    for (const step of steps) {
      if (step.advanceClock !== undefined) app.clock.advance(step.advanceClock);
      if (step.store === 'healthy') app.store.failWith(undefined);
      if (step.store === 'unavailable') app.store.failWith(() => new MailwardenError('store_unavailable', 'The store did not answer.'));
      if (step.store === 'broken') app.store.failWith(() => new Error('boom'));
      const answer: Answer = await send(app.server.baseUrl + step.path, {
        method: step.method,
        ...(step.headers === undefined ? {} : { headers: step.headers }),
        ...(step.body === undefined ? {} : { body: step.body }),
      });
      answers.push({ status: answer.status, text: answer.text, headers: Object.fromEntries(answer.headers) });
    }
    return { name: app.server.name, answers };
  } finally {
    await app.close();
  }
}

/**
 * Plays the same script against each binding, each on a fresh memory store with the same clock, and
 * compares every answer with the first binding's: status, body bytes and `COMPARED_HEADERS`. Other
 * headers are reported, not judged.
 */
export async function compareResponses(starts: readonly StartServer[], script = conformanceScript): Promise<ResponseComparison> {
  const fixture = createScriptFixture();
  const steps = script(fixture);
  const runs = [];
  for (const start of starts) runs.push(await record(start, fixture, steps));
  const [reference, ...others] = runs;
  if (reference === undefined) throw new Error('compareResponses needs at least one binding');
  const differences: ResponseDifference[] = [];
  const otherHeaders = new Map<string, Map<string, Set<string>>>();
  steps.forEach((step, index) => {
    const name = `#${index} ${step.method} ${step.path === '' ? '(mount point)' : step.path.slice(0, 80)}`;
    const expected = reference.answers[index]!;
    for (const run of others) {
      const actual = run.answers[index]!;
      const differ = (what: string, a: string | number | null, b: string | number | null) => {
        if (a !== b) differences.push({ step: name, binding: run.name, what, expected: a, actual: b });
      };
      differ('status', expected.status, actual.status);
      differ('body', expected.text, actual.text);
      for (const header of COMPARED_HEADERS) differ(header, expected.headers[header] ?? null, actual.headers[header] ?? null);
      // Other headers of different answers (Content-Length…) only follow from the difference already reported.
      if (expected.status !== actual.status || expected.text !== actual.text) continue;
      const names = new Set([...Object.keys(expected.headers), ...Object.keys(actual.headers)]);
      for (const header of names) {
        if ((COMPARED_HEADERS as readonly string[]).includes(header) || VOLATILE_HEADERS.has(header)) continue;
        if (expected.headers[header] === actual.headers[header]) continue;
        const seen = otherHeaders.get(header) ?? new Map<string, Set<string>>();
        otherHeaders.set(header, seen);
        for (const [binding, value] of [
          [reference.name, expected.headers[header]],
          [run.name, actual.headers[header]],
        ] as const) {
          const values = seen.get(binding) ?? new Set<string>();
          values.add(value ?? '(absent)');
          seen.set(binding, values);
        }
      }
    }
  });
  return {
    bindings: runs.map((run) => run.name),
    differences,
    otherHeaders: [...otherHeaders].map(([header, values]) => ({
      header,
      values: Object.fromEntries([...values].map(([binding, seen]) => [binding, [...seen].sort()])),
    })),
  };
}

/**
 * Requires every binding to answer the script exactly as the first does (status, body bytes,
 * `COMPARED_HEADERS`). Returns the differences in other headers, for the caller to judge.
 *
 * @example
 * const otherHeaders = await expectIdenticalResponses([startExpress5, startExpress4, startFastify]);
 */
export async function expectIdenticalResponses(
  starts: readonly StartServer[],
  script = conformanceScript,
): Promise<OtherHeaderDifference[]> {
  const comparison = await compareResponses(starts, script);
  expect(comparison.differences, `answers of ${comparison.bindings.join(', ')}`).toEqual([]);
  return comparison.otherHeaders;
}
