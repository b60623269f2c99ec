// claimWebhookToken on a real PostgreSQL: the rows it writes (read through SQL), races between
// instances, including the one a single statement cannot see (a claim committed after the statement's
// snapshot), and the purge of expired tokens.
import { createHash, randomUUID } from 'node:crypto';
import { isMailwardenError } from '@mailwarden/core';
import { Fact } from '@mailwarden/core/store';
import { afterAll, describe, expect, test } from 'vitest';
import { createPostgresStore } from '../src/index.js';
import { connect, freshStore } from './database.js';

const sql = connect({ max: 8 });
afterAll(() => sql.end());

const digestOf = (body: string): string => createHash('sha256').update(body).digest('hex');
const [D1, D2] = [digestOf('body 1'), digestOf('body 2')] as const;
const token = (): string => `mailgun:${createHash('sha256').update(randomUUID()).digest('hex').slice(0, 50)}`;
const LATER = Date.UTC(2999, 0, 1);
const DAY = 86_400_000;

async function rows(schema: string) {
  return [
    ...(await sql.unsafe(
      `SELECT project_id, token, digest, expires_at::float8 AS expires_at FROM "${schema}".webhook_tokens ORDER BY project_id, token`,
    )),
  ];
}

/** Waits until a session named `name` waits for a lock. */
async function untilWaiting(name: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const [row] = await sql.unsafe(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, [name]);
    if (row !== undefined) return;
    if (tries > 250) throw new Error('the claim never waited for the other transaction');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('claimWebhookToken on PostgreSQL', () => {
  test("answers 'first', then 'same' or 'conflict'; one row holds the first digest and expiry", async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const t = token();
      expect(await store.claimWebhookToken('acme', t, D1, LATER)).toBe('first');
      expect(await store.claimWebhookToken('acme', t, D1, LATER)).toBe('same');
      expect(await store.claimWebhookToken('acme', t, D2, LATER)).toBe('conflict');
      expect(await store.claimWebhookToken('acme', t, D1, LATER + 1)).toBe('same');
      expect(await store.claimWebhookToken('acme', 'a:b:ünï🙂', D2, 5)).toBe('first');
      expect(await rows(schema)).toStrictEqual([
        { project_id: 'acme', token: 'a:b:ünï🙂', digest: D2, expires_at: 5 },
        { project_id: 'acme', token: t, digest: D1, expires_at: LATER },
      ]);
    } finally {
      await drop();
    }
  });

  test('projects and schemas are isolated', async () => {
    const a = await freshStore(sql);
    const b = await freshStore(sql);
    try {
      const t = token();
      expect(await a.store.claimWebhookToken('acme', t, D1, LATER)).toBe('first');
      expect(await a.store.claimWebhookToken('other', t, D2, LATER)).toBe('first');
      expect(await b.store.claimWebhookToken('acme', t, D2, LATER)).toBe('first');
      expect(await a.store.claimWebhookToken('acme', t, D2, LATER)).toBe('conflict');
      expect(await a.store.claimWebhookToken('other', t, D2, LATER)).toBe('same');
      expect(await b.store.claimWebhookToken('acme', t, D1, LATER)).toBe('conflict');
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  test('a time that is not an integer is refused before PostgreSQL is asked', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      await expect(store.claimWebhookToken('acme', token(), D1, 1.5)).rejects.toThrow(RangeError);
      expect(await rows(schema)).toStrictEqual([]);
    } finally {
      await drop();
    }
  });

  test('20 concurrent claims of one token, over one pool and over four instances: exactly one first', async () => {
    const { schema, store, drop } = await freshStore(sql);
    const instances = Array.from({ length: 4 }, () => connect({ max: 5 }));
    const stores = instances.map((client) => createPostgresStore({ sql: client, schema }));
    try {
      for (const storeOf of [() => store, (i: number) => stores[i % stores.length]!]) {
        const same = token();
        const sameAnswers = await Promise.all(Array.from({ length: 20 }, (_, i) => storeOf(i).claimWebhookToken('acme', same, D1, LATER)));
        expect(sameAnswers.filter((answer) => answer === 'first')).toHaveLength(1);
        expect(sameAnswers.filter((answer) => answer === 'same')).toHaveLength(19);

        const contested = token();
        const digests = Array.from({ length: 20 }, (_, i) => digestOf(`body ${i}`));
        const answers = await Promise.all(digests.map((digest, i) => storeOf(i).claimWebhookToken('acme', contested, digest, LATER)));
        expect(answers.filter((answer) => answer === 'first')).toHaveLength(1);
        expect(answers.filter((answer) => answer === 'conflict')).toHaveLength(19);
        const [row] = (await rows(schema)).filter((r) => r.token === contested);
        expect(row!.digest).toBe(digests[answers.indexOf('first')]);
      }
    } finally {
      await Promise.all(instances.map((client) => client.end()));
      await drop();
    }
  });

  // The race a one-statement claim cannot see: another instance's claim is in flight when this one
  // starts, so ON CONFLICT waits for it, and it commits after this statement took its snapshot.
  describe('a claim that waits for a concurrent claim of the same token', () => {
    /** Claims a token that another transaction has inserted and commits once the claim waits for it. */
    async function race(schema: string, digest: string): Promise<{ answer: string; statements: number }> {
      const name = `mw-claim-${randomUUID().slice(0, 8)}`;
      const waiting = connect({ max: 1, connection: { application_name: name } });
      let statements = 0;
      const counted = new Proxy(waiting, {
        get: (target, property, receiver) =>
          property === 'unsafe'
            ? (...args: Parameters<typeof target.unsafe>) => (statements++, target.unsafe(...args))
            : Reflect.get(target, property, receiver),
      });
      const store = createPostgresStore({ sql: counted, schema });
      const t = token();
      try {
        // In an array, so that begin() commits without waiting for the claim (which waits for the commit).
        const [pending] = await sql.begin(async (tx) => {
          await tx.unsafe(`INSERT INTO "${schema}".webhook_tokens VALUES ('acme', $1, $2, $3)`, [t, D1, LATER]);
          const claim = store.claimWebhookToken('acme', t, digest, LATER);
          await untilWaiting(name);
          return [claim];
        });
        return { answer: await pending!, statements };
      } finally {
        await waiting.end();
      }
    }

    test("answers from the row once the other commits: 'same' or 'conflict', never a second 'first'", async () => {
      const { schema, drop } = await freshStore(sql);
      try {
        // The first statement inserted nothing and could not read the row; the second one did.
        expect(await race(schema, D1)).toStrictEqual({ answer: 'same', statements: 2 });
        expect(await race(schema, D2)).toStrictEqual({ answer: 'conflict', statements: 2 });
      } finally {
        await drop();
      }
    });

    test("is 'first' when the other rolls back", async () => {
      const { schema, drop } = await freshStore(sql);
      const name = `mw-claim-${randomUUID().slice(0, 8)}`;
      const waiting = connect({ max: 1, connection: { application_name: name } });
      const store = createPostgresStore({ sql: waiting, schema });
      try {
        const t = token();
        let pending: Promise<string> | undefined;
        await sql
          .begin(async (tx) => {
            await tx.unsafe(`INSERT INTO "${schema}".webhook_tokens VALUES ('acme', $1, $2, $3)`, [t, D1, LATER]);
            pending = store.claimWebhookToken('acme', t, D2, LATER);
            await untilWaiting(name);
            throw new Error('rolled back');
          })
          .catch((error: unknown) => {
            if (!(error instanceof Error && error.message === 'rolled back')) throw error;
          });
        expect(await pending).toBe('first');
        expect((await rows(schema)).map((row) => row.digest)).toStrictEqual([D2]);
      } finally {
        await waiting.end();
        await drop();
      }
    });
  });

  test('an unreachable server is store_unavailable', async () => {
    const unreachable = connect({ host: '127.0.0.1', port: 1, max: 1, connect_timeout: 2, backoff: () => 0 });
    try {
      const error = await createPostgresStore({ sql: unreachable })
        .claimWebhookToken('acme', token(), D1, LATER)
        .catch((thrown: unknown) => thrown);
      expect(isMailwardenError(error) && error.code).toBe('store_unavailable');
    } finally {
      await unreachable.end({ timeout: 0 });
    }
  });
});

