import {
  SESClient,
  SendBulkTemplatedEmailCommand,
  SendEmailCommand as SendEmailV1Command,
  SendRawEmailCommand,
  type SendBulkTemplatedEmailCommandInput,
} from '@aws-sdk/client-ses';
import { SESv2Client, SendBulkEmailCommand, SendEmailCommand, type SendBulkEmailCommandInput } from '@aws-sdk/client-sesv2';
import { attachSesHeaderTrackingId, attachSesTagsTrackingId } from '@mailwarden/core';
import { describe, expect, it } from 'vitest';

/**
 * The HTTP request the real SDK would send: its serializer, middleware and signer run, and this request
 * handler (the SDK's own extension point) keeps the request instead of sending it, then fails the call.
 */
class Captured extends Error {
  constructor(readonly body: string) {
    super('captured');
  }
}
const requestHandler = {
  async handle(request: { body?: unknown }): Promise<never> {
    throw new Captured(typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array));
  },
};
const config = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  maxAttempts: 1,
  requestHandler,
};
const sesv1 = new SESClient(config);
const sesv2 = new SESv2Client(config);

async function wireBody(send: () => Promise<unknown>): Promise<string> {
  try {
    await send();
  } catch (error) {
    if (error instanceof Captured) return error.body;
    throw error;
  }
  throw new Error('the request handler was not called');
}

/** The tags of an SES v1 (Query protocol) body: `<List>.member.<n>.Name` / `.Value`, in order. */
function queryTags(body: string, list: string): { Name: string; Value: string }[] {
  const form = new URLSearchParams(body);
  const tags: { Name: string; Value: string }[] = [];
  for (let n = 1; form.has(`${list}.member.${n}.Name`); n++) {
    tags.push({ Name: form.get(`${list}.member.${n}.Name`)!, Value: form.get(`${list}.member.${n}.Value`)! });
  }
  return tags;
}

const spring = [{ Name: 'service_id', Value: 'spring-sale' }];
const encoded = [
  { Name: 'service_id', Value: 'c3ByaW5nLnNhbGU' },
  { Name: 'service_id_enc', Value: 'b64u' },
];

