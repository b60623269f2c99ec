// One-click unsubscribe on the send side (docs/providers/README.md, "One-click unsubscribe on the send
// side"): every attach helper that takes `unsubscribe` puts each recipient's own link on the message that
// recipient gets, and refuses a message whose recipients would all see one link. The round trip: the
// link read back from the headers names the recipient and the stream it was made for.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachBrevoTrackingId } from '../../src/carriers/brevo.js';
import { attachMailgunTrackingId } from '../../src/carriers/mailgun.js';
import { attachMailerSendTrackingId } from '../../src/carriers/mailersend.js';
import { attachMailjetTrackingId } from '../../src/carriers/mailjet.js';
import { attachMandrillTrackingId } from '../../src/carriers/mandrill.js';
import { attachPostalTrackingId } from '../../src/carriers/postal.js';
import { attachPostmarkTrackingId } from '../../src/carriers/postmark.js';
import { attachResendTrackingId } from '../../src/carriers/resend.js';
import { attachSendGridTrackingId } from '../../src/carriers/sendgrid.js';
import { attachSesHeaderTrackingId } from '../../src/carriers/ses-header.js';
import { recipientAddress, recipientAddresses, type UnsubscribeLinkOf } from '../../src/carriers/unsubscribe-headers.js';
import { createMailwarden } from '../../src/mailwarden.js';
import type { ErrorCode } from '../../src/errors.js';
import { expectMailwardenError as expectCode } from '../expect-mailwarden-error.js';

/** The MailwardenError `action` throws: its code, and its message when a pattern is given. */
async function expectMailwardenError(action: () => unknown, code: ErrorCode, message?: RegExp): Promise<void> {
  const error = await expectCode(action, code);
  if (message !== undefined) expect(error.message).toMatch(message);
}

const mailwarden = createMailwarden({
  unsubscribeLinks: { baseUrl: 'https://mail.example.com/mw', secrets: ['s'.repeat(32)] },
});
const PROJECT = 'acme';

/** Links made in process, as a sender makes them. */
const linksFor =
  (stream: string | undefined): UnsubscribeLinkOf =>
  (email) =>
    mailwarden.unsubscribeLinks.create(PROJECT, stream === undefined ? { email } : { email, stream });

/** What the link in a `List-Unsubscribe` value unsubscribes: the token read back by the service. */
function unsubscribes(listUnsubscribe: string | undefined) {
  const url = /^<([^>]+)>$/.exec(listUnsubscribe ?? '')?.[1];
  if (url === undefined) throw new Error(`not a List-Unsubscribe value: ${listUnsubscribe}`);
  const token = url.split('/').at(-1)!;
  return mailwarden.unsubscribeLinks.read(PROJECT, token);
}

const address = fc
  .tuple(fc.stringMatching(/^[a-z0-9]{1,10}$/), fc.constantFrom('example.com', 'example.org'))
  .map(([local, domain]) => `${local}@${domain}`);
const recipients = fc.uniqueArray(address, { minLength: 1, maxLength: 5 });
const stream = fc.option(fc.constantFrom('marketing', 'weekly-digest'), { nil: undefined });
const POST = 'List-Unsubscribe=One-Click';

