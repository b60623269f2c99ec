// What the Redis store persists, read back through raw commands (a side channel), and what only a real
// server shows: the key layout, scripts by SHA, unreachable servers, pub/sub invalidations, retention.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { MailwardenError, type Store } from '@mailwarden/core';
import {
  Fact,
  compareCodePoints,
  createEmailHasher,
  messageKey,
  timelineEntryId,
  type MessageRecord,
  type StoredEvent,
  type SuppressionInvalidation,
  type SuppressionRecord,
} from '@mailwarden/core/store';
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore, type RedisStore } from '../src/index.js';
import { EVENTS_PER_SCRIPT } from '../src/redis-store.js';
import * as scripts from '../src/generated/scripts.js';
import { locateScriptError } from '../src/script.js';
import { clusterClient } from './cluster-client.js';

const T0 = Date.UTC(2025, 0, 1);
const at = (seconds: number) => T0 + seconds * 1000;
/** T0's UTC day, days since the epoch: the stats keys' day. */
const DAY0 = T0 / 86_400_000;
const hashEmail = createEmailHasher();

const url = inject('redisUrl');
/** The side channel: raw commands only. */
const raw = new Redis(url);
const client = new Redis(url);
const cluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([raw.quit(), client.quit(), cluster.quit()]));

