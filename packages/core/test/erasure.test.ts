// Erasure that keeps blocking (docs/core.md, "Erasure"; docs/decisions.md, "Erasure"), through the
// service and the HTTP route with the memory store: the address goes from messages, the allowlist and
// the feed, its suppressions stay by hash with the placeholder email, checks still answer suppressed.
// What a store holds afterwards, byte for byte, is the conformance suite's (`dump`).
import {
  createHttpHandler,
  createMailwarden,
  createMemoryStore,
  createOpenApiDocument,
  erasureForms,
  type DeliveryEvent,
  type Erasure,
} from '@mailwarden/core';
import { createCheckCache, erasedEmail } from '@mailwarden/core/store';
import { changeListSchema, erasureSchema } from '@mailwarden/core/schemas';
import { describe, expect, test } from 'vitest';
import { expectMailwardenError } from './expect-mailwarden-error.js';

const T0 = Date.UTC(2026, 10, 1, 9);
const iso = (ms: number) => new Date(ms).toISOString();
// Mixed case, a plus tag and surrounding white space that JSON escapes: every form the store is given.
const GIVEN = '\tJane.Doe+News@Example.COM\n';
const NORMALIZED = 'jane.doe+news@example.com';

function setup() {
  const clock = { now: T0, read: () => clock.now };
  const store = createMemoryStore({ changes: {} });
  const mailwarden = createMailwarden({ store, now: clock.read });
  return { mailwarden, clock, store, hash: mailwarden.suppressions.hashOf(NORMALIZED) };
}

const bounce = (recipient: string, eventKey: string): DeliveryEvent => ({
  provider: 'postmark',
  eventKey,
  type: 'bounced',
  bounceClass: 'hard',
  messageId: `m-${eventKey}`,
  recipient,
  trackingId: 'newsletter',
  occurredAt: new Date(T0 - 60_000),
});

describe('erasures.erase', () => {
  test('messages, allowlist entry and feed changes go; the suppression stays, by hash, with the placeholder email', async () => {
    const { mailwarden, clock, hash } = setup();
    await mailwarden.applyEvents('acme', [bounce('Jane.Doe+News@example.com', 'e-1'), bounce('john@example.com', 'e-2')]);
    await mailwarden.suppressions.add('acme', NORMALIZED, { stream: 'marketing', ttl: 3600 });
    await mailwarden.allowlist.add('acme', NORMALIZED);
    clock.now += 1000;
    const erased = await mailwarden.erasures.erase('acme', GIVEN, { actor: 'key:privacy' });
    expect(erasureSchema.parse(erased)).toEqual(erased);
    const placeholder = erasedEmail(hash);
    expect(placeholder).toBe(`${hash.slice(0, 16)}@erased.invalid`);
    expect(erased).toMatchObject({ hash, email: placeholder, suppressed: true, messages: 1 });
    expect(erased.changes).toBeGreaterThanOrEqual(3);
    // The project-wide one first (the bounce's, no diagnostic), then the stream's (its expiry kept there).
    expect(erased.records.map((record) => [record.email, record.reason, record.stream ?? null])).toEqual([
      [placeholder, 'hard_bounce', null],
      [placeholder, 'manual', 'marketing'],
    ]);
    expect(erased.records[0]!.cause?.diagnostic ?? null).toBeNull();

    expect(await mailwarden.suppressions.check('acme', 'JANE.DOE+news@example.com')).toMatchObject({
      suppressed: true,
      reason: 'hard_bounce',
    });
    expect((await mailwarden.suppressions.checkMany('acme', [NORMALIZED])).results[0]).toMatchObject({ suppressed: true });
    const listed = await mailwarden.suppressions.list('acme');
    expect(listed.items.find((item) => item.hash === hash)).toEqual(erased.records[0]);
    expect((await mailwarden.messages.list('acme')).items.map((message) => message.recipient)).toEqual(['john@example.com']);
    expect((await mailwarden.allowlist.list('acme')).items).toEqual([]);

    const feed = await mailwarden.changes.list('acme', { limit: 1000 });
    expect(changeListSchema.parse(feed)).toEqual(feed);
    const erasure = feed.items.filter((change) => change.kind === 'address.erased');
    expect(erasure).toEqual([
      {
        id: `acme:${erasure[0]!.seq}`,
        seq: erasure[0]!.seq,
        project: 'acme',
        kind: 'address.erased',
        at: iso(T0 + 1000),
        actor: 'key:privacy',
        hash,
        records: erased.records,
        messages: 1,
        changes: erased.changes,
      },
    ]);
    // No change left names the address in any form.
    const text = JSON.stringify(feed).toLowerCase();
    expect(text).not.toContain('jane');
    expect(text).toContain('john@example.com');
  });

  test('an address never seen gets a suppression of its own: manual, source api, created now, no expiry', async () => {
    const { mailwarden, hash } = setup();
    const erased = await mailwarden.erasures.erase('acme', NORMALIZED);
    const record = { hash, email: erasedEmail(hash), reason: 'manual', created_at: iso(T0), source: 'api', cause: null };
    expect(erased).toEqual({ hash, email: erasedEmail(hash), suppressed: true, records: [record], messages: 0, changes: 0 });
    expect((await mailwarden.suppressions.list('acme')).items).toEqual([record]);
    const [change] = (await mailwarden.changes.list('acme')).items;
    expect(change).not.toHaveProperty('actor');
  });

  test('an expiring suppression stays without its expiry: an erased address is blocked for good', async () => {
    const { mailwarden, hash } = setup();
    await mailwarden.suppressions.add('acme', NORMALIZED, { ttl: 60 });
    const erased = await mailwarden.erasures.erase('acme', NORMALIZED);
    expect(erased.records).toEqual([expect.objectContaining({ hash, email: erasedEmail(hash) })]);
    expect(erased.records[0]).not.toHaveProperty('expires_at');
  });

  test('idempotent: again, the same suppressions, nothing more erased, another address.erased', async () => {
    const { mailwarden, clock } = setup();
    await mailwarden.applyEvents('acme', [bounce(NORMALIZED, 'e-1')]);
    const first = await mailwarden.erasures.erase('acme', GIVEN);
    const listed = await mailwarden.suppressions.list('acme');
    clock.now += 1000;
    const second = await mailwarden.erasures.erase('acme', NORMALIZED);
    expect(second).toEqual({ ...first, messages: 0, changes: 0 });
    expect(await mailwarden.suppressions.list('acme')).toEqual(listed);
    const kinds = (await mailwarden.changes.list('acme')).items.map((change) => change.kind);
    expect(kinds).toEqual(['address.erased', 'address.erased']);
  });

  test.each(['not an address', '', 'jane@', 42])('%j is invalid_email, nothing written', async (email) => {
    const { mailwarden } = setup();
    await expectMailwardenError(() => mailwarden.erasures.erase('acme', email as string), 'invalid_email');
    expect((await mailwarden.changes.list('acme')).items).toEqual([]);
  });

  test('the in-process check cache forgets the erased hash at once', async () => {
    const clock = { now: T0, read: () => clock.now };
    const store = await createCheckCache({ store: createMemoryStore(), negativeTtlMs: 60_000 });
    const mailwarden = createMailwarden({ store, now: clock.read });
    const hash = mailwarden.suppressions.hashOf(NORMALIZED);
    await mailwarden.suppressions.add('acme', NORMALIZED);
    expect((await store.getSuppression('acme', hash))?.email).toBe(NORMALIZED);
    await mailwarden.erasures.erase('acme', NORMALIZED);
    expect((await store.getSuppression('acme', hash))?.email).toBe(erasedEmail(hash));
  });
});