describe('each recipient gets its own link, which unsubscribes it from the stream', () => {
  it('SendGrid: a personalization per recipient carries its headers', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const request = {
          from: { email: 'news@example.com' },
          headers: { 'X-Campaign': 'spring' },
          personalizations: emails.map((email) => ({ to: [{ email, name: 'Reader' }], headers: { 'List-Unsubscribe': '<old>' } })),
        };
        const next = attachSendGridTrackingId(request, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
        expect(next.headers).toEqual({ 'X-Campaign': 'spring' });
        next.personalizations.forEach((personalization, i) => {
          const headers = (personalization as { headers: Record<string, string> }).headers;
          expect(Object.keys(headers)).toEqual(['List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(headers['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: emails[i], stream: name ?? null });
        });
        // The input is left as it was.
        expect(request.personalizations[0]!.headers).toEqual({ 'List-Unsubscribe': '<old>' });
      }),
    );
  });

  it('Postmark: a batch is one message per recipient, each with its own Headers', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const batch = emails.map((email) => ({
          From: 'news@example.com',
          To: `"Reader, A." <${email}>`,
          Headers: [{ Name: 'X-A', Value: '1' }],
        }));
        const next = attachPostmarkTrackingId(batch, 'spring-sale', { unsubscribe: linksFor(name) });
        next.forEach((message, i) => {
          const headers = (message as unknown as { Headers: { Name: string; Value: string }[] }).Headers;
          expect(headers.map((header) => header.Name)).toEqual(['X-A', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(unsubscribes(headers[1]!.Value)).toEqual({ email: emails[i], stream: name ?? null });
        });
      }),
    );
  });

  it('Brevo: one request per recipient, its headers beside X-Mailin-custom; a request to several is refused', async () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        emails.forEach((email) => {
          const request = {
            sender: { email: 'news@example.com' },
            to: [{ email, name: 'Reader' }],
            headers: { 'X-A': '1', 'list-unsubscribe': '<old>' },
          };
          const next = attachBrevoTrackingId(request, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
          const headers = next.headers as Record<string, string>;
          expect(Object.keys(headers)).toEqual(['X-A', 'X-Mailin-custom', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(headers['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email, stream: name ?? null });
          expect(JSON.parse(headers['X-Mailin-custom']!)).toMatchObject({ service_id: 'spring-sale' });
        });
      }),
    );
    const versions = { messageVersions: [{ to: [{ email: 'a@example.com' }] }, { to: [{ email: 'b@example.com' }] }] };
    await expectMailwardenError(
      () => attachBrevoTrackingId(versions, 'x', { unsubscribe: linksFor(undefined) }),
      'unsubscribe_not_carriable',
    );
  });

  it('Mailjet: a v3.1 message per recipient, each with its own Headers, beside its EventPayload', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const request = {
          Messages: emails.map((email) => ({
            From: { Email: 'news@example.com' },
            To: [{ Email: email, Name: 'Reader, A.' }],
            Headers: { 'X-A': '1', 'List-Unsubscribe': '<old>' },
          })),
        };
        const next = attachMailjetTrackingId(request, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
        next.Messages.forEach((message, i) => {
          const headers = message.Headers as Record<string, string>;
          expect(Object.keys(headers)).toEqual(['X-A', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(headers['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: emails[i], stream: name ?? null });
          expect(JSON.parse((message as { EventPayload?: string }).EventPayload!)).toMatchObject({ service_id: 'spring-sale' });
        });
      }),
    );
  });

  it('Resend: a batch is one email per recipient, each with its own headers, beside its service_id tag', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const batch = emails.map((email) => ({
          from: 'news@example.com',
          to: [`Reader <${email}>`],
          headers: { 'X-A': '1', 'list-unsubscribe': '<old>' },
        }));
        const next = attachResendTrackingId(batch, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
        next.forEach((email, i) => {
          const headers = email.headers!;
          expect(Object.keys(headers)).toEqual(['X-A', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(headers['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: emails[i], stream: name ?? null });
          expect(email.tags).toContainEqual({ name: 'service_id', value: 'spring-sale' });
        });
      }),
    );
  });

  it('MailerSend: a bulk send is one email per recipient, each with its own list_unsubscribe, beside its service_id tag', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const bulk = emails.map((email) => ({
          from: { email: 'news@example.com' },
          to: [{ email, name: 'Reader, A.' }],
          list_unsubscribe: '<old>',
        }));
        const next = attachMailerSendTrackingId(bulk, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
        next.forEach((email, i) => {
          expect(unsubscribes(email.list_unsubscribe)).toEqual({ email: emails[i], stream: name ?? null });
          expect(email.tags).toContain('service_id:spring-sale');
        });
      }),
    );
  });

  it('Postal: one message per recipient, its own link in headers beside the caller’s and its tag; several are refused', async () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        for (const email of emails) {
          const message = {
            to: [`Reader <${email}>`],
            from: 'news@example.com',
            headers: { 'X-Campaign': 'spring', 'list-unsubscribe': '<old>' } as Record<string, string>,
          };
          const next = attachPostalTrackingId(message, 'spring-sale', { unsubscribe: linksFor(name) });
          expect(Object.keys(next.headers)).toEqual(['X-Campaign', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
          expect(next.headers['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(next.headers['List-Unsubscribe'])).toEqual({ email, stream: name ?? null });
          expect(next.tag).toBe('spring-sale');
        }
      }),
    );
    await expectMailwardenError(
      () => attachPostalTrackingId({ to: ['a@x.org', 'b@x.org'] }, 'id', { unsubscribe: linksFor('marketing') }),
      'unsubscribe_not_carriable',
      /The Postal message goes to 2 recipients/,
    );
  });

  it('SES v2 SendBulkEmail: each entry carries its recipient link in its ReplacementHeaders, beside X-Service-Id', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const request = {
          FromEmailAddress: 'news@example.com',
          DefaultContent: { Template: { TemplateName: 'weekly' } },
          BulkEmailEntries: emails.map((email) => ({ Destination: { ToAddresses: [email] } })),
        };
        const next = attachSesHeaderTrackingId(request, 'spring-sale', { stream: name, unsubscribe: linksFor(name) });
        next.BulkEmailEntries.forEach((entry, i) => {
          const headers = (entry as unknown as { ReplacementHeaders: { Name: string; Value: string }[] }).ReplacementHeaders;
          const named = Object.fromEntries(headers.map((header) => [header.Name, header.Value]));
          expect(named['X-Service-Id']).toBe('spring-sale');
          expect(named['List-Unsubscribe-Post']).toBe(POST);
          expect(unsubscribes(named['List-Unsubscribe'])).toEqual({ email: emails[i], stream: name ?? null });
        });
      }),
    );
  });

  it('Mailgun: several recipients go as a batch, each link in recipient-variables, merged into the caller’s', () => {
    fc.assert(
      fc.property(recipients, stream, (emails, name) => {
        const fields = {
          from: 'news@mg.example.com',
          to: emails,
          'h:list-unsubscribe': '<old>',
          'recipient-variables': JSON.stringify({ [emails[0]!]: { first: 'Ana' } }),
        };
        const next = attachMailgunTrackingId(fields, 'spring-sale', { unsubscribe: linksFor(name) }) as Record<string, unknown>;
        expect(next['h:list-unsubscribe']).toBeUndefined();
        expect(next['h:List-Unsubscribe-Post']).toBe(POST);
        const variables = JSON.parse(next['recipient-variables'] as string) as Record<string, Record<string, string>>;
        if (emails.length === 1) {
          // One recipient: the headers themselves, and the caller's variables as they were.
          expect(unsubscribes(next['h:List-Unsubscribe'] as string)).toEqual({ email: emails[0], stream: name ?? null });
          expect(next['recipient-variables']).toBe(fields['recipient-variables']);
          return;
        }
        expect(next['h:List-Unsubscribe']).toBe('%recipient.h:List-Unsubscribe%');
        expect(variables[emails[0]!]!['first']).toBe('Ana');
        for (const email of emails) expect(unsubscribes(variables[email]!['h:List-Unsubscribe'])).toEqual({ email, stream: name ?? null });
      }),
    );
  });
});

