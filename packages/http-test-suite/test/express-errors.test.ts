import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailwarden } from '@mailwarden/core';
import { createMailwardenRouter } from '@mailwarden/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import { expect, onTestFinished, test } from 'vitest';

// The router answers every request itself; what can still fail is sending the answer (the app wrote
// headers already, the socket broke). Such an error must reach Express's error handling through
// `next(error)`, not become an unhandled rejection (Express 4 does not catch promises at all).
test.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('%s: an error thrown while sending the answer reaches next(error)', async (_name, make) => {
  const app = make();
  // A middleware of the app that has already started its own response.
  app.use((_request: Request, response: Response, next: NextFunction) => {
    response.writeHead(299);
    response.write('started by the app\n');
    next();
  });
  app.use('/mw', createMailwardenRouter({ mailwarden: createMailwarden(), apiKeys: {} }));
  const seen: unknown[] = [];
  app.use((error: unknown, _request: Request, response: Response, _next: NextFunction) => {
    seen.push(error);
    response.end();
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await new Promise((resolve) => server.once('listening', resolve));
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mw/openapi.json`);
  expect([answer.status, await answer.text()]).toStrictEqual([299, 'started by the app\n']);
  expect(seen.map((error) => (error as { code?: string }).code)).toStrictEqual(['ERR_HTTP_HEADERS_SENT']);
});
