// claimWebhookToken on a real Redis and a real Redis Cluster: what is stored (read back through raw
// commands), expiry by Redis's own clock at the absolute expiresAt (PXAT), and races between clients.
import { createHash, randomUUID } from 'node:crypto';
import type { Store } from '@mailwarden/core';
import { Redis, type Cluster } from 'ioredis';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { clusterClient } from './cluster-client.js';

const url = inject('redisUrl');
/** The side channel: raw commands only. */
const raw = new Redis(url);
/** Four clients, as four app instances would have. */
const clients = [new Redis(url), new Redis(url), new Redis(url), new Redis(url)] as const;
const cluster = clusterClient(inject('redisClusterNodes'));
/** A second cluster client: another instance's connections to the same masters. */
const otherCluster = clusterClient(inject('redisClusterNodes'));
afterAll(() => Promise.all([raw.quit(), ...clients.map((client) => client.quit()), cluster.quit(), otherCluster.quit()]));

const digestOf = (body: string): string => createHash('sha256').update(body).digest('hex');
const [D1, D2] = [digestOf('body 1'), digestOf('body 2')] as const;
const token = (): string => `mailgun:${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '').slice(0, 18)}`;
const inAnHour = (): number => Date.now() + 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function fresh() {
  const keyPrefix = `tokens:${randomUUID()}:`;
  const projectId = `project-${randomUUID()}`;
  return { keyPrefix, projectId, tag: `${keyPrefix}{${projectId}}:` };
}

const claimOf = (store: Store) => store.claimWebhookToken!.bind(store);

