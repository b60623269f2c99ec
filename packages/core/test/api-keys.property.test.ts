import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiScopes, isMailwardenError, type ApiKeys, type ApiScope } from '@mailwarden/core';
import { createApiKeyCheck } from '../src/http/api-keys.js';
import { anyString } from './arbitraries.js';

// docs/http.md, "Authentication": whatever form the keys take (a map, a list of keys or of hashes, a
// resolver's grants), a presented key opens the project iff it is listed, with the scopes listed for it.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

type Form = 'map' | 'keys' | 'hashes' | 'grants';

function configure(form: Form, listed: readonly { key: string; scopes: readonly ApiScope[] }[]): ApiKeys {
  const entries = listed.map(({ scopes }, index) => ({ name: `k${index}`, projects: ['acme'], scopes }));
  switch (form) {
    case 'map':
      return Object.fromEntries(listed.map(({ key }) => [key, 'acme']));
    case 'keys':
      return listed.map(({ key }, index) => ({ ...entries[index]!, key }));
    case 'hashes':
      return listed.map(({ key }, index) => ({ ...entries[index]!, hash: `sha256:${sha256(key)}` }));
    case 'grants': {
      const byKey = new Map(listed.map(({ key }, index) => [key, entries[index]!]));
      return async (key) => byKey.get(key);
    }
  }
}

/** What the check answers: the key's name and scopes, or the code it refused with. */
async function outcome(check: ReturnType<typeof createApiKeyCheck>, key: string): Promise<unknown> {
  try {
    return await check(key, 'acme');
  } catch (error) {
    if (isMailwardenError(error)) return error.code;
    throw error;
  }
}

const scopes = fc.subarray([...apiScopes], { minLength: 1 });
const key = fc.oneof(anyString, fc.constantFrom('k', 'K', 'k ', ' k', 'mw_a', 'mw_A')).filter((text) => text !== '');

describe('createApiKeyCheck, whatever the form', () => {
  it('a key authenticates iff listed, with its own name and scopes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Form>('map', 'keys', 'hashes', 'grants'),
        fc.uniqueArray(fc.record({ key, scopes }), { selector: (entry) => entry.key, maxLength: 5 }),
        fc.array(key, { maxLength: 5 }),
        async (form, listed, others) => {
          const check = createApiKeyCheck(configure(form, listed));
          for (const [index, entry] of listed.entries()) {
            expect(await outcome(check, entry.key)).toEqual(
              form === 'map'
                ? { name: `key-${sha256(entry.key).slice(0, 8)}`, scopes: apiScopes }
                : { name: `k${index}`, scopes: apiScopes.filter((scope) => entry.scopes.includes(scope)) },
            );
          }
          for (const other of others) {
            if (listed.some((entry) => entry.key === other)) continue;
            expect(await outcome(check, other)).toBe('invalid_api_key');
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
