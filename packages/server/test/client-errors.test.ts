// What reaches the standalone service below the level of a well-formed request: bytes that are not
// HTTP, CONNECT, oversized headers, requests that stall or are cut off. Every answer has mailwarden's
// error body, a stalled request is closed within its timeout, and nothing of it is logged as an error.
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createMemoryStore } from '@mailwarden/core';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startService, type Service } from '../src/service.js';

const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
});

/** The service with short timeouts, and the log lines it writes. */
async function start(env: Record<string, string> = {}): Promise<{ port: number; logs: { level: number; msg: string }[] }> {
  const logs: { level: number; msg: string }[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  const config = loadConfig({
    env: {
      PORT: '0',
      MAILWARDEN_LOG_LEVEL: 'info',
      MAILWARDEN_API_KEYS: 'acme:acme-key',
      MAILWARDEN_HEADERS_TIMEOUT_MS: '400',
      MAILWARDEN_IDLE_TIMEOUT_MS: '400',
      ...env,
    },
  });
  const store = createMemoryStore();
  const service = await startService(config, { kind: 'memory', store, close: () => store.close() }, { logStream });
  services.push(service);
  return { port: Number(new URL(service.url).port), logs };
}

/** Writes `bytes` on a raw connection and reads until the server closes it; fails if it has not within `ms`. */
function exchange(port: number, bytes: string | Buffer, ms = 5000): Promise<{ text: string }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text });
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${ms} ms; it sent: ${JSON.stringify(text)}`));
    }, ms);
  });
}

/** Status and error code of a raw HTTP answer. */
function answerOf(text: string): { status: number; code: string | undefined } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  expect(text.toLowerCase()).toContain('content-type: application/json');
  return { status, code: (JSON.parse(body) as { error?: { code: string } }).error?.code };
}

describe('requests Node refuses before Fastify sees them get the documented error body', () => {
  test.each([
    ['bad bytes in the request line', 'GET /projects/\x01x HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'invalid_request'],
    [
      'two Content-Lengths',
      'POST /projects/acme/suppressions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      400,
      'invalid_request',
    ],
    ['headers over 16 KiB', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['not HTTP at all', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', 400, 'invalid_request'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'method_not_allowed'],
  ])('%s', async (_name, request, status, code) => {
    const { port, logs } = await start();
    const { text } = await exchange(port, request);
    expect(answerOf(text)).toStrictEqual({ status, code });
    expect(logs.filter((line) => line.level >= 50)).toStrictEqual([]);
  });

  test('outside the base path, Fastify’s own refusals have mailwarden’s error body', async () => {
    const { port } = await start({ MAILWARDEN_BASE_PATH: '/mailwarden' });
    for (const [request, status, code] of [
      ['GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404, 'not_found'],
      [
        'PUT /elsewhere HTTP/1.1\r\nHost: x\r\nContent-Type: text/x-unknown\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi',
        404,
        'not_found',
      ],
      // Fastify parses a JSON body before it finds no route for it.
      [
        'POST /health HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{oops',
        400,
        'invalid_request',
      ],
    ] as const) {
      const { text } = await exchange(port, request);
      expect(answerOf(text), request).toStrictEqual({ status, code });
    }
  });

  test('QUERY without a Content-Type is answered by mailwarden, not by Fastify', async () => {
    const { port } = await start();
    const { text } = await exchange(
      port,
      'QUERY /projects/acme/suppressions HTTP/1.1\r\nHost: x\r\nX-API-Key: acme-key\r\nConnection: close\r\n\r\n',
    );
    expect(answerOf(text)).toStrictEqual({ status: 405, code: 'method_not_allowed' });
  });
});

describe('slow clients are let go within the timeouts', () => {
  test('headers that trickle in (a byte at a time, never idle): 408 request_timeout at the headers timeout', async () => {
    const { port, logs } = await start();
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += String(chunk)));
      socket.on('close', () => {
        clearInterval(timer);
        resolve(received);
      });
      socket.on('error', reject);
      const head = `GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(1000)}`;
      let at = 0;
      // A byte every 100 ms: the idle timeout (400 ms) never fires; the headers timeout (400 ms) does.
      const timer = setInterval(() => socket.writable && at < head.length && socket.write(head[at++]!), 100);
    });
    expect(answerOf(text)).toStrictEqual({ status: 408, code: 'request_timeout' });
    expect(logs.filter((line) => line.level >= 50)).toStrictEqual([]);
  });

  test('headers that stop arriving: the connection is closed after the idle timeout', async () => {
    const { port } = await start();
    // `exchange` fails if the server keeps the connection open for 5 s: ten times the timeout.
    await exchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n');
  });

  test('a body that stops arriving: the connection is closed after the idle timeout, not logged as an error', async () => {
    const { port, logs } = await start();
    const head =
      'POST /projects/acme/webhooks/sparkpost HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{"msys":';
    // `exchange` fails if the server keeps the connection open for 5 s: ten times the timeout.
    await exchange(port, head);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logs.filter((line) => line.level >= 50).map((line) => line.msg)).toStrictEqual([]);
  });

  test('a slow body that keeps arriving is read to its end', async () => {
    const { port } = await start();
    const body = JSON.stringify({ email: 'slow@example.com' });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        `POST /projects/acme/suppressions HTTP/1.1\r\nHost: x\r\nX-API-Key: acme-key\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      // One byte every 100 ms: never idle for the 400 ms timeout, slower than it overall.
      let at = 0;
      const timer = setInterval(() => {
        socket.write(body[at++]!);
        if (at === body.length) clearInterval(timer);
      }, 100);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  });

  test('a client that hangs up mid-upload is an ordinary event, not an unexpected error', async () => {
    const { port, logs } = await start({ MAILWARDEN_IDLE_TIMEOUT_MS: '10000' });
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          'POST /projects/acme/suppressions HTTP/1.1\r\nHost: x\r\nX-API-Key: acme-key\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":',
        );
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logs.filter((line) => line.level >= 50).map((line) => line.msg)).toStrictEqual([]);
  });
});
