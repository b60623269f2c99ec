import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MailwardenError, type ApiKeyEntry, type ApiKeys } from '@mailwarden/core';
import { createApiKeyCheck } from '../src/http/api-keys.js';
import { expectMailwardenError } from './expect-mailwarden-error.js';

// docs/http.md, "Authentication" and "Scopes": the three forms of `apiKeys`, checked at startup.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const all = ['check', 'read', 'write', 'admin'];

describe('createApiKeyCheck', () => {
  it('a map key has every scope and is named key- and 8 hex of its SHA-256', async () => {
    const check = createApiKeyCheck({ 'secret-acme': 'acme', 'secret-both': ['acme', 'globex'], 'secret-admin': '*' });
    expect(await check('secret-acme', 'acme')).toEqual({ name: `key-${sha256('secret-acme').slice(0, 8)}`, scopes: all });
    expect((await check('secret-both', 'globex')).scopes).toEqual(all);
    expect((await check('secret-admin', 'initech')).name).toBe(`key-${sha256('secret-admin').slice(0, 8)}`);
    await expectMailwardenError(() => check('secret-acme', 'globex'), 'forbidden');
    await expectMailwardenError(() => check('secret-nope', 'acme'), 'invalid_api_key');
    await expectMailwardenError(() => check(undefined, 'acme'), 'missing_api_key');
    await expectMailwardenError(() => check('', 'acme'), 'missing_api_key');
  });

  it('a listed key opens its projects with its scopes, in the canonical order, each once; without scopes, all four', async () => {
    const check = createApiKeyCheck([
      { name: 'sending-app', key: 'k-send', projects: ['acme'], scopes: ['check'] },
      { name: 'ops', key: 'k-ops', projects: '*', scopes: ['admin', 'read', 'admin'] },
      { name: 'legacy', key: 'k-legacy', projects: ['acme', 'globex'] },
    ]);
    expect(await check('k-send', 'acme')).toEqual({ name: 'sending-app', scopes: ['check'] });
    await expectMailwardenError(() => check('k-send', 'globex'), 'forbidden');
    expect(await check('k-ops', 'anything')).toEqual({ name: 'ops', scopes: ['read', 'admin'] });
    expect(await check('k-legacy', 'globex')).toEqual({ name: 'legacy', scopes: all });
    await expectMailwardenError(() => check('K-SEND', 'acme'), 'invalid_api_key');
  });

  it('a hashed key authenticates the key whose SHA-256 it is, and nothing else', async () => {
    const check = createApiKeyCheck([{ name: 'hashed', hash: `sha256:${sha256('mw_s3cret')}`, projects: ['acme'], scopes: ['read'] }]);
    expect(await check('mw_s3cret', 'acme')).toEqual({ name: 'hashed', scopes: ['read'] });
    // The hash text itself is no key.
    await expectMailwardenError(() => check(`sha256:${sha256('mw_s3cret')}`, 'acme'), 'invalid_api_key');
    await expectMailwardenError(() => check(sha256('mw_s3cret'), 'acme'), 'invalid_api_key');
  });

  it('a resolver may answer a grant, or projects as before (every scope, the unnamed name)', async () => {
    const check = createApiKeyCheck(async (key) => {
      if (key === 'k-grant') return { name: 'from-db', projects: ['acme'], scopes: ['write'] };
      if (key === 'k-plain') return 'acme';
      if (key === 'k-list') return ['acme'];
      return undefined;
    });
    expect(await check('k-grant', 'acme')).toEqual({ name: 'from-db', scopes: ['write'] });
    await expectMailwardenError(() => check('k-grant', 'globex'), 'forbidden');
    expect(await check('k-plain', 'acme')).toEqual({ name: `key-${sha256('k-plain').slice(0, 8)}`, scopes: all });
    expect((await check('k-list', 'acme')).scopes).toEqual(all);
    await expectMailwardenError(() => check('k-none', 'acme'), 'invalid_api_key');
  });

  it("a resolver's bad grant is its own bug: a TypeError (the handler's 500), not a caller's 4xx", async () => {
    const bad = [
      { name: 'has space', projects: '*' },
      { name: 'ok', projects: [] },
      { name: 'ok', projects: '*', scopes: [] },
      { name: 'ok', projects: '*', scopes: ['delete'] },
    ];
    for (const grant of bad) {
      const check = createApiKeyCheck(async () => grant as never);
      await expect(check('any', 'acme')).rejects.toBeInstanceOf(TypeError);
    }
  });

  describe('refuses a bad configuration when made, with invalid_request naming the entry', () => {
    const entry = (fields: Partial<Record<keyof ApiKeyEntry, unknown>>) =>
      ({ name: 'a', key: 'k', projects: '*', ...fields }) as ApiKeyEntry;
    const cases: [string, ApiKeys, string][] = [
      ['an empty map key', { '': 'acme' }, 'empty'],
      ['a duplicate name', [entry({ key: 'k1' }), entry({ key: 'k2' })], 'apiKeys[1].name'],
      ['the same key twice', [entry({ name: 'a' }), entry({ name: 'b' })], 'apiKeys[1]'],
      [
        'a key and its hash, listed twice',
        [entry({ name: 'a' }), entry({ name: 'b', key: undefined, hash: `sha256:${sha256('k')}` })],
        'apiKeys[1]',
      ],
      ['a bad name', [entry({ name: 'sending app' })], 'apiKeys[0].name'],
      ['a name too long', [entry({ name: 'x'.repeat(65) })], 'apiKeys[0].name'],
      ['an empty name', [entry({ name: '' })], 'apiKeys[0].name'],
      ['an empty key', [entry({ key: '' })], 'apiKeys[0].key'],
      ['neither key nor hash', [entry({ key: undefined })], 'exactly one'],
      ['both key and hash', [entry({ hash: `sha256:${sha256('k')}` })], 'exactly one'],
      ['a hash without its prefix', [entry({ key: undefined, hash: sha256('k') })], 'apiKeys[0].hash'],
      ['a hash of another length', [entry({ key: undefined, hash: `sha256:${sha256('k').slice(1)}` })], 'apiKeys[0].hash'],
      ['an upper-case hash', [entry({ key: undefined, hash: `sha256:${sha256('k').toUpperCase()}` })], 'apiKeys[0].hash'],
      ['no scopes', [entry({ scopes: [] })], 'apiKeys[0].scopes'],
      ['an unknown scope', [entry({ scopes: ['read', 'delete'] })], '"delete" is not a scope'],
      ['no projects', [entry({ projects: [] })], 'apiKeys[0].projects'],
      ['a project that is no list', [entry({ projects: 'acme' })], 'apiKeys[0].projects'],
      ['an entry that is no object', [null as unknown as ApiKeyEntry], 'apiKeys[0]'],
    ];
    it.each(cases)('%s', async (_name, apiKeys, named) => {
      const error = await expectMailwardenError(() => createApiKeyCheck(apiKeys), 'invalid_request');
      expect(error).toBeInstanceOf(MailwardenError);
      expect(error.message).toContain(named);
    });
  });
});