describe('one link per message: where several recipients would see the same one', () => {
  const link = linksFor('marketing');

  it('throws unsubscribe_not_carriable, naming the message', async () => {
    await expectMailwardenError(
      () =>
        attachSendGridTrackingId({ personalizations: [{ to: [{ email: 'a@x.org' }, { email: 'b@x.org' }] }] }, 'id', { unsubscribe: link }),
      'unsubscribe_not_carriable',
      /SendGrid personalizations\[0\] goes to 2 recipients/,
    );
    await expectMailwardenError(
      () => attachSendGridTrackingId({ to: ['a@x.org', 'b@x.org'] }, 'id', { unsubscribe: link }),
      'unsubscribe_not_carriable',
    );
    await expectMailwardenError(
      () => attachPostmarkTrackingId({ To: 'a@x.org, "B, b" <b@x.org>' }, 'id', { unsubscribe: link }),
      'unsubscribe_not_carriable',
      /The Postmark message goes to 2 recipients/,
    );
    await expectMailwardenError(
      () =>
        attachMandrillTrackingId({ message: { to: [{ email: 'a@x.org' }, { email: 'b@x.org', type: 'to' }] } }, 'id', {
          unsubscribe: link,
        }),
      'unsubscribe_not_carriable',
    );
    await expectMailwardenError(
      () =>
        attachSesHeaderTrackingId(
          { Destination: { ToAddresses: ['a@x.org', 'b@x.org'] }, Content: { Simple: { Subject: { Data: 'Hi' } } } },
          'id',
          { unsubscribe: link },
        ),
      'unsubscribe_not_carriable',
    );
    await expectMailwardenError(
      () => attachSesHeaderTrackingId('To: a@x.org\r\n\r\nHi', 'id', { unsubscribe: link }),
      'unsubscribe_not_carriable',
      /raw MIME message/,
    );
    // Mailgun sends each its copy, but every one must then have a link.
    await expectMailwardenError(
      () =>
        attachMailgunTrackingId({ to: ['a@x.org', 'b@x.org'] }, 'id', {
          unsubscribe: (email) => (email === 'a@x.org' ? link(email) : undefined),
        }),
      'unsubscribe_not_carriable',
      /b@x\.org has no unsubscribe link/,
    );
  });

  it('one recipient: the message-level headers; cc and bcc do not count', () => {
    const mandrill = attachMandrillTrackingId(
      { message: { to: [{ email: 'a@x.org' }, { email: 'c@x.org', type: 'cc' }], headers: { 'list-unsubscribe': '<old>', 'X-A': '1' } } },
      'id',
      { unsubscribe: link },
    );
    const headers = (mandrill.message as { headers: Record<string, string> }).headers;
    expect(Object.keys(headers)).toEqual(['X-A', 'List-Unsubscribe', 'List-Unsubscribe-Post']);
    expect(unsubscribes(headers['List-Unsubscribe'])).toEqual({ email: 'a@x.org', stream: 'marketing' });

    const sendgrid = attachSendGridTrackingId({ to: 'Ana <a@x.org>', cc: 'c@x.org' }, 'id', { unsubscribe: link }) as unknown as {
      headers: Record<string, string>;
    };
    expect(unsubscribes(sendgrid.headers['List-Unsubscribe'])).toEqual({ email: 'a@x.org', stream: 'marketing' });

    const ses = attachSesHeaderTrackingId(
      { Destination: { ToAddresses: ['a@x.org'], CcAddresses: ['c@x.org'] }, Content: { Simple: { Subject: { Data: 'Hi' } } } },
      'id',
      { unsubscribe: link },
    );
    expect((ses.Content.Simple as { Headers?: { Name: string }[] }).Headers!.map((header) => header.Name)).toEqual([
      'List-Unsubscribe',
      'List-Unsubscribe-Post',
      'X-Service-Id',
    ]);
  });

  it('no link for a recipient, or no unsubscribe option: the message is as it was without one', () => {
    const request = { personalizations: [{ to: [{ email: 'a@x.org' }, { email: 'b@x.org' }] }] };
    expect(attachSendGridTrackingId(request, 'id')).toEqual(attachSendGridTrackingId(request, 'id', { unsubscribe: undefined }));
    const single = { personalizations: [{ to: [{ email: 'a@x.org' }] }] };
    expect(attachSendGridTrackingId(single, 'id', { unsubscribe: () => undefined })).toEqual(attachSendGridTrackingId(single, 'id'));
  });

  it('a link whose headers are not two one-line strings is refused', async () => {
    const bad: UnsubscribeLinkOf = () => ({ headers: { 'List-Unsubscribe': '<a>\r\nBcc: x@y.org', 'List-Unsubscribe-Post': POST } });
    await expectMailwardenError(() => attachPostmarkTrackingId({ To: 'a@x.org' }, 'id', { unsubscribe: bad }), 'invalid_request');
  });
});

describe('recipientAddress', () => {
  it.each([
    ['a@x.org', 'a@x.org'],
    ['Ana <a@x.org>', 'a@x.org'],
    ['"Doe, Ana" <a@x.org> ', 'a@x.org'],
    [{ email: 'a@x.org', name: 'Ana' }, 'a@x.org'],
    [{ Email: 'a@x.org' }, 'a@x.org'],
    [{ address: { email: 'a@x.org' } }, 'a@x.org'],
    ['', undefined],
    [42, undefined],
  ])('%j → %s', (value, expected) => {
    expect(recipientAddress(value)).toBe(expected);
  });

  it('splits a list on commas outside quotes and angle brackets', () => {
    expect(recipientAddresses('"Doe, Ana" <a@x.org>, b@x.org,, <c@x.org>')).toEqual(['a@x.org', 'b@x.org', 'c@x.org']);
    expect(recipientAddresses(['a@x.org', { email: 'b@x.org' }])).toEqual(['a@x.org', 'b@x.org']);
  });
});
