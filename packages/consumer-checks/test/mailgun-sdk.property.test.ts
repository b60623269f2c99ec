import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import Mailgun from 'mailgun.js';
import {
  attachMailgunTrackingId,
  readMailgunLegacyStream,
  readMailgunLegacyTrackingId,
  readMailgunStream,
  readMailgunTrackingId,
} from '@mailwarden/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

/** A stand-in for Mailgun's API on a loopback port: it keeps each message request's body and answers as Mailgun does. */
let server: Server;
let received: { contentType: string; body: Uint8Array }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ contentType: request.headers['content-type'] ?? '', body: new Uint8Array(Buffer.concat(chunks)) });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: '<20260101.1.ABC@mg.example.com>', message: 'Queued. Thank you.' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/**
 * Sends through the real mailgun.js (with Node's FormData, over its default HTTP client or fetch) and
 * returns the user variables Mailgun would report: each `v:` field of the multipart body it received,
 * and the members of `h:X-Mailgun-Variables`.
 */
async function sendAndReadVariables(
  fields: Parameters<typeof attachMailgunTrackingId>[0],
  useFetch: boolean,
): Promise<Record<string, unknown>> {
  received = [];
  const { port } = server.address() as AddressInfo;
  const mg = new Mailgun(FormData).client({ username: 'api', key: 'key-test', url: `http://127.0.0.1:${port}`, useFetch });
  await mg.messages.create('mg.example.com', fields as Parameters<typeof mg.messages.create>[1]);
  expect(received).toHaveLength(1);
  const { contentType, body } = received[0]!;
  const variables: Record<string, unknown> = {};
  for (const [name, value] of multipartFields(body, contentType)) {
    if (name.startsWith('v:')) variables[name.slice(2)] = value;
    if (name.toLowerCase() === 'h:x-mailgun-variables') Object.assign(variables, JSON.parse(value.replace(/\r\n(?=[ \t])/g, '')));
  }
  return variables;
}

/**
 * The text fields of a multipart/form-data body as a server reads them: each part's bytes as UTF-8,
 * nothing stripped (undici's `Response.formData()` drops a leading U+FEFF from every value).
 */
function multipartFields(body: Uint8Array, contentType: string): [string, string][] {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const delimiter = `--${boundary?.[1] ?? boundary?.[2]}`;
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  return text
    .split(delimiter)
    .slice(1, -1)
    .map((part): [string, string] => {
      const [head, ...value] = part.replace(/^\r\n/, '').split('\r\n\r\n');
      const name = /name="([^"]*)"/.exec(head!)?.[1] ?? '';
      return [decodeURIComponent(name), value.join('\r\n\r\n').replace(/\r\n$/, '')];
    });
}

const message = { from: 'news@mg.example.com', to: ['jane@example.com'], subject: 'Hello', text: 'Hi' };

describe('mailgun.js 14 with Node FormData: the tracking ID arrives as sent', () => {
  it('attach → mailgun.js → multipart request → Mailgun user variables → read back (JSON and legacy webhooks), with or without a stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        trackingIdArbitrary,
        optionalStreamArbitrary,
        fc.constantFrom('variable', 'header'),
        fc.boolean(),
        async (id, stream, via, useFetch) => {
          const variables = await sendAndReadVariables(attachMailgunTrackingId(message, id, { via, stream }), useFetch);
          expect(readMailgunTrackingId({ 'user-variables': variables })).toBe(id);
          expect(readMailgunStream({ 'user-variables': variables })).toBe(stream ?? null);
          const legacyFields = Object.entries(variables).map(([name, value]): [string, string] => [name, String(value)]);
          expect(readMailgunLegacyTrackingId(legacyFields)).toBe(id);
          expect(readMailgunLegacyStream(legacyFields)).toBe(stream ?? null);
        },
      ),
      { numRuns: 150 },
    );
  });

  // '\ufeff ' is a counterexample of parsing with undici's formData(), not of mailgun.js: it goes as is.
  it('pinned: the IDs the real-SDK run changed (a bare LF or CR came back as CRLF), and a leading BOM', async () => {
    for (const id of ['a\nb', 'a\rb', '\n', 'x\r', 'a\r\nb\nc', '\ufeff ']) {
      for (const useFetch of [false, true]) {
        const encoded = /[\r\n]/.test(id) || id.startsWith('\ufeff');
        const plain = await sendAndReadVariables({ ...message, 'v:service_id': id }, useFetch);
        if (/[\r\n]/.test(id)) expect(plain['service_id']).not.toBe(id); // what the encoding is for
        const variables = await sendAndReadVariables(attachMailgunTrackingId(message, id), useFetch);
        expect(variables['service_id_enc']).toBe(encoded ? 'b64u' : undefined);
        expect(readMailgunTrackingId({ 'user-variables': variables })).toBe(id);
      }
    }
  });
});
