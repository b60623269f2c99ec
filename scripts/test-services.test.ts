// A run starts only the servers of the projects whose files it selects: a vitest of this repository's
// configuration, in this process, collects one file of every project that names no server, and the test
// services (whose state lives on globalThis, shared by every copy of the module) were asked for nothing.
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { createVitest } from 'vitest/node';
import { servicesAsked } from './test-services.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

test('files of the projects without servers start none', async () => {
  const vitest = await createVitest('test', { root, watch: false, reporters: [] });
  try {
    const files = [
      'packages/core/test/timestamp.property.test.ts',
      'packages/store-test-suite/test/model.test.ts',
      'packages/consumer-checks/test/engines.test.ts',
      'packages/dashboard/test/serving.test.ts',
      'packages/http-test-suite/test/memory.http.test.ts',
      'packages/server/test/timeline-config.test.ts',
    ];
    const specifications = await vitest.globTestSpecifications(files);
    expect(new Set(specifications.map((specification) => specification.project.name))).toEqual(
      new Set(['core', 'store-test-suite', 'consumer-checks', 'dashboard', 'http-test-suite', 'server']),
    );
    await vitest.collectTests(specifications);
    expect(servicesAsked()).toEqual([]);
  } finally {
    await vitest.close();
  }
});
