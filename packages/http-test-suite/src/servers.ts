import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpHandlerOptions, Mailwarden } from '@mailwarden/core';
import { createMailwardenRouter } from '@mailwarden/express';
import { mailwardenFrameworkErrors, mailwardenPlugin } from '@mailwarden/fastify';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';

/** Where every test app mounts mailwarden. */
export const MOUNT_PATH = '/mw';

/** What a binding is given: the options both `createMailwardenRouter` and `mailwardenPlugin` take. */
export interface MountOptions extends HttpHandlerOptions {
  mailwarden: Mailwarden;
}

/** An app listening on a loopback port with mailwarden mounted at `MOUNT_PATH`. */
export interface RunningServer {
  /** Which binding serves it, for test titles. */
  name: string;
  /** `http://127.0.0.1:<port>`, the app's root. */
  origin: string;
  /** `origin` + `MOUNT_PATH`: spec paths are relative to it. */
  baseUrl: string;
  /** Stops listening and drops open (keep-alive) connections. */
  close(): Promise<void>;
}

export type StartServer = (options: MountOptions) => Promise<RunningServer>;

/** An Express 5 app: `app.use('/mw', createMailwardenRouter(options))`. */
export const startExpress5: StartServer = (options) => {
  const app = express();
  app.use(MOUNT_PATH, createMailwardenRouter(options));
  return listen('express5', createServer(app));
};

/** An Express 4 app (the `express4` alias package) mounting the same router. */
export const startExpress4: StartServer = (options) => {
  const app = express4();
  app.use(MOUNT_PATH, createMailwardenRouter(options));
  return listen('express4', createServer(app));
};

/**
 * An Express app that parses JSON bodies for every route before mailwarden sees them, as many apps do:
 * API routes must still work; webhook routes cannot see the signed bytes of JSON bodies.
 * `jsonOptions` go to `express.json()` (its default `limit` is 100 kB).
 */
export function startExpressBehindJsonParser(version: 4 | 5, jsonOptions: { limit?: string | number } = {}): StartServer {
  return (options) => {
    const app = version === 5 ? express() : express4();
    app.use((version === 5 ? express : express4).json(jsonOptions));
    app.use(MOUNT_PATH, createMailwardenRouter(options));
    return listen(`express${version} + express.json()`, createServer(app));
  };
}

/** Express 5 with `app.use(express.json())` before the router. */
export const startExpress5BehindJsonParser: StartServer = startExpressBehindJsonParser(5);

/** Express 4 with `app.use(express.json())` before the router; its body-parser marks parsed requests with `req._body`. */
export const startExpress4BehindJsonParser: StartServer = startExpressBehindJsonParser(4);

/** A Fastify app: `app.register(mailwardenPlugin, { prefix: '/mw', ...options })`. */
export const startFastify: StartServer = async (options) => {
  const app = Fastify({ logger: false, frameworkErrors: mailwardenFrameworkErrors });
  await app.register(mailwardenPlugin, { prefix: MOUNT_PATH, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return running('fastify', app.server, () => app.close());
};

/** Every binding the suite runs against, by name. */
export const bindings = {
  express5: startExpress5,
  express4: startExpress4,
  fastify: startFastify,
} as const satisfies Record<string, StartServer>;

async function listen(name: string, server: Server): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return running(name, server, async () => {
    const closed = new Promise<void>((resolve, reject) => server.close((error) => (error === undefined ? resolve() : reject(error))));
    // fetch keeps connections alive; without this, close() waits for them to time out.
    server.closeAllConnections();
    await closed;
  });
}

function running(name: string, server: Server, close: () => Promise<void>): RunningServer {
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return { name, origin, baseUrl: `${origin}${MOUNT_PATH}`, close };
}