/** Every key under a prefix, through SCAN (never KEYS). */
async function scanKeys(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

describe('claimWebhookToken on Redis', () => {
  test("answers 'first', then 'same' or 'conflict'; the key holds the first digest and expires at expiresAt", async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const claim = claimOf(createRedisStore({ client: clients[0], keyPrefix }));
    const t = token();
    const expiresAt = inAnHour();
    expect(await claim(projectId, t, D1, expiresAt)).toBe('first');
    expect(await claim(projectId, t, D1, expiresAt)).toBe('same');
    expect(await claim(projectId, t, D2, expiresAt)).toBe('conflict');
    expect(await claim(projectId, t, D1, expiresAt + 5000)).toBe('same');

    // One STRING under the project's tag, with the absolute expiry it was first claimed with.
    expect(await raw.get(`${tag}wt:${t}`)).toBe(D1);
    expect(await raw.pexpiretime(`${tag}wt:${t}`)).toBe(expiresAt);
    expect(await raw.exists(`${tag}wt:${t}`)).toBe(1);
  });

  test('projects and key prefixes are isolated', async () => {
    const { keyPrefix, projectId } = fresh();
    const store = createRedisStore({ client: clients[0], keyPrefix });
    const elsewhere = createRedisStore({ client: clients[1], keyPrefix: `${keyPrefix}other:` });
    const t = token();
    expect(await store.claimWebhookToken!(projectId, t, D1, inAnHour())).toBe('first');
    expect(await store.claimWebhookToken!(`${projectId}-2`, t, D2, inAnHour())).toBe('first');
    expect(await elsewhere.claimWebhookToken!(projectId, t, D2, inAnHour())).toBe('first');
    expect(await store.claimWebhookToken!(projectId, t, D1, inAnHour())).toBe('same');
    expect(await store.claimWebhookToken!(`${projectId}-2`, t, D1, inAnHour())).toBe('conflict');
    expect(await elsewhere.claimWebhookToken!(projectId, t, D1, inAnHour())).toBe('conflict');
  });

  test('a record is forgotten once its expiresAt has passed, by the server clock', async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const claim = claimOf(createRedisStore({ client: clients[0], keyPrefix }));
    const t = token();
    expect(await claim(projectId, t, D1, Date.now() + 50)).toBe('first');
    expect(await claim(projectId, t, D2, Date.now() + 50)).toBe('conflict');
    await sleep(150);
    expect(await raw.exists(`${tag}wt:${t}`)).toBe(0);
    expect(await claim(projectId, t, D2, inAnHour())).toBe('first');
    expect(await claim(projectId, t, D1, inAnHour())).toBe('conflict');
  });

  test('an expiresAt already past is answered, and nothing is kept (PXAT in the past deletes; 0 and less are skipped)', async () => {
    const { keyPrefix, projectId } = fresh();
    const claim = claimOf(createRedisStore({ client: clients[0], keyPrefix }));
    for (const expiresAt of [Date.now() - 1000, 1, 0, -1, -Number.MAX_SAFE_INTEGER]) {
      const t = token();
      expect(await claim(projectId, t, D1, expiresAt)).toBe('first');
      expect(await claim(projectId, t, D2, expiresAt)).toBe('first');
    }
    expect(await scanKeys(keyPrefix)).toStrictEqual([]);
    // The far end of the range is a valid PXAT too.
    const t = token();
    expect(await claim(projectId, t, D1, Number.MAX_SAFE_INTEGER)).toBe('first');
    expect(await claim(projectId, t, D1, Number.MAX_SAFE_INTEGER)).toBe('same');
  });

  test('a time that is not an integer, or a project ID with a brace, is refused before Redis is asked', async () => {
    const { keyPrefix, projectId } = fresh();
    const claim = claimOf(createRedisStore({ client: clients[0], keyPrefix }));
    await expect(claim(projectId, token(), D1, 1.5)).rejects.toThrow(RangeError);
    await expect(claim(projectId, token(), D1, Number.NaN)).rejects.toThrow(RangeError);
    await expect(claim('a{b}', token(), D1, inAnHour())).rejects.toThrow(TypeError);
    expect(await scanKeys(keyPrefix)).toStrictEqual([]);
  });

  test.each([
    ['one client', () => [clients[0]] as (Redis | Cluster)[]],
    ['four clients', () => [...clients] as (Redis | Cluster)[]],
    ['a cluster, from two clients', () => [cluster, otherCluster] as (Redis | Cluster)[]],
  ])('20 concurrent claims of one token through %s: exactly one first', async (_, connections) => {
    const { keyPrefix, projectId } = fresh();
    const stores = connections().map((client) => createRedisStore({ client, keyPrefix }));
    const storeOf = (i: number) => stores[i % stores.length]!;

    const same = token();
    const sameAnswers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => storeOf(i).claimWebhookToken!(projectId, same, D1, inAnHour())),
    );
    expect(sameAnswers.filter((answer) => answer === 'first')).toHaveLength(1);
    expect(sameAnswers.filter((answer) => answer === 'same')).toHaveLength(19);

    const contested = token();
    const digests = Array.from({ length: 20 }, (_, i) => digestOf(`body ${i}`));
    const answers = await Promise.all(digests.map((digest, i) => storeOf(i).claimWebhookToken!(projectId, contested, digest, inAnHour())));
    expect(answers.filter((answer) => answer === 'first')).toHaveLength(1);
    expect(answers.filter((answer) => answer === 'conflict')).toHaveLength(19);
    const winner = digests[answers.indexOf('first')]!;
    expect(await storeOf(0).claimWebhookToken!(projectId, contested, winner, inAnHour())).toBe('same');
  });

  test("on a cluster, a token's key is in its project's slot, expires there, and projects on other masters are apart", async () => {
    const { keyPrefix, projectId, tag } = fresh();
    const claim = claimOf(createRedisStore({ client: cluster, keyPrefix }));
    const t = token();
    expect(await claim(projectId, t, D1, Date.now() + 50)).toBe('first');
    expect(await claim(projectId, t, D1, Date.now() + 50)).toBe('same');
    const [node] = cluster.nodes('master');
    expect(await node!.cluster('KEYSLOT', `${tag}wt:${t}`)).toBe(await node!.cluster('KEYSLOT', `{${projectId}}`));
    expect(await cluster.get(`${tag}wt:${t}`)).toBe(D1);
    await sleep(150);
    expect(await claim(projectId, t, D2, inAnHour())).toBe('first');

    // Projects spread over the masters; each answers for itself.
    const projects = Array.from({ length: 12 }, () => `project-${randomUUID()}`);
    const shared = token();
    expect(await Promise.all(projects.map((id, i) => claim(id, shared, digestOf(String(i)), inAnHour())))).toStrictEqual(
      projects.map(() => 'first'),
    );
    expect(await Promise.all(projects.map((id, i) => claim(id, shared, digestOf(String(i)), inAnHour())))).toStrictEqual(
      projects.map(() => 'same'),
    );
  });
});
