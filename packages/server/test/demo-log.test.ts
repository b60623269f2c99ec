// The output of `serve --demo`, read by a person: the banner before any request line, one short line
// per request; and `serve` without --demo still logs JSON (serve.test.ts).
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, test, vi } from 'vitest';
import { createDemoLog, demoLogLine } from '../src/demo-log.js';
import { startDemoProcess } from './demo-process.js';

/** A port free a moment ago, so requests can be aimed at the demo before it says where it listens. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const requestLine = (url: string, statusCode = 200) =>
  JSON.stringify({
    level: 30,
    time: Date.parse('2026-11-24T10:42:07Z'),
    reqId: 'req-1',
    req: { method: 'GET', url },
    res: { statusCode },
    responseTime: 3.4,
    msg: 'request completed',
  });

describe('the demo log', () => {
  test('request lines wait for the banner; lines about the service do not', () => {
    let written = '';
    const output = new Writable({ write: (chunk, _encoding, done) => ((written += String(chunk)), done()) });
    const log = createDemoLog(output);
    log.write(JSON.stringify({ level: 40, time: 0, msg: 'unsafeTrustTestSnsCertificate is on' }));
    log.write(requestLine('/health'));
    log.printBanner('BANNER\n');
    log.write(requestLine('/ready', 503));
    const lines = written.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d warn: unsafeTrustTestSnsCertificate is on$/);
    expect(lines[1]).toBe('BANNER');
    expect(lines.slice(2).map((line) => line.slice(9))).toEqual(['GET /health 200 3 ms', 'GET /ready 503 3 ms']);
  });

  test('an error keeps its message; a line that is not JSON is written as it is', () => {
    expect(
      demoLogLine(JSON.stringify({ level: 50, time: 0, reqId: 'r', msg: 'unexpected error', err: { message: 'boom' } })).slice(9),
    ).toBe('error: unexpected error: boom\n');
    expect(demoLogLine('not json')).toBe('not json\n');
  });

  test('serve --demo prints its banner before any request line, though requests come while it seeds', async () => {
    const port = await freePort();
    // A dashboard tab left open asks from the moment the port opens, while the demo data is still written.
    let polling = true;
    let answered = 0;
    const poller = (async () => {
      while (polling) {
        await fetch(`http://127.0.0.1:${port}/health`).then(
          () => answered++,
          () => undefined,
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const demo = await startDemoProcess({ PORT: String(port), MAILWARDEN_LOG_LEVEL: 'info' });
    const answeredBeforeBanner = answered;
    polling = false;
    await poller;
    try {
      // The race the order guards against did happen in this run.
      expect(answeredBeforeBanner).toBeGreaterThan(0);
      const requestLines = () =>
        demo
          .outputNow()
          .split('\n')
          .filter((line) => line.includes('/health'));
      // Every answered request is logged; the last lines may still be on their way from the process.
      await vi.waitFor(() => expect(requestLines()).toHaveLength(answered));
      const output = demo.outputNow();
      const bannerEnd = output.indexOf('Stop with Ctrl-C.');
      for (const line of requestLines()) {
        expect(line).toMatch(/^\d\d:\d\d:\d\d GET \/health 200 \d+ ms$/);
        expect(output.indexOf(line)).toBeGreaterThan(bannerEnd);
      }
      expect(output).not.toContain('{"level"');
    } finally {
      expect(await demo.stop()).toBe(0);
    }
  });
});