describe('SES tags through the AWS SDK v3 serializers: the tags are in the wire request', () => {
  it('v2 SendEmail: EmailTags', async () => {
    const input = attachSesTagsTrackingId(
      {
        FromEmailAddress: 'shop@example.com',
        Destination: { ToAddresses: ['ana@example.org'] },
        Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
      },
      'spring-sale',
      { api: 'v2' },
    );
    const body = JSON.parse(await wireBody(() => sesv2.send(new SendEmailCommand(input)))) as Record<string, unknown>;
    expect(body['EmailTags']).toEqual(spring);
  });

  it('v2 SendEmail and v1 SendEmail with a stream: service_stream beside service_id', async () => {
    const stream = { Name: 'service_stream', Value: 'weekly-digest' };
    const v2 = attachSesTagsTrackingId(
      {
        FromEmailAddress: 'shop@example.com',
        Destination: { ToAddresses: ['ana@example.org'] },
        Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
      },
      'spring-sale',
      { api: 'v2', stream: 'weekly-digest' },
    );
    const body = JSON.parse(await wireBody(() => sesv2.send(new SendEmailCommand(v2)))) as Record<string, unknown>;
    expect(body['EmailTags']).toEqual([...spring, stream]);
    const v1 = attachSesTagsTrackingId(
      { Source: 'shop@example.com', Destination: { ToAddresses: ['ana@example.org'] }, Message: { Subject: { Data: 'Hi' }, Body: {} } },
      'spring-sale',
      { api: 'v1', stream: 'weekly-digest' },
    );
    expect(queryTags(await wireBody(() => sesv1.send(new SendEmailV1Command(v1))), 'Tags')).toEqual([...spring, stream]);
    // And the header carrier: X-Service-Stream beside X-Service-Id in Content.Simple.Headers.
    const headers = attachSesHeaderTrackingId(
      {
        FromEmailAddress: 'shop@example.com',
        Destination: { ToAddresses: ['ana@example.org'] },
        Content: { Simple: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } } },
      },
      'spring-sale',
      { stream: 'weekly-digest' },
    );
    const sent = JSON.parse(await wireBody(() => sesv2.send(new SendEmailCommand(headers)))) as {
      Content: { Simple: { Headers: unknown } };
    };
    expect(sent.Content.Simple.Headers).toEqual([
      { Name: 'X-Service-Id', Value: 'spring-sale' },
      { Name: 'X-Service-Stream', Value: 'weekly-digest' },
    ]);
  });

  it('v2 SendBulkEmail: DefaultEmailTags, and the ReplacementTags of an entry that has them', async () => {
    const request: SendBulkEmailCommandInput = {
      FromEmailAddress: 'shop@example.com',
      DefaultContent: { Template: { TemplateName: 'spring', TemplateData: '{}' } },
      BulkEmailEntries: [
        { Destination: { ToAddresses: ['ana@example.org'] } },
        { Destination: { ToAddresses: ['bo@example.org'] }, ReplacementTags: [{ Name: 'segment', Value: 'b' }] },
      ],
    };
    const input: SendBulkEmailCommandInput = attachSesTagsTrackingId(request, 'spring-sale', { api: 'v2' });
    const body = JSON.parse(await wireBody(() => sesv2.send(new SendBulkEmailCommand(input)))) as {
      DefaultEmailTags?: unknown;
      BulkEmailEntries: { ReplacementTags?: unknown }[];
    };
    expect(body.DefaultEmailTags).toEqual(spring);
    expect(body.BulkEmailEntries[0]!.ReplacementTags).toBeUndefined();
    expect(body.BulkEmailEntries[1]!.ReplacementTags).toEqual([{ Name: 'segment', Value: 'b' }, ...spring]);
  });

  it('v1 SendRawEmail: Tags', async () => {
    const input = attachSesTagsTrackingId({ RawMessage: { Data: new TextEncoder().encode('Subject: Hi\r\n\r\nHello') } }, 'spring.sale', {
      api: 'v1',
    });
    const body = await wireBody(() => sesv1.send(new SendRawEmailCommand(input)));
    expect(queryTags(body, 'Tags')).toEqual(encoded);
  });

  it('v1 SendBulkTemplatedEmail: DefaultTags, and the ReplacementTags of a destination that has them', async () => {
    const request: SendBulkTemplatedEmailCommandInput = {
      Source: 'shop@example.com',
      Template: 'spring',
      DefaultTemplateData: '{}',
      Destinations: [
        { Destination: { ToAddresses: ['ana@example.org'] }, ReplacementTags: [{ Name: 'segment', Value: 'a' }] },
        { Destination: { ToAddresses: ['bo@example.org'] } },
      ],
    };
    const input: SendBulkTemplatedEmailCommandInput = attachSesTagsTrackingId(request, 'spring.sale', { api: 'v1' });
    const body = await wireBody(() => sesv1.send(new SendBulkTemplatedEmailCommand(input)));
    expect(queryTags(body, 'DefaultTags')).toEqual(encoded);
    expect(queryTags(body, 'Destinations.member.1.ReplacementTags')).toEqual([{ Name: 'segment', Value: 'a' }, ...encoded]);
    expect(queryTags(body, 'Destinations.member.2.ReplacementTags')).toEqual([]);
  });

  it('shows the failure the bulk shapes fix: the SDK drops single-send tag fields from a bulk send, and the send goes ahead', async () => {
    const v2 = {
      FromEmailAddress: 'shop@example.com',
      DefaultContent: { Template: { TemplateName: 'spring' } },
      BulkEmailEntries: [],
      EmailTags: spring,
    };
    const v2Body = JSON.parse(await wireBody(() => sesv2.send(new SendBulkEmailCommand(v2)))) as Record<string, unknown>;
    expect(v2Body).not.toHaveProperty('EmailTags');
    const v1 = { Source: 'shop@example.com', Template: 'spring', DefaultTemplateData: '{}', Destinations: [], Tags: spring };
    expect(await wireBody(() => sesv1.send(new SendBulkTemplatedEmailCommand(v1)))).not.toMatch(/(^|&)Tags\./);
    // ...which is why the helper refuses that mix instead of returning it.
    expect(() => attachSesTagsTrackingId(v2, 'x', { api: 'v2' })).toThrow(/DefaultEmailTags/);
    expect(() => attachSesTagsTrackingId(v1, 'x', { api: 'v1' })).toThrow(/DefaultTags/);
  });

  it('v1 SendEmail: the v1 single send works too', async () => {
    const input = attachSesTagsTrackingId(
      {
        Source: 'shop@example.com',
        Destination: { ToAddresses: ['ana@example.org'] },
        Message: { Subject: { Data: 'Hi' }, Body: { Text: { Data: 'Hello' } } },
      },
      'spring-sale',
      { api: 'v1' },
    );
    expect(queryTags(await wireBody(() => sesv1.send(new SendEmailV1Command(input))), 'Tags')).toEqual(spring);
  });
});

describe('X-Service-Id through the AWS SDK v3 serializer', () => {
  it('v2 SendBulkEmail: DefaultContent.Template.Headers, and the ReplacementHeaders of an entry that has them', async () => {
    const request: SendBulkEmailCommandInput = {
      FromEmailAddress: 'shop@example.com',
      DefaultContent: { Template: { TemplateName: 'spring' } },
      BulkEmailEntries: [
        { Destination: { ToAddresses: ['ana@example.org'] } },
        { Destination: { ToAddresses: ['bo@example.org'] }, ReplacementHeaders: [{ Name: 'X-Campaign', Value: 'b' }] },
      ],
    };
    const input: SendBulkEmailCommandInput = attachSesHeaderTrackingId(request, 'spring-sale');
    const body = JSON.parse(await wireBody(() => sesv2.send(new SendBulkEmailCommand(input)))) as {
      DefaultContent: { Template: { Headers?: unknown } };
      BulkEmailEntries: { ReplacementHeaders?: unknown }[];
    };
    const header = { Name: 'X-Service-Id', Value: 'spring-sale' };
    expect(body.DefaultContent.Template.Headers).toEqual([header]);
    expect(body.BulkEmailEntries[0]!.ReplacementHeaders).toBeUndefined();
    expect(body.BulkEmailEntries[1]!.ReplacementHeaders).toEqual([{ Name: 'X-Campaign', Value: 'b' }, header]);
  });
});