function fresh() {
  const keyPrefix = `raw:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return { keyPrefix, projectId, tag: `${keyPrefix}{${projectId}}:` };
}

function address(name: string) {
  const email = `${name}-${randomUUID()}@example.com`;
  return { email, hash: hashEmail(email) };
}

function suppression(name: string, reason: SuppressionRecord['reason'], createdAt: number): SuppressionRecord {
  return { ...address(name), reason, createdAt };
}

function message(trackingId: string | null, facts: number, time: number, id = randomUUID()): MessageRecord {
  const recipient = `${id}@example.net`;
  return {
    key: messageKey('ses', id, recipient),
    provider: 'ses',
    messageId: id,
    recipient,
    trackingId,
    stream: null,
    facts,
    firstEventAt: time,
    lastEventAt: time,
  };
}

function event(parts: { message?: MessageRecord; suppression?: SuppressionRecord; key?: string }): StoredEvent {
  const trackingId = parts.message?.trackingId ?? null;
  return {
    key: parts.key ?? `ses:${randomUUID()}`,
    message: parts.message ?? null,
    trackingIdSearchKey: trackingId?.toLowerCase() ?? null,
    suppression: parts.suppression ?? null,
  };
}

/** The order prefix of a newest-first member, written independently of src/layout.ts. */
function order(time: number): string {
  return time >= 0
    ? `0${(BigInt(Number.MAX_SAFE_INTEGER) - BigInt(time)).toString().padStart(16, '0')}`
    : `1${(-time).toString().padStart(16, '0')}`;
}

/** A suppression's order member, written independently of src/layout.ts: `order`'s two parts in binary, then the hash. */
function binaryMember(time: number, hash: string): Buffer {
  const orderPart = order(time);
  const bytes = Buffer.alloc(8);
  bytes[0] = Number(orderPart[0]);
  bytes.writeBigUInt64BE(BigInt(orderPart.slice(1)) | (BigInt(bytes[0]) << 56n));
  return Buffer.concat([bytes, Buffer.from(hash, 'hex')]);
}

/** A HASH with binary fields: its fields in hex, its values as text. */
async function fieldsOf(redis: Redis, key: string): Promise<Record<string, string>> {
  const flat = (await redis.callBuffer('HGETALL', key)) as Buffer[];
  const fields: Record<string, string> = {};
  for (let at = 0; at < flat.length; at += 2) fields[flat[at]!.toString('hex')] = flat[at + 1]!.toString();
  return fields;
}

/** Every key under a pattern, through SCAN (never KEYS), on one node. */
async function scanKeys(node: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The counters of a tracking-ID row as stored: `+messages,delivered,bounced,…`. */
function decodeRow(value: string | null): { messages: number; delivered: number; bounced: number } {
  const [messages, delivered, bounced] = (value ?? '').slice(1).split(',').map(Number);
  return { messages: messages!, delivered: delivered!, bounced: bounced! };
}

function commandCalls(info: string, command: string): number {
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe('key layout', () => {
  test('every key of a project carries the {projectId} hash tag, and nothing else is written', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const a = suppression('a', 'manual', at(1));
    const b = suppression('b', 'hard_bounce', at(2));
    const m1 = message('promo', Fact.delivered, at(3));
    const m2 = message('{braces}}', Fact.sent, at(4));
    const m3 = message(null, Fact.sent, at(5));
    const events = [
      event({ message: m1, suppression: b }),
      event({ message: m2 }),
      event({ message: m3 }),
      // A sender error: m1 moves to a smaller ID, with a brace that must not end the hash tag.
      event({ message: { ...m1, trackingId: 'a{b}', facts: Fact.opened, firstEventAt: at(6), lastEventAt: at(6) } }),
    ];
    await store.addSuppression(projectId, a);
    await store.applyEvents(projectId, events);
    await store.removeSuppression(projectId, a.hash);
    // A webhook token is opaque: braces in it sit after the tag too.
    await store.claimWebhookToken!(projectId, 'mailgun:{t}', 'f'.repeat(64), Date.now() + 60_000);

    const keys = await scanKeys(raw, `${keyPrefix}*`);
    expect(keys).toStrictEqual(
      [
        // Suppressions and their order block (heads and the first block); tracking IDs, their order
        // and its search blocks (heads and keys).
        ...['s', 'sk', 'sb:', 'mo', 't', 'to', 'tk', 'tb:'],
        ...[m1, m2, m3].map((m) => `m:${m.key}`),
        'mt:a{b}',
        'mt:{braces}}',
        // Counts over time of the day: the project's, and m1's under its tracking ID now ('promo' has none left).
        `sp:${DAY0}`,
        `st:${DAY0}:a{b}`,
        ...events.map((e) => `e:${e.key}`),
        'wt:mailgun:{t}',
      ]
        .map((name) => tag + name)
        .sort(),
    );
    for (const key of keys) expect(key.startsWith(tag)).toBe(true);
  });

  test('on a cluster, all of a project lands in the slot of its tag, on one master', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client: cluster, keyPrefix });
    await store.addSuppression(projectId, suppression('a', 'manual', at(1)));
    await store.applyEvents(projectId, [event({ message: message('promo', Fact.delivered, at(2)) })]);
    await store.claimWebhookToken!(projectId, 'mailgun:abc', 'f'.repeat(64), Date.now() + 60_000);

    const masters = cluster.nodes('master');
    const perNode = await Promise.all(masters.map((node) => scanKeys(node, `${keyPrefix}*`)));
    expect(perNode.filter((keys) => keys.length > 0)).toHaveLength(1);
    const keys = perNode.flat();
    // Suppressions 3 (records, block heads, a block), the message, its order in the project and the
    // tracking ID 2, the row 2, the dedup key, the token, the day's stats of the project and of the
    // tracking ID, and the search blocks 2.
    expect(keys).toHaveLength(14);
    const slot = await masters[0]!.cluster('KEYSLOT', `{${projectId}}`);
    for (const key of keys) {
      expect(key.startsWith(tag)).toBe(true);
      expect(await masters[0]!.cluster('KEYSLOT', key)).toBe(slot);
    }
  });

  test('records are stored as documented', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const a = suppression('a', 'manual', at(1));
    const b = suppression('b', 'hard_bounce', at(2));
    const m1 = message('Promo', Fact.delivered, at(3));
    const m2 = message(null, Fact.sent | Fact.deferred, at(4));
    const e1 = event({ message: m1, suppression: b });
    await store.addSuppression(projectId, a);
    await store.applyEvents(projectId, [e1, event({ message: m2 })]);

    // Suppressions: HASH, field the hash's first 30 bytes → reason rank, createdAt, ':', email; the
    // order in blocks, each a ZSET of members (8 order bytes, the 32 bytes of the hash), scores 0, named
    // after its head in a ZSET of heads.
    expect(await fieldsOf(raw, `${tag}s`)).toStrictEqual({
      [a.hash.slice(0, 60)]: `1${a.createdAt}:${a.email}`,
      [b.hash.slice(0, 60)]: `2${b.createdAt}:${b.email}`,
    });
    expect(await raw.zrangeBuffer(`${tag}sk`, 0, -1)).toStrictEqual([Buffer.alloc(0)]);
    expect(await raw.zrangeBuffer(`${tag}sb:`, 0, -1, 'WITHSCORES')).toStrictEqual([
      binaryMember(b.createdAt, b.hash),
      Buffer.from('0'),
      binaryMember(a.createdAt, a.hash),
      Buffer.from('0'),
    ]);
    // Messages: one HASH each; no `t` field without a tracking ID.
    expect(await raw.hgetall(`${tag}m:${m1.key}`)).toStrictEqual({
      p: 'ses',
      i: m1.messageId,
      r: m1.recipient,
      t: 'Promo',
      f: String(Fact.delivered),
      a: String(at(3)),
      b: String(at(3)),
      // The time of each counted fact, c<column + 1> (statColumns: delivered is column 0).
      c1: String(at(3)),
    });
    expect(await raw.hgetall(`${tag}m:${m2.key}`)).toStrictEqual({
      p: 'ses',
      i: m2.messageId,
      r: m2.recipient,
      f: String(Fact.sent | Fact.deferred),
      a: String(at(4)),
      b: String(at(4)),
    });
    expect(await raw.zrange(`${tag}mo`, 0, -1)).toStrictEqual([order(at(4)) + m2.key, order(at(3)) + m1.key]);
    expect(await raw.zrange(`${tag}mt:Promo`, 0, -1)).toStrictEqual([order(at(3)) + m1.key]);
    // Tracking IDs: HASH ID → counters, lastEventAt, search key; ZSET members ID, NUL, search key.
    // '+' marks the form with opened, clicked and unsubscribed; a row without it (written before them) reads them as 0.
    expect(await raw.hgetall(`${tag}t`)).toStrictEqual({ Promo: `+1,1,0,0,0,0,0,${at(3)},promo` });
    expect(await raw.zrangeBuffer(`${tag}to`, 0, -1)).toStrictEqual([Buffer.from('Promo\0promo')]);
    // Counts over time: a HASH per UTC day and scope, field '<hour of the day>:<column>', never expiring.
    expect(await raw.hgetall(`${tag}sp:${DAY0}`)).toStrictEqual({ '0:0': '1' });
    expect(await raw.hgetall(`${tag}st:${DAY0}:Promo`)).toStrictEqual({ '0:0': '1' });
    for (const key of [`sp:${DAY0}`, `st:${DAY0}:Promo`]) expect(await raw.pttl(tag + key)).toBe(-1);
    // Dedup keys: set once, no expiry without retention; suppressions never expire.
    expect(await raw.get(`${tag}e:${e1.key}`)).toBe('1');
    for (const key of [`e:${e1.key}`, `m:${m1.key}`, 's', 'sk', 'sb:', 'mo', 't', 'to', 'mt:Promo'])
      expect(await raw.pttl(tag + key)).toBe(-1);
  });

  test('a NUL inside a tracking ID keeps the code-point order of the listing', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const ids = ['a', 'a\u0000', 'a\u0000\u0000b', 'a\u0000b', 'a\u0001'];
    await store.applyEvents(
      projectId,
      [...ids].reverse().map((id, i) => event({ message: message(id, Fact.sent, at(i)) })),
    );
    expect((await store.listTrackingIds(projectId, { limit: 10 })).map((row) => row.trackingId)).toStrictEqual(ids);
    expect((await store.listTrackingIds(projectId, { limit: 10, after: 'a\u0000' })).map((row) => row.trackingId)).toStrictEqual(
      ids.slice(2),
    );
    expect((await store.listTrackingIds(projectId, { limit: 10, search: '\u0000b' })).map((row) => row.trackingId)).toStrictEqual([
      'a\u0000\u0000b',
      'a\u0000b',
    ]);
    expect(await raw.zcard(`${tag}to`)).toBe(5);
  });

  test('times anywhere in the safe-integer range keep the newest-first order', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const times = [Number.MAX_SAFE_INTEGER, 1, 0, -1, -1000, -Number.MAX_SAFE_INTEGER];
    const records = times.map((time) => suppression('t', 'manual', time));
    for (const record of [...records].reverse()) await store.addSuppression(projectId, record);
    expect(await store.listSuppressions(projectId, { limit: 10 })).toStrictEqual(records);
    expect(await store.listSuppressions(projectId, { limit: 10, after: { createdAt: 0, hash: 'f'.repeat(64) } })).toStrictEqual(
      records.slice(3),
    );
    const messages = times.map((time) => message(null, Fact.sent, time));
    await store.applyEvents(
      projectId,
      messages.map((m) => event({ message: m })),
    );
    expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual(messages);
  });

  test('a malformed record is refused before anything is written', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    await expect(store.addSuppression(projectId, { ...suppression('a', 'manual', at(1)), hash: 'ABC' })).rejects.toThrow(TypeError);
    await expect(store.addSuppression(projectId, suppression('a', 'manual', 1.5))).rejects.toThrow(RangeError);
    // One bad event fails the whole call, before the good ones are applied.
    const good = event({ message: message('promo', Fact.sent, at(1)) });
    await expect(
      store.applyEvents(projectId, [good, event({ suppression: { ...suppression('b', 'complaint', at(2)), hash: 'x' } })]),
    ).rejects.toThrow(TypeError);
    await expect(store.getSuppression('a{b}', 'f'.repeat(64))).rejects.toThrow(TypeError);
    expect(await scanKeys(raw, `${keyPrefix}*`)).toStrictEqual([]);
  });

  test('options that would break the hash tag are refused', () => {
    expect(() => createRedisStore({ client, keyPrefix: 'a{b}:' })).toThrow(TypeError);
    const prefixed = new Redis(url, { keyPrefix: 'app:', lazyConnect: true });
    expect(() => createRedisStore({ client: prefixed, keyPrefix: 'mw:' })).toThrow(/keyPrefix/);
    prefixed.disconnect();
    expect(() => createRedisStore({ client, keyPrefix: 'mw:', retention: { messagesMs: 0 } })).toThrow(RangeError);
  });
});

describe('scripts', () => {
  /** Runs every script once for a fresh project (under the key prefix `keyPrefix`, through `redis`). */
  async function everyScript(store: Store, projectId: string, redis: Redis | Cluster, keyPrefix: string): Promise<void> {
    const a = suppression('a', 'manual', at(1));
    await store.addSuppression(projectId, a);
    await store.removeSuppression(projectId, a.hash);
    await store.mergeSuppressions(projectId, [a]);
    await store.removeSuppressions(projectId, [a.hash]);
    await store.listSuppressions(projectId, { limit: 10 });
    // A store's first check of a project reads the old layout too; its upgrade runs a step.
    await store.getSuppression(projectId, a.hash);
    await (store as RedisStore).upgradeSuppressions(projectId);
    // Upgraded, a check in a stream reads both lists with a script of its own.
    await store.getSuppression(projectId, a.hash, 'news');
    await store.applyEvents(projectId, [event({ message: message('promo', Fact.sent, at(1)) })]);
    await store.listMessages(projectId, { limit: 10 });
    await store.getMessage(projectId, 'f'.repeat(32));
    await store.listTrackingIds(projectId, { limit: 10, search: 'pro' });
    // As stored before search blocks: the next search builds them.
    await redis.del(`${keyPrefix}{${projectId}}:tk`, `${keyPrefix}{${projectId}}:tb:`);
    await store.listTrackingIds(projectId, { limit: 10, search: 'pro' });
    await store.getStats(projectId, { interval: 'day', from: T0, to: T0 + 86_400_000 });
    await store.claimWebhookToken!(projectId, 'mailgun:token', 'f'.repeat(64), Date.now() + 60_000);
    await store.addAllowlistEntry(projectId, { key: '@example.com', entry: '@example.com', createdAt: at(1) });
    await store.removeAllowlistEntry(projectId, '@example.com');
    // An expiring suppression lists the project for the sweep, which then runs its script there.
    await store.addSuppression(projectId, { ...a, expiresAt: at(2) });
    await store.purgeExpired!(at(2));
    // Issue 26: the feed (a store made with one), alert windows, paused streams, outbound state.
    await store.listChanges(projectId, { after: 0, limit: 10 });
    await store.getAlertWindows(projectId, [null]);
    await store.pauseStream(projectId, 'news', at(3));
    await store.resumeStream(projectId, 'news', at(3));
    const state = await store.leaseOutbound(projectId, 'crm', 'owner', at(3), at(4));
    const { endpoint: _, ...progress } = state!;
    await store.saveOutbound(projectId, 'crm', 'owner', { ...progress, pausedAt: at(3) }, at(4));
    await store.getOutbound(projectId, ['crm']);
    await store.resumeOutbound(projectId, 'crm', at(3));
    // Issue 27: erasure (with the read that finds the address's messages) and the key list.
    await store.eraseAddress(projectId, {
      hash: a.hash,
      email: a.email,
      forms: [a.email],
      suppression: { ...a, email: 'erased@erased.invalid' },
      now: at(3),
    });
    await store.syncApiKeys(projectId, [{ name: 'ops', scopes: ['admin'], version: '0'.repeat(16) }], at(3), 'config');
  }
  const shas = Object.values(scripts).map((script) => script.sha);

  test('are called by SHA once a server has them: no EVAL after the first use', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix, changes: {} });
    await everyScript(store, projectId, client, keyPrefix);
    expect(await raw.script('EXISTS', ...shas)).toStrictEqual(shas.map(() => 1));

    const before = await raw.info('commandstats');
    for (let i = 0; i < 10; i++) await everyScript(store, `${projectId}-${i}`, client, keyPrefix);
    const after = await raw.info('commandstats');
    expect(commandCalls(after, 'eval') - commandCalls(before, 'eval')).toBe(0);
    expect(commandCalls(after, 'eval_ro') - commandCalls(before, 'eval_ro')).toBe(0);
    expect(commandCalls(after, 'evalsha') - commandCalls(before, 'evalsha')).toBeGreaterThanOrEqual(50);
    expect(commandCalls(after, 'evalsha_ro') - commandCalls(before, 'evalsha_ro')).toBeGreaterThanOrEqual(20);
  });

  test('are loaded on every master of a cluster that serves a project', async () => {
    const { keyPrefix } = fresh();
    const store = createRedisStore({ client: cluster, keyPrefix, changes: {} });
    const masters = cluster.nodes('master');
    // One project per master: the slot of its tag decides where it lives.
    const keyOf = (node: Redis) => `${node.options.host}:${node.options.port}`;
    const projectOf = new Map<string, string>();
    while (projectOf.size < masters.length) {
      const projectId = `scripts-${randomUUID()}`;
      const slot = Number(await masters[0]!.cluster('KEYSLOT', `{${projectId}}`));
      const owner = (cluster.slots[slot] ?? [])[0];
      if (owner !== undefined && !projectOf.has(owner)) projectOf.set(owner, projectId);
    }
    for (const node of masters) await everyScript(store, projectOf.get(keyOf(node))!, cluster, keyPrefix);
    for (const node of masters) expect(await node.script('EXISTS', ...shas)).toStrictEqual(shas.map(() => 1));
  });

  test('after SCRIPT FLUSH, the next call loads the script again by EVAL', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    await raw.script('FLUSH');
    const record = suppression('a', 'manual', at(1));
    expect(await store.addSuppression(projectId, record)).toStrictEqual({ record, created: true });
    expect(await store.listSuppressions(projectId, { limit: 1 })).toStrictEqual([record]);
    expect(await raw.script('EXISTS', scripts.addSuppression.sha, scripts.listSuppressions.sha)).toStrictEqual([1, 1]);
  });

  /** The number of the line of `file` (under the package) that holds `text`. */
  function lineOf(file: string, text: string): number {
    const line =
      readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')
        .split('\n')
        .findIndex((line) => line.includes(text)) + 1;
    expect(line, `${file} holds ${text}`).toBeGreaterThan(0);
    return line;
  }

  test('a Lua error names the file and line of lua/ it comes from, with the original error as cause', async () => {
    const { keyPrefix, projectId } = fresh();
    // An expiresAt the store never sends (it checks it first): the script's comparison with 0 raises.
    const proxy = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'evalsha' && property !== 'eval') return Reflect.get(target, property, receiver);
        return (script: string, count: number, ...rest: string[]) =>
          (target[property] as (...args: unknown[]) => Promise<unknown>).call(target, script, count, ...rest.slice(0, -1), 'soon');
      },
    });
    const error = (await createRedisStore({ client: proxy, keyPrefix })
      .claimWebhookToken(projectId, 'mailgun:token', 'f'.repeat(64), Date.now() + 60_000)
      .catch((error: unknown) => error)) as Error;
    const line = lineOf('lua/claimWebhookToken.lua', 'if tonumber(ARGV[2]) > 0');
    expect(error.name).toBe('ReplyError');
    expect(error.message).toMatch(
      new RegExp(`^ERR lua/claimWebhookToken\\.lua:${line}: attempt to compare .* on @lua/claimWebhookToken\\.lua:${line}\\.$`),
    );
    expect((error.cause as Error).message).toMatch(/^ERR user_script:\d+: attempt to compare/);
  });

  test('a Lua error in an included file names that file and line', async () => {
    const { tag } = fresh();
    const script = scripts.removeSuppression;
    // A hash that is not hex: unhex's arithmetic on the nil of tonumber raises.
    const error = (await raw
      .eval(script.lua, 3, `${tag}s`, `${tag}sk`, `${tag}so`, 'not a hash', 'channel', 'project')
      .catch((error: unknown) => locateScriptError(script, error))) as Error;
    const line = lineOf('lua/include/hex.lua', 'math.floor(v / 16777216)');
    expect(error.message).toMatch(new RegExp(`^ERR lua/include/hex\\.lua:${line}: attempt to perform arithmetic`));
  });
});

describe('store_unavailable', () => {
  /** Every operation, each expected to fail with store_unavailable. */
  const operations: [string, (store: Store) => Promise<unknown>][] = [
    ['getSuppression', (store) => store.getSuppression('p', 'f'.repeat(64))],
    ['getSuppressions', (store) => store.getSuppressions('p', ['f'.repeat(64)])],
    ['addSuppression', (store) => store.addSuppression('p', suppression('a', 'manual', at(1)))],
    ['removeSuppression', (store) => store.removeSuppression('p', 'f'.repeat(64))],
    ['mergeSuppressions', (store) => store.mergeSuppressions('p', [suppression('a', 'manual', at(1))])],
    ['removeSuppressions', (store) => store.removeSuppressions('p', ['f'.repeat(64)])],
    ['listSuppressions', (store) => store.listSuppressions('p', { limit: 1 })],
    ['applyEvents', (store) => store.applyEvents('p', [event({ message: message('x', Fact.sent, at(1)) })])],
    ['listMessages', (store) => store.listMessages('p', { limit: 1 })],
    ['listTrackingIds', (store) => store.listTrackingIds('p', { limit: 1, search: 'x' })],
    ['claimWebhookToken', (store) => store.claimWebhookToken!('p', 'mailgun:token', 'f'.repeat(64), Date.now() + 60_000)],
    ['subscribeInvalidations', (store) => store.subscribeInvalidations!(() => {})],
  ];

  async function expectUnavailable(store: Store, { subscribe = true } = {}): Promise<void> {
    for (const [name, operation] of operations) {
      if (name === 'subscribeInvalidations' && !subscribe) continue;
      const error = await operation(store).then(
        () => new Error(`${name} succeeded`),
        (error: unknown) => error,
      );
      expect(error, name).toBeInstanceOf(MailwardenError);
      expect((error as MailwardenError).code, name).toBe('store_unavailable');
      expect((error as MailwardenError).cause, name).toBeInstanceOf(Error);
    }
  }

  test('when nothing listens on the port', async () => {
    const port = await freePort();
    const unreachable = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    unreachable.on('error', () => {});
    try {
      await expectUnavailable(createRedisStore({ client: unreachable, keyPrefix: 'mw:' }));
    } finally {
      unreachable.disconnect();
    }
  });

  test('when the client was closed', async () => {
    const closed = new Redis(url);
    await closed.quit();
    // Subscribing still works: it opens a connection of its own (client.duplicate()).
    await expectUnavailable(createRedisStore({ client: closed, keyPrefix: 'mw:' }), { subscribe: false });
  });

  test('when no node of a cluster can be reached', async () => {
    const port = await freePort();
    const unreachable = new Cluster([{ host: '127.0.0.1', port }], { clusterRetryStrategy: () => null });
    unreachable.on('error', () => {});
    try {
      await expectUnavailable(createRedisStore({ client: unreachable, keyPrefix: 'mw:' }));
    } finally {
      unreachable.disconnect();
    }
  });

  test('is only for reachability: other server errors pass through unchanged', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    await raw.set(`${tag}s`, 'not a hash');
    const error = await createRedisStore({ client, keyPrefix })
      .getSuppression(projectId, 'f'.repeat(64))
      .catch((error: unknown) => error);
    expect(error).not.toBeInstanceOf(MailwardenError);
    expect(String(error)).toMatch(/WRONGTYPE/);
  });
});

describe('invalidations', () => {
  test('every suppression write that changes something reaches the subscribers of other clients', async () => {
    const { keyPrefix, projectId } = fresh();
    const other = new Redis(url);
    const listening = createRedisStore({ client: other, keyPrefix });
    const writing = createRedisStore({ client, keyPrefix });
    const received: SuppressionInvalidation[] = [];
    const stop = await listening.subscribeInvalidations!((invalidation) => received.push(invalidation));
    const rawPayloads: string[] = [];
    const rawSubscriber = raw.duplicate();
    rawSubscriber.on('message', (_channel: string, payload: string) => rawPayloads.push(payload));
    await rawSubscriber.subscribe(`${keyPrefix}invalidations`);

    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => suppression(name, 'manual', at(5)));
    await writing.addSuppression(projectId, a!); // created: published
    await writing.addSuppression(projectId, a!); // unchanged: not
    await writing.applyEvents(projectId, [event({ suppression: { ...a!, reason: 'complaint' } })]); // upgraded
    await writing.applyEvents(projectId, [event({ suppression: { ...a!, reason: 'hard_bounce', createdAt: at(9) } })]); // unchanged
    await writing.applyEvents(projectId, [
      event({ suppression: { ...b!, reason: 'hard_bounce' } }),
      event({ suppression: { ...c!, reason: 'complaint' } }),
    ]);
    await writing.removeSuppression(projectId, a!.hash); // existed: published
    await writing.removeSuppression(projectId, a!.hash); // absent: not
    await writing.addSuppression(projectId, d!);

    const expected = [[a!.hash], [a!.hash], [b!.hash, c!.hash], [a!.hash], [d!.hash]].map((hashes) => ({ projectId, hashes }));
    await until(() => received.length >= expected.length && rawPayloads.length >= expected.length, 'invalidations');
    expect(received).toStrictEqual(expected);
    expect(rawPayloads.map((payload) => JSON.parse(payload) as unknown)).toStrictEqual(expected);

    // Stopped: no more calls, while the channel still carries them.
    await stop();
    const e = suppression('e', 'manual', at(5));
    await writing.addSuppression(projectId, e);
    await until(() => rawPayloads.length === expected.length + 1, 'the raw subscriber');
    expect(received).toHaveLength(expected.length);
    await Promise.all([rawSubscriber.quit(), other.quit()]);
  });

  test('close() ends the subscriptions the store opened, not the client', async () => {
    const { keyPrefix } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const channel = `${keyPrefix}invalidations`;
    await store.subscribeInvalidations!(() => {});
    await store.subscribeInvalidations!(() => {});
    expect(await raw.pubsub('NUMSUB', channel)).toStrictEqual([channel, 2]);
    await store.close();
    expect(await raw.pubsub('NUMSUB', channel)).toStrictEqual([channel, 0]);
    expect(await client.ping()).toBe('PONG');
  });

  test('probeInvalidations tells whether every subscription hears the channel now: false while one is resubscribing', async () => {
    const { keyPrefix, projectId } = fresh();
    // A user of its own, so that its connections can be kept from coming back while those already open work.
    const user = `mw-listener-${randomUUID()}`;
    await raw.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all');
    const own = new Redis(url, { username: user, password: 'secret', retryStrategy: () => 20 });
    own.on('error', () => {});
    const store = createRedisStore({ client: own, keyPrefix });
    try {
      expect(await store.probeInvalidations(1000)).toBe(true); // nothing to hear it
      const received: SuppressionInvalidation[] = [];
      await store.subscribeInvalidations((invalidation) => received.push(invalidation));
      await store.subscribeInvalidations(() => {});
      expect(await store.probeInvalidations(1000)).toBe(true);

      // One subscriber's connection drops and cannot come back; the store's own connection still works.
      await raw.call('ACL', 'SETUSER', user, 'off');
      const subscribers = String(await raw.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
        .split('\n')
        .filter((line) => line.includes(` user=${user} `));
      expect(subscribers).toHaveLength(2);
      const id = /(?:^| )id=(\d+)/.exec(subscribers[0]!)![1]!;
      expect(await raw.call('CLIENT', 'KILL', 'ID', id)).toBe(1);
      expect(await store.probeInvalidations(300)).toBe(false);

      await raw.call('ACL', 'SETUSER', user, 'on');
      await until(() => store.probeInvalidations(300), 'the subscriber to be back');
      // Back for real: an invalidation reaches it, and probes never reach a listener.
      const added = suppression('a', 'manual', at(1));
      await createRedisStore({ client, keyPrefix }).addSuppression(projectId, added);
      await until(() => received.length === 1, 'the invalidation');
      expect(received).toStrictEqual([{ projectId, hashes: [added.hash] }]);
    } finally {
      await store.close();
      own.disconnect();
      await raw.call('ACL', 'DELUSER', user);
    }
  });

  test('on a cluster, writes on every master reach one subscriber', async () => {
    const { keyPrefix } = fresh();
    const store = createRedisStore({ client: cluster, keyPrefix });
    const received: SuppressionInvalidation[] = [];
    const stop = await store.subscribeInvalidations!((invalidation) => received.push(invalidation));
    const projects = Array.from({ length: 12 }, () => `project-${randomUUID()}`);
    for (const projectId of projects) await store.addSuppression(projectId, suppression('a', 'manual', at(1)));
    await until(() => received.length === projects.length, 'invalidations from every master');
    expect(received.map((invalidation) => invalidation.projectId).sort()).toStrictEqual([...projects].sort());
    await stop();
  });
});

describe('retention', () => {
  test('messages and dedup keys get a TTL; suppressions, counters and indexes do not', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix, retention: { messagesMs: 60_000 } });
    const m = message('promo', Fact.delivered, at(1));
    const e = {
      ...event({ message: m, suppression: suppression('a', 'hard_bounce', at(1)) }),
      timelineEntry: { id: timelineEntryId('ses:x'), eventKey: 'x', type: 'delivered', provider: 'ses', occurredAt: at(1) } as const,
    };
    await store.applyEvents(projectId, [e]);
    // The timeline expires with its message: both get the retention at every event.
    for (const key of [`m:${m.key}`, `e:${e.key}`, `tl:${m.key}`]) {
      const ttl = await raw.pttl(tag + key);
      expect(ttl, key).toBeGreaterThan(50_000);
      expect(ttl, key).toBeLessThanOrEqual(60_000);
    }
    for (const key of ['s', 'sk', 'sb:', 'mo', 't', 'to', 'mt:promo']) expect(await raw.pttl(tag + key), key).toBe(-1);
  });

  test('expired messages leave the listings, their index entries are dropped when met, counters stay', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix, retention: { messagesMs: 200 } });
    const m1 = message('promo', Fact.delivered, at(1));
    const m2 = message('promo', Fact.sent, at(2));
    const first = [event({ message: m1 }), event({ message: m2 })];
    await store.applyEvents(projectId, first);
    expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([m2, m1]);

    await until(async () => (await raw.exists(`${tag}m:${m1.key}`, `${tag}m:${m2.key}`)) === 0, 'expiry');
    expect(await raw.zcard(`${tag}mo`)).toBe(2);
    expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([]);
    expect(await raw.zcard(`${tag}mo`)).toBe(0);
    expect(await store.listMessages(projectId, { limit: 10, trackingId: 'promo', status: 'delivered' })).toStrictEqual([]);
    expect(await raw.zcard(`${tag}mt:promo`)).toBe(0);
    // Counters are totals of what was recorded: they do not fall when messages expire.
    const row = {
      trackingId: 'promo',
      messages: 2,
      delivered: 1,
      bounced: 0,
      complained: 0,
      lastEventAt: at(2),
      opened: 0,
      clicked: 0,
      unsubscribed: 0,
    };
    expect(await store.listTrackingIds(projectId, { limit: 10 })).toStrictEqual([row]);
    // A late event (its dedup key expired too) for an expired message starts it over, and counts again.
    expect(await store.applyEvents(projectId, [first[0]!])).toStrictEqual(['applied']);
    expect(await store.listMessages(projectId, { limit: 10 })).toStrictEqual([m1]);
    expect(await store.listTrackingIds(projectId, { limit: 10 })).toStrictEqual([{ ...row, messages: 3, delivered: 2 }]);
  });
});

describe('applyEvents in script calls of EVENTS_PER_SCRIPT events', () => {
  interface ScriptCall {
    keys: string[];
    events: { d: number; m?: { k: number; key: string; x?: number; l?: number } }[];
  }

  /**
   * The client, with every applyEvents script call recorded (its KEYS and decoded events); the call
   * numbered `failing` (1-based) is refused as a dropped connection would be, before it reaches Redis.
   */
  function recording(failing?: number): { client: Redis; calls: ScriptCall[] } {
    const calls: ScriptCall[] = [];
    const proxy = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'evalsha' && property !== 'eval') return Reflect.get(target, property, receiver);
        return async (script: string, count: number, ...rest: string[]) => {
          if (script === scripts.applyEvents.sha || script === scripts.applyEvents.lua) {
            calls.push({ keys: rest.slice(0, count), events: JSON.parse(rest[count]!) as ScriptCall['events'] });
            if (calls.length === failing) throw new Error('Connection is closed.');
          }
          return (target[property] as (...args: unknown[]) => Promise<unknown>).call(target, script, count, ...rest);
        };
      },
    });
    return { client: proxy, calls };
  }

  /** `count` events about new messages over 3 tracking IDs, a tenth of them suppressing their recipient. */
  function newEvents(count: number): StoredEvent[] {
    return Array.from({ length: count }, (_, i) => {
      const m = message(`batch-${i % 3}`, i % 10 === 0 ? Fact.hard_bounced : Fact.delivered, at(i));
      const bounced =
        i % 10 === 0 ? { hash: hashEmail(m.recipient), email: m.recipient, reason: 'hard_bounce' as const, createdAt: at(i) } : undefined;
      return event({ message: m, suppression: bounced, key: `sendgrid:event-${i}` });
    });
  }

  test('a batch of 1 000 goes out as calls of EVENTS_PER_SCRIPT, in order, each event whole in one call', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const { client: recorded, calls } = recording();
    const store = createRedisStore({ client: recorded, keyPrefix });
    const events = newEvents(1000);
    expect(await store.applyEvents(projectId, events)).toStrictEqual(events.map((e) => (e.suppression ? 'suppressed' : 'applied')));

    expect(EVENTS_PER_SCRIPT).toBeLessThan(1000);
    expect(calls.map((call) => call.events.length)).toStrictEqual(
      Array.from({ length: 1000 / EVENTS_PER_SCRIPT }, () => EVENTS_PER_SCRIPT),
    );
    // Every key an event names is in the KEYS of its own call: its dedup key, message, timeline, index.
    const sent = calls.flatMap((call) =>
      call.events.map((e) => {
        const named = [e.d, e.m?.k, e.m?.x, e.m?.l].filter((index) => index !== undefined).map((index) => call.keys[index! - 1]);
        expect(named.every((key) => key?.startsWith(tag))).toBe(true);
        return { dedup: named[0], message: e.m?.key };
      }),
    );
    expect(sent).toStrictEqual(events.map((e) => ({ dedup: `${tag}e:${e.key}`, message: e.message!.key })));
    expect(decodeRow(await raw.hget(`${tag}t`, 'batch-0'))).toMatchObject({ messages: 334, bounced: 34, delivered: 300 });
  });

  test('a failure in the second call leaves the first applied; the retry counts nothing twice', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const failing = recording(2);
    const events = newEvents(3 * EVENTS_PER_SCRIPT);
    await expect(createRedisStore({ client: failing.client, keyPrefix }).applyEvents(projectId, events)).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    // Awaited in turn: the call after the failed one was never sent.
    expect(failing.calls).toHaveLength(2);
    const applied = await raw.exists(...events.map((e) => `${tag}e:${e.key}`));
    expect(applied).toBe(EVENTS_PER_SCRIPT);
    expect(await raw.exists(`${tag}e:${events[EVENTS_PER_SCRIPT - 1]!.key}`, `${tag}e:${events[EVENTS_PER_SCRIPT]!.key}`)).toBe(1);

    const store = createRedisStore({ client, keyPrefix });
    const retried = await store.applyEvents(projectId, events);
    expect(retried.slice(0, EVENTS_PER_SCRIPT)).toStrictEqual(Array.from({ length: EVENTS_PER_SCRIPT }, () => 'duplicate'));
    expect(retried.slice(EVENTS_PER_SCRIPT)).toStrictEqual(
      events.slice(EVENTS_PER_SCRIPT).map((e) => (e.suppression ? 'suppressed' : 'applied')),
    );
    const rows = await Promise.all(['batch-0', 'batch-1', 'batch-2'].map(async (id) => decodeRow(await raw.hget(`${tag}t`, id))));
    expect(rows.map((row) => row.messages)).toStrictEqual([100, 100, 100]);
    expect(rows.reduce((sum, row) => sum + row.bounced, 0)).toBe(30);
    expect(await raw.hlen(`${tag}s`)).toBe(30);
    expect(await raw.zcard(`${tag}mo`)).toBe(300);
  });

  test('a malformed event in a later call fails the batch before any call is sent', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const { client: recorded, calls } = recording();
    const events = newEvents(2 * EVENTS_PER_SCRIPT);
    const last = events.at(-1)!;
    events[events.length - 1] = { ...last, message: { ...last.message!, lastEventAt: 1.5 } };
    await expect(createRedisStore({ client: recorded, keyPrefix }).applyEvents(projectId, events)).rejects.toThrow(RangeError);
    expect(calls).toHaveLength(0);
    expect(await scanKeys(raw, `${tag}*`)).toStrictEqual([]);
  });
});

describe('scan budget', () => {
  test('a sparse filter resumes across calls until the page is full or the index ends', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client, keyPrefix, scanBudget: 3 });
    const messages = Array.from({ length: 20 }, (_, i) =>
      message(`id-${String(i).padStart(2, '0')}`, i % 7 === 0 ? Fact.complained : Fact.sent, at(100 - i)),
    );
    await store.applyEvents(
      projectId,
      messages.map((m) => event({ message: m })),
    );
    const complained = messages.filter((m) => m.facts === Fact.complained);
    expect(await store.listMessages(projectId, { limit: 10, status: 'complained' })).toStrictEqual(complained);
    expect(await store.listMessages(projectId, { limit: 2, status: 'complained' })).toStrictEqual(complained.slice(0, 2));
    expect((await store.listTrackingIds(projectId, { limit: 10, search: '-1' })).map((row) => row.trackingId)).toStrictEqual(
      Array.from({ length: 10 }, (_, i) => `id-1${i}`),
    );
    expect((await store.listTrackingIds(projectId, { limit: 10, search: '9' })).map((row) => row.trackingId)).toStrictEqual([
      'id-09',
      'id-19',
    ]);
  });
});

describe('tracking-ID search blocks', () => {
  /** Every block holds exactly the search keys of its range of the ID order (read raw), its count right. */
  async function expectBlocksMatchOrder(tag: string): Promise<number> {
    const heads = (await raw.zrangeBuffer(`${tag}tk`, 0, -1)).map((head) => head.toString());
    const members = await raw.zrangeBuffer(`${tag}to`, 0, -1);
    expect(heads[0]).toBe('');
    // One STRING per head, and no other.
    expect(await scanKeys(raw, `${tag}tb:*`)).toStrictEqual(heads.map((head) => `${tag}tb:${head}`).sort());
    const blocks = await Promise.all(heads.map((head) => raw.getBuffer(`${tag}tb:${head}`)));
    heads.forEach((head, j) => {
      const next = heads[j + 1];
      const inRange = members.filter(
        (m) => Buffer.compare(m, Buffer.from(head)) >= 0 && (next === undefined || Buffer.compare(m, Buffer.from(next)) < 0),
      );
      const parts = blocks[j]!.toString('latin1').split('\xfe');
      // The count in 3 digits, then the keys.
      expect(parts[0]).toMatch(/^\d{3}$/);
      const count = Number(parts.shift());
      const keys = parts.map((key) => Buffer.from(key, 'latin1').toString()).sort();
      // No NUL in these IDs: a member is the ID, NUL, the search key.
      expect(keys).toStrictEqual(inRange.map((m) => m.subarray(m.indexOf(0) + 1).toString()).sort());
      expect(count).toBe(keys.length);
    });
    return heads.length;
  }

  /** The page a search must give: the IDs whose lower-case form holds it, in code-point order. */
  const model = (ids: Iterable<string>, search: string, limit: number) =>
    [...ids]
      .filter((id) => id.toLowerCase().includes(search))
      .sort(compareCodePoints)
      .slice(0, limit);

  const searches = ['zzz', '-7', 'x-1', 'id-00', 'ID-0', 'b'];

  async function expectSearches(store: Store, projectId: string, ids: Iterable<string>): Promise<void> {
    for (const search of searches) {
      const found = await store.listTrackingIds(projectId, { limit: 25, search });
      expect(
        found.map((row) => row.trackingId),
        search,
      ).toStrictEqual(model(ids, search, 25));
      const after = found.at(-1)?.trackingId;
      if (after !== undefined) {
        const next = await store.listTrackingIds(projectId, { limit: 25, search, after });
        expect(
          next.map((row) => row.trackingId),
          `${search} after ${after}`,
        ).toStrictEqual(
          model(
            [...ids].filter((id) => compareCodePoints(id, after) > 0),
            search,
            25,
          ),
        );
      }
    }
  }

  /** One new message per ID; `leave` moves each given ID's message to a smaller ID, so its row goes. */
  const placed = (ids: string[]) => ids.map((id) => ({ id, message: message(id, Fact.delivered, at(1)) }));
  const leave = (messages: { id: string; message: MessageRecord }[]) =>
    messages.map(({ message: m }) => event({ message: { ...m, trackingId: `A-${m.trackingId}`, facts: Fact.opened } }));

  test('blocks split as IDs arrive and go as rows leave; searches match the model throughout', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix, scanBudget: 300 });
    const ids = new Set<string>();
    const rows = placed(Array.from({ length: 1500 }, (_, i) => `Id-${String((i * 7919) % 1500).padStart(4, '0')}-x-${i % 13}`));
    // Arriving out of order, in three batches.
    for (let from = 0; from < rows.length; from += 500) {
      const batch = rows.slice(from, from + 500);
      await store.applyEvents(
        projectId,
        batch.map(({ message: m }) => event({ message: m })),
      );
      for (const { id } of batch) ids.add(id);
      expect(await expectBlocksMatchOrder(tag)).toBeGreaterThan(1);
      await expectSearches(store, projectId, ids);
    }
    // Rows leave: every other one of the first 600 in order, and a whole run (whole blocks empty and go).
    const sorted = [...rows].sort((a, b) => compareCodePoints(a.id, b.id));
    const leaving = [...sorted.slice(0, 600).filter((_, i) => i % 2 === 0), ...sorted.slice(900, 1400)];
    await store.applyEvents(projectId, leave(leaving));
    for (const { id } of leaving) {
      ids.delete(id);
      ids.add(`A-${id}`);
    }
    expect(await raw.hexists(`${tag}t`, leaving[0]!.id)).toBe(0);
    await expectBlocksMatchOrder(tag);
    await expectSearches(store, projectId, ids);
  });

  test('a search of IDs stored before blocks answers even when Redis refuses the build', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix });
    const rows = placed(['Promo-1', 'promo-2', 'other']);
    await store.applyEvents(
      projectId,
      rows.map(({ message: m }) => event({ message: m })),
    );
    await raw.del(`${tag}tk`, `${tag}tb:`);
    // The build is the only EVALSHA of a search; a client that refuses it, as a full Redis would.
    const refusing = new Proxy(client, {
      get: (target, property, receiver) =>
        property === 'evalsha' || property === 'eval'
          ? () => Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'."))
          : Reflect.get(target, property, receiver),
    });
    const found = await createRedisStore({ client: refusing, keyPrefix }).listTrackingIds(projectId, { limit: 10, search: 'promo' });
    expect(found.map((row) => row.trackingId)).toStrictEqual(['Promo-1', 'promo-2']);
    expect(await raw.exists(`${tag}tk`, `${tag}tc`)).toBe(0);
  });

  test('IDs stored before blocks existed are searched at once; search pages build their blocks while writes go on', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix, scanBudget: 400 });
    const ids = new Set<string>();
    const rows = placed(Array.from({ length: 2000 }, (_, i) => `Id-${String(i).padStart(4, '0')}-x-${i % 13}`));
    await store.applyEvents(
      projectId,
      rows.map(({ message: m }) => event({ message: m })),
    );
    for (const { id } of rows) ids.add(id);
    // As the version before blocks left it: the ID order and rows, no blocks.
    await raw.del(`${tag}tk`, ...(await scanKeys(raw, `${tag}tb:*`)));

    let pages = 0;
    while ((await raw.exists(`${tag}tk`)) === 0 || (await raw.exists(`${tag}tc`)) === 1) {
      const search = searches[pages % searches.length]!;
      const found = await store.listTrackingIds(projectId, { limit: 25, search });
      expect(
        found.map((row) => row.trackingId),
        search,
      ).toStrictEqual(model(ids, search, 25));
      pages++;
      // Writes between build steps: new IDs on both sides of the cursor, and rows that leave.
      const arriving = placed([`Id-0${pages}50-new`, `Id-1${pages}50-new`, `Id-9${pages}-new`]);
      const leaving = rows.filter((_, i) => i % 400 === 10 * pages + 3);
      await store.applyEvents(projectId, [...arriving.map(({ message: m }) => event({ message: m })), ...leave(leaving)]);
      for (const { id } of arriving) ids.add(id);
      for (const { id } of leaving) {
        ids.delete(id);
        ids.add(`A-${id}`);
      }
      expect(pages).toBeLessThan(20);
    }
    // Each search page built 400 IDs: 2 000 and those added meanwhile take a few pages.
    expect(pages).toBeGreaterThan(3);
    expect(await expectBlocksMatchOrder(tag)).toBeGreaterThan(5);
    await expectSearches(store, projectId, ids);
  });
});

describe('tracking-ID search over thousands of IDs', () => {
  test('rare and common matches, across resumed calls, in code-point order', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const store = createRedisStore({ client, keyPrefix, scanBudget: 1000 });
    // 1 500 IDs that never match 'x', then 11 000 that all do; a few of each match 'needle'.
    const ids = [
      ...Array.from({ length: 1500 }, (_, i) => `a-${i}${i % 500 === 7 ? '-Needle' : ''}`),
      ...Array.from({ length: 11_000 }, (_, i) => `b-x-${i}${i % 3000 === 11 ? '-NEEDLE' : ''}`),
    ];
    for (let from = 0; from < ids.length; from += 1000) {
      await store.applyEvents(
        projectId,
        ids.slice(from, from + 1000).map((id, i) => event({ message: message(id, Fact.sent, at(from + i)) })),
      );
    }
    const sorted = [...ids].sort(compareCodePoints);
    const expected = (search: string, after?: string, limit = 51) =>
      sorted.filter((id) => id.toLowerCase().includes(search) && (after === undefined || compareCodePoints(id, after) > 0)).slice(0, limit);
    const listed = async (search: string, after?: string, limit = 51) =>
      (await store.listTrackingIds(projectId, { limit, search, ...(after === undefined ? {} : { after }) })).map((row) => row.trackingId);

    expect(await raw.hlen(`${tag}t`)).toBe(ids.length);
    expect(expected('needle')).toHaveLength(7);
    expect(await listed('needle')).toStrictEqual(expected('needle'));
    expect(await listed('needle', 'a-507-needle')).toStrictEqual(expected('needle', 'a-507-needle'));
    expect(await listed('needle', 'a-507-Needle', 2)).toStrictEqual(expected('needle', 'a-507-Needle', 2));
    expect(await listed('x')).toStrictEqual(expected('x'));
    expect(await listed('x', 'b-x-5')).toStrictEqual(expected('x', 'b-x-5'));
    expect(await listed('-1')).toStrictEqual(expected('-1'));
    expect(await listed('no such text')).toStrictEqual([]);
  });
});
