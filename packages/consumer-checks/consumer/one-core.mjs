// Run in the scratch project, on the published files: errors of one build of core are recognized by
// the other, through the stores and the bindings too. An app can load a store with `require` and a
// binding with `import` (or get two builds through a tool that picks conditions differently); a
// `store_unavailable` must still answer 503 with Retry-After, not 500.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import * as esmCore from '@mailwarden/core';
import * as esmStoreKit from '@mailwarden/core/store';
import { createDashboard as esmDashboard } from '@mailwarden/dashboard';
import { mailwardenPlugin } from '@mailwarden/fastify';
import { createPostgresStore } from '@mailwarden/postgres';
import Fastify from 'fastify';
import postgres from 'postgres';

const require = createRequire(import.meta.url);
const cjsCore = require('@mailwarden/core');
const cjsStoreKit = require('@mailwarden/core/store');
const { createRedisStore } = require('@mailwarden/redis');
const { createMailwardenRouter } = require('@mailwarden/express');
const { createDashboard: cjsDashboard } = require('@mailwarden/dashboard');
const express = require('express');
const { Redis } = require('ioredis');

const apiKey = 'k-one-core';
const checkPath = '/projects/acme/suppressions/check?email=ana%40example.com';
const quiet = { error() {} };

// The two builds are two module instances: the brand is what joins them.
assert.notEqual(cjsCore.MailwardenError, esmCore.MailwardenError);
assert.equal(esmCore.isMailwardenError(new cjsCore.MailwardenError('store_unavailable', 'CJS')), true);
assert.equal(cjsCore.isMailwardenError(new esmCore.MailwardenError('store_unavailable', 'ESM')), true);
assert.equal(esmCore.isMailwardenError(new Error('plain')), false);

// Within one format, every entry shares one copy of each module: an error thrown by the store kit's
// code is an instance of the main entry's class.
const scope = { listing: 'suppressions', projectId: 'acme', filters: {} };
for (const [format, core, storeKit] of [
  ['esm', esmCore, esmStoreKit],
  ['cjs', cjsCore, cjsStoreKit],
]) {
  assert.throws(
    () => storeKit.createCursorCodec().decode(scope, '!', undefined),
    core.MailwardenError,
    `${format}: one MailwardenError across entries`,
  );
}

// The dashboard's files ship in the tarball and are found from either build.
for (const createDashboard of [esmDashboard, cjsDashboard]) {
  assert.equal(createDashboard().serve({ path: '/dashboard/', headers: {}, head: false })?.status, 200);
}

async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function expectUnavailable(status, retryAfter, body, binding) {
  assert.equal(status, 503, `${binding}: ${body}`);
  assert.equal(retryAfter, '5', binding);
  assert.equal(JSON.parse(body).error.code, 'store_unavailable', binding);
}

// Fastify plugin (ESM) over core's ESM build; the Redis store (CommonJS) throws the CJS build's errors.
{
  const client = new Redis({ host: '127.0.0.1', port: await closedPort(), maxRetriesPerRequest: 1, retryStrategy: () => 20 });
  client.on('error', () => {});
  const mailwarden = esmCore.createMailwarden({ store: createRedisStore({ client, keyPrefix: 'mw:' }) });
  const app = Fastify();
  await app.register(mailwardenPlugin, { prefix: '/mw', mailwarden, apiKeys: { [apiKey]: 'acme' }, logger: quiet });
  const answer = await app.inject({ method: 'GET', url: `/mw${checkPath}`, headers: { 'x-api-key': apiKey } });
  expectUnavailable(answer.statusCode, answer.headers['retry-after'], answer.body, 'fastify (esm) + redis (cjs)');
  await app.close();
  client.disconnect();
}

// Express router (CommonJS) over core's CJS build; the PostgreSQL store (ESM) throws the ESM build's errors.
{
  const sql = postgres({ host: '127.0.0.1', port: await closedPort(), max: 1, connect_timeout: 2, backoff: () => 0, onnotice: () => {} });
  const mailwarden = cjsCore.createMailwarden({ store: createPostgresStore({ sql }) });
  const app = express();
  app.use('/mw', createMailwardenRouter({ mailwarden, apiKeys: { [apiKey]: 'acme' }, logger: quiet }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${server.address().port}/mw${checkPath}`, { headers: { 'x-api-key': apiKey } });
    expectUnavailable(response.status, response.headers.get('retry-after'), await response.text(), 'express (cjs) + postgres (esm)');
  } finally {
    server.close();
    await sql.end({ timeout: 0 });
  }
}

console.log('one core: ok');