describe('erasureForms', () => {
  test('as given, trimmed, normalized, lower-cased, each JSON-escaped; unique and non-empty', () => {
    expect(erasureForms(GIVEN, NORMALIZED)).toEqual([
      GIVEN,
      'Jane.Doe+News@Example.COM',
      NORMALIZED,
      GIVEN.toLowerCase(),
      '\\tJane.Doe+News@Example.COM\\n',
      '\\tjane.doe+news@example.com\\n',
    ]);
    expect(erasureForms(NORMALIZED, NORMALIZED)).toEqual([NORMALIZED]);
  });
});

describe('POST /projects/{projectId}/erasures', () => {
  function http() {
    const { mailwarden, hash } = setup();
    const handler = createHttpHandler(mailwarden, {
      apiKeys: [
        { name: 'privacy', key: 'admin-key', projects: ['acme'], scopes: ['admin'] },
        { name: 'ops', key: 'write-key', projects: ['acme'], scopes: ['read', 'write'] },
      ] as never,
      logger: { error: () => {} },
    });
    const erase = async (body: unknown, key = 'admin-key') => {
      const response = await handler.handle({
        method: 'POST',
        path: '/projects/acme/erasures',
        query: '',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
      });
      return { status: response.status, body: JSON.parse(Buffer.from(response.body).toString()) };
    };
    return { mailwarden, hash, erase };
  }

  test('200 with what remains, as the service answers; the address given with escapes in JSON', async () => {
    const { mailwarden, hash, erase } = http();
    await mailwarden.suppressions.add('acme', NORMALIZED);
    const answer = await erase(`{"email":"\\tJane.Doe\\u002bNews@Example.COM\\n"}`);
    expect(answer.status).toBe(200);
    const body = answer.body as Erasure;
    expect(erasureSchema.parse(body)).toEqual(body);
    expect(body).toMatchObject({ hash, email: erasedEmail(hash), suppressed: true, messages: 0 });
    expect(body.records.map((record) => [record.email, record.reason, record.source])).toEqual([[erasedEmail(hash), 'manual', 'api']]);
    expect((await mailwarden.changes.list('acme')).items.at(-1)).toMatchObject({ kind: 'address.erased', actor: 'key:privacy' });
  });

  test.each([
    [{ email: 'not an address' }, 400, 'invalid_email'],
    [{}, 400, 'invalid_request'],
    [{ email: 7 }, 400, 'invalid_request'],
    ['{"email":', 400, 'invalid_request'],
  ] as const)('%j: %i %s', async (body, status, code) => {
    const answer = await http().erase(body);
    expect([answer.status, answer.body.error.code]).toEqual([status, code]);
  });

  test('needs the admin scope: a write key gets 403 insufficient_scope', async () => {
    const answer = await http().erase({ email: NORMALIZED }, 'write-key');
    expect([answer.status, answer.body.error.code]).toEqual([403, 'insufficient_scope']);
  });
});

describe('the OpenAPI document', () => {
  type Operation = {
    'x-mailwarden-scope'?: string;
    requestBody?: { content: Record<string, { schema: unknown }> };
    responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
    parameters?: { name: string }[];
  };
  const paths = (createOpenApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> }).paths;

  test('lists POST …/erasures with its body and answer, scope admin', () => {
    const erase = paths['/projects/{projectId}/erasures']?.post;
    expect(erase?.['x-mailwarden-scope']).toBe('admin');
    expect(erase?.requestBody?.content['application/json']?.schema).toBeDefined();
    expect(erase?.responses['200']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Erasure' });
    expect(Object.keys(erase?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400']));
  });

  test("lists the feed's actor, hash and email filters", () => {
    const names = paths['/projects/{projectId}/changes']?.get?.parameters?.map((parameter) => parameter.name);
    expect(names).toEqual(expect.arrayContaining(['kind', 'actor', 'hash', 'email']));
  });
});
