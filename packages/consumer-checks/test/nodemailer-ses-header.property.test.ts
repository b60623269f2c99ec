import fc from 'fast-check';
import nodemailer from 'nodemailer';
import { attachSesHeaderTrackingId, encodeServiceIdHeader, readSesHeaderStream, readSesHeaderTrackingId } from '@mailwarden/core';
import { describe, expect, it } from 'vitest';
import { optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
const mail = { from: 'shop@example.com', to: 'ana@example.org', subject: 'Spring sale', text: 'Hello' };

async function mime(headers?: Record<string, { prepared: boolean; value: string }>): Promise<string> {
  const info = await transport.sendMail({ ...mail, headers });
  return (info.message as Buffer).toString('utf8');
}

/** The X-Service-Id field of a message's header block: its physical lines, and what SES reads from it. */
function serviceIdField(message: string): { lines: string[]; trackingId: string | null } {
  const head = message.slice(0, message.indexOf('\r\n\r\n')).split('\r\n');
  const start = head.findIndex((line) => /^x-service-id:/i.test(line));
  let end = start + 1;
  while (end < head.length && /^[ \t]/.test(head[end]!)) end++;
  const lines = head.slice(start, end);
  const value = lines
    .join('\r\n')
    .slice(lines[0]!.indexOf(':') + 1)
    .trimStart();
  return { lines, trackingId: readSesHeaderTrackingId([{ name: 'X-Service-Id', value }]) };
}

describe("ses.md's nodemailer advice: X-Service-Id prepared and folded", () => {
  it('every line within 76 characters when it holds encoded words, and SES reads back the ID', async () => {
    await fc.assert(
      fc.asyncProperty(trackingIdArbitrary, async (id) => {
        const words = encodeServiceIdHeader(id, 76 - 'X-Service-Id: '.length);
        const field = serviceIdField(await mime({ 'X-Service-Id': { prepared: true, value: words.join('\r\n ') } }));
        if (words.some((word) => word.startsWith('=?'))) for (const line of field.lines) expect(line.length).toBeLessThanOrEqual(76);
        else for (const line of field.lines) expect(line.length).toBeLessThanOrEqual(998);
        expect(field.trackingId).toBe(id);
      }),
      { numRuns: 200 },
    );
  });

  it("the other way, the helper on nodemailer's output, gives the same field, and the stream beside it", async () => {
    await fc.assert(
      fc.asyncProperty(trackingIdArbitrary, optionalStreamArbitrary, async (id, stream) => {
        const message = attachSesHeaderTrackingId(await mime(), id, { stream });
        const field = serviceIdField(message);
        expect(field.trackingId).toBe(id);
        const head = message.slice(0, message.indexOf('\r\n\r\n')).split('\r\n');
        const headers = head.map((line) => ({
          name: line.slice(0, line.indexOf(':')),
          value: line.slice(line.indexOf(':') + 1).trimStart(),
        }));
        expect(readSesHeaderStream(headers)).toBe(stream ?? null);
      }),
      { numRuns: 100 },
    );
  });

  it('pinned: joined with spaces, as the page used to say, a long value is one line over 76', async () => {
    const id = 'Frühling 🌷'.repeat(10);
    const field = serviceIdField(await mime({ 'X-Service-Id': { prepared: true, value: encodeServiceIdHeader(id).join(' ') } }));
    expect(field.lines).toHaveLength(1);
    expect(field.lines[0]!.length).toBeGreaterThan(76);
  });
});
