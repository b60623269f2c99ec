// A real local webhook receiver (node:http on 127.0.0.1) and a fake clock with timers, for the outbound
// webhook tests: the receiver records every request and answers as a test tells it; the clock moves only
// when a test advances it, and each fired delivery loop is awaited until it plans its next look.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OutboundTimers } from '@mailwarden/core';

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers one request: a status (and headers), or never, or an endless 200 body. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang' | 'endless';

export interface Receiver {
  url: string;
  /** Every request, in arrival order. */
  received: ReceivedRequest[];
  /** The most requests in progress at once. */
  maxInFlight: number;
  /** How the next requests are answered; 200 by default. */
  answer: (request: ReceivedRequest) => Answer | Promise<Answer>;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void>;
  /** Once the client let go of the last endless answer: how many bytes it wrote until then. */
  endlessClosed: Promise<number> | undefined;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let inFlight = 0;
  let waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    maxInFlight: 0,
    answer: () => ({ status: 200 }),
    waitFor: (count) =>
      receiver.received.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    endlessClosed: undefined,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    response.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received: ReceivedRequest = {
      path: request.url ?? '',
      headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
      body: Buffer.concat(chunks).toString('utf8'),
    };
    receiver.received.push(received);
    waiters = waiters.filter((waiter) => (receiver.received.length >= waiter.count ? void waiter.resolve() : true));
    const answer = await receiver.answer(received);
    if (answer === 'hang') return;
    if (answer === 'endless') return void (receiver.endlessClosed = writeEndlessly(response));
    response.writeHead(answer.status, answer.headers).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Writes 64 KiB chunks until the client goes away; resolves with how much it wrote. */
function writeEndlessly(response: ServerResponse): Promise<number> {
  const chunk = Buffer.alloc(65_536, 'x');
  let written = 0;
  response.writeHead(200, { 'content-type': 'text/plain' });
  const closed = new Promise<number>((resolve) => response.on('close', () => resolve(written)));
  const write = () => {
    while (!response.destroyed) {
      written += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', write);
    }
  };
  write();
  return closed;
}

interface FakeTimer {
  due: number;
  run: () => void;
}

/** A clock and timers that move only when advanced; each fired loop is awaited until it plans again. */
export class FakeTime {
  constructor(public current: number) {}
  private pending = new Set<FakeTimer>();
  private planned: (() => void)[] = [];

  now = (): number => this.current;

  timers: OutboundTimers = {
    setTimeout: (run, ms) => {
      const timer = { due: this.current + ms, run };
      this.pending.add(timer);
      for (const resolve of this.planned.splice(0)) resolve();
      return timer;
    },
    clearTimeout: (handle) => void this.pending.delete(handle as FakeTimer),
  };

  /** Moves the clock by `ms`, firing each timer due on the way (at its time) and awaiting the loop it ran. */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      const next = [...this.pending].filter((timer) => timer.due <= end).sort((a, b) => a.due - b.due)[0];
      if (next === undefined) break;
      this.current = Math.max(this.current, next.due);
      this.pending.delete(next);
      const replanned = new Promise<void>((resolve) => this.planned.push(resolve));
      next.run();
      await replanned;
    }
    this.current = end;
  }
}
