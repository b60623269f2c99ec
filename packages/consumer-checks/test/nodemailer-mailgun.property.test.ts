import fc from 'fast-check';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import {
  attachMailgunSmtpTrackingId,
  decodeHeaderValue,
  readMailgunStream,
  readMailgunTrackingId,
  type MailgunSmtpHeaderValue,
} from '@mailwarden/core';
import { describe, expect, expectTypeOf, it } from 'vitest';
// DefinitelyTyped's declarations, which nodemailer before its own types (and many lockfiles) use.
import type DefinitelyTypedMail from '../../../node_modules/@types/nodemailer/lib/mailer/index.js';
import { optionalStreamArbitrary, trackingIdArbitrary } from './tracking-id.arbitrary.js';

const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

/** The MIME message nodemailer builds for these headers, as it would hand it to an SMTP server. */
async function build(headers: SendMailOptions['headers']): Promise<string> {
  const info = await transport.sendMail({ from: 'news@mg.example.com', to: 'jane@example.com', subject: 'Hello', text: 'Hi', headers });
  return (info.message as Buffer).toString('utf8');
}

/**
 * The X-Mailgun-Variables of a MIME message as Mailgun reads it: every header line within 998 octets,
 * unfolded, RFC 2047 encoded words decoded (a receiver may decode them; ours must hold none), parsed.
 */
function mailgunVariables(mime: string): Record<string, unknown> {
  const head = mime.slice(0, mime.indexOf('\r\n\r\n'));
  for (const line of head.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(998);
  const fields = head.replace(/\r\n(?=[ \t])/g, '').split('\r\n');
  const values = fields.filter((field) => /^x-mailgun-variables:/i.test(field)).map((field) => field.slice(field.indexOf(':') + 1).trim());
  expect(values).toHaveLength(1);
  return JSON.parse(decodeHeaderValue(values[0]!)) as Record<string, unknown>;
}

describe('attachMailgunSmtpTrackingId through nodemailer 10 (MIME build)', () => {
  it("its result is what nodemailer takes as headers, in nodemailer's own types and @types/nodemailer", () => {
    const headers = attachMailgunSmtpTrackingId({ 'X-Campaign': 'spring', 'x-mailgun-variables': '{"a":1}' }, 'spring-sale');
    expectTypeOf(headers).toExtend<NonNullable<SendMailOptions['headers']>>();
    expectTypeOf(headers).toExtend<NonNullable<DefinitelyTypedMail.Options['headers']>>();
    expectTypeOf(attachMailgunSmtpTrackingId(undefined, 'x')).toExtend<NonNullable<DefinitelyTypedMail.Options['headers']>>();
    // The caller's X-Mailgun-Variables (whatever its case) is replaced, not typed as it was given.
    expectTypeOf(headers['x-mailgun-variables']).toEqualTypeOf<MailgunSmtpHeaderValue | undefined>();
    expectTypeOf(headers['X-Campaign']).toEqualTypeOf<string>();
  });

  it('attach → nodemailer MIME → Mailgun reads the header → the same ID and stream; 7-bit unless smtputf8', async () => {
    await fc.assert(
      fc.asyncProperty(
        trackingIdArbitrary,
        optionalStreamArbitrary,
        fc.boolean(),
        fc.constantFrom(undefined, '{"plan":"Zürich =?x?="}'),
        async (id, stream, smtputf8, caller) => {
          const headers = attachMailgunSmtpTrackingId(caller === undefined ? {} : { 'X-Mailgun-Variables': caller }, id, {
            smtputf8,
            stream,
          });
          const mime = await build(headers);
          const head = mime.slice(0, mime.indexOf('\r\n\r\n'));
          if (!smtputf8) expect(head).toMatch(/^[\x00-\x7f]*$/);
          const variables = mailgunVariables(mime);
          expect(readMailgunTrackingId({ 'user-variables': variables })).toBe(id);
          expect(readMailgunStream({ 'user-variables': variables })).toBe(stream ?? null);
          if (caller !== undefined) expect(variables['plan']).toBe('Zürich =?x?=');
        },
      ),
      { numRuns: 200 },
    );
  });

  it("pinned: the real-SDK run's failures, now carried", async () => {
    // A literal encoded word inside the JSON: a receiver that decodes it gets {"service_id":""""}.
    const lookAlike = '=?UTF-8?B?IiI=?=';
    expect(() => mailgunVariables(`X-Mailgun-Variables: {"service_id":"${lookAlike}"}\r\n\r\n`)).toThrow(SyntaxError);
    // Non-ASCII went out as raw 8-bit, which needs SMTPUTF8; 128 astral characters exceed a line once escaped.
    for (const id of [lookAlike, 'Frühling 🌷', '😀'.repeat(128), 'a\nb', '"\\']) {
      const mime = await build(attachMailgunSmtpTrackingId({}, id));
      expect(mime.slice(0, mime.indexOf('\r\n\r\n'))).toMatch(/^[\x00-\x7f]*$/);
      expect(readMailgunTrackingId({ 'user-variables': mailgunVariables(mime) })).toBe(id);
    }
  });
});