describe('purgeExpired and webhook tokens', () => {
  test('without a message retention, deletes tokens whose expiresAt is before now and keeps the rest', async () => {
    const { schema, store, drop } = await freshStore(sql);
    try {
      const now = Date.UTC(2025, 5, 1);
      const [gone, edge, live, otherGone, otherLive] = [token(), token(), token(), token(), token()];
      await store.claimWebhookToken('acme', gone, D1, now - 1);
      await store.claimWebhookToken('acme', edge, D1, now);
      await store.claimWebhookToken('acme', live, D1, now + DAY);
      await store.claimWebhookToken('other', otherGone, D1, now - DAY);
      await store.claimWebhookToken('other', otherLive, D1, now + 1);
      await store.applyEvents('acme', [
        {
          key: 'e1',
          message: {
            key: 'm1',
            provider: 'ses',
            messageId: 'm1',
            recipient: 'r@example.com',
            trackingId: null,
            stream: null,
            facts: Fact.sent,
            firstEventAt: 0,
            lastEventAt: 0,
          },
          trackingIdSearchKey: null,
          suppression: null,
        },
      ]);

      // Still "messages deleted": none, with no retention; the tokens go anyway.
      expect(await store.purgeExpired(now)).toBe(0);
      expect((await rows(schema)).map((row) => row.token).sort()).toStrictEqual([edge, live, otherLive].sort());
      expect(await store.listMessages('acme', { limit: 10 })).toHaveLength(1);

      // A purged token is forgotten: claimed again, it is first.
      expect(await store.claimWebhookToken('acme', gone, D2, now + DAY)).toBe('first');
      expect(await store.claimWebhookToken('acme', edge, D2, now + DAY)).toBe('conflict');
      expect(await store.purgeExpired(now + 2 * DAY)).toBe(0);
      expect(await rows(schema)).toStrictEqual([]);
    } finally {
      await drop();
    }
  });

  test('with a retention, messages and tokens are purged each by their own clock, in batches', async () => {
    const { schema, store, drop } = await freshStore(sql, { retention: { messagesMs: DAY } });
    try {
      const now = Date.now();
      await store.applyEvents('acme', [
        {
          key: 'e1',
          message: {
            key: 'm1',
            provider: 'ses',
            messageId: 'm1',
            recipient: 'r@example.com',
            trackingId: null,
            stream: null,
            facts: Fact.sent,
            firstEventAt: now - 2 * DAY,
            lastEventAt: now - 2 * DAY,
          },
          trackingIdSearchKey: null,
          suppression: null,
        },
      ]);
      // 25 000 expired tokens (three statements of the sweep) and one live one; a token expiring after
      // the message retention's cut-off but before now goes too.
      await sql.unsafe(
        `INSERT INTO "${schema}".webhook_tokens SELECT 'acme', 'mailgun:' || i, $1, $2 FROM generate_series(1, 25000) AS i`,
        [D1, now - DAY / 2],
      );
      await store.claimWebhookToken('acme', 'live', D1, now + 1);
      expect(await store.purgeExpired(now)).toBe(1);
      expect((await rows(schema)).map((row) => row.token)).toStrictEqual(['live']);
    } finally {
      await drop();
    }
  });
});
