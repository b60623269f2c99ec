import { expect, test } from 'vitest';
import { compareResponses, expectIdenticalResponses, startExpress4, startExpress5, startFastify } from '../src/index.js';

// One scripted sequence of requests, every route and error, played against each binding on a fresh
// memory store with the same clock: the answers must be the same bytes.

test('Express 5 and Express 4 answer the scripted requests identically', async () => {
  expect(await expectIdenticalResponses([startExpress5, startExpress4])).toEqual([]);
});

test('Express 5 and Fastify answer the scripted requests identically', async () => {
  await expectIdenticalResponses([startExpress5, startFastify]);
});

test('beyond the compared headers, the bindings differ only in headers their frameworks add', async () => {
  const { otherHeaders } = await compareResponses([startExpress5, startExpress4, startFastify]);
  expect(Object.fromEntries(otherHeaders.map(({ header, values }) => [header, values]))).toEqual({
    // Express's default `keepAliveTimeout` of Node's server (5 s) against Fastify's own (72 s).
    'keep-alive': { express5: ['timeout=5'], fastify: ['timeout=72'] },
    // Express's `x-powered-by` setting, on unless the app disables it.
    'x-powered-by': { express5: ['Express'], fastify: ['(absent)'] },
  });
});
