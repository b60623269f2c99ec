import { describe, expect, it } from 'vitest';
import { attachSesHeaderTrackingId } from '../../src/carriers/ses-header.js';
import { attachSesTagsTrackingId } from '../../src/carriers/ses-tags.js';
import { expectMailwardenError } from '../expect-mailwarden-error.js';

// The shapes of @aws-sdk/client-sesv2 SendBulkEmail and @aws-sdk/client-ses SendBulkTemplatedEmail; the
// consumer-checks workspace runs the same through the SDKs' own types and serializers.
const v2Bulk = () => ({
  FromEmailAddress: 'shop@example.com',
  DefaultContent: { Template: { TemplateName: 'spring', TemplateData: '{}' } },
  BulkEmailEntries: [
    { Destination: { ToAddresses: ['ana@example.org'] } },
    {
      Destination: { ToAddresses: ['bo@example.org'] },
      ReplacementTags: [
        { Name: 'segment', Value: 'b' },
        { Name: 'service_id', Value: 'old' },
      ],
    },
  ],
  ConfigurationSetName: 'tracking',
});

const v1Bulk = () => ({
  Source: 'shop@example.com',
  Template: 'spring',
  DefaultTemplateData: '{}',
  Destinations: [
    { Destination: { ToAddresses: ['ana@example.org'] }, ReplacementTags: [{ Name: 'service_id_enc', Value: 'b64u' }] },
    { Destination: { ToAddresses: ['bo@example.org'] } },
  ],
  DefaultTags: [{ Name: 'team', Value: 'growth' }],
  ConfigurationSetName: 'tracking',
});

describe('attachSesTagsTrackingId on the bulk operations', () => {
  it('v2 SendBulkEmail: DefaultEmailTags, and the ReplacementTags of entries that have them', () => {
    const request = v2Bulk();
    const next = attachSesTagsTrackingId(request, 'spring-sale', { api: 'v2' });
    expect((next as { DefaultEmailTags?: unknown }).DefaultEmailTags).toEqual([{ Name: 'service_id', Value: 'spring-sale' }]);
    expect(next.BulkEmailEntries[0]).toBe(request.BulkEmailEntries[0]);
    expect(next.BulkEmailEntries[1]!.ReplacementTags).toEqual([
      { Name: 'segment', Value: 'b' },
      { Name: 'service_id', Value: 'spring-sale' },
    ]);
    expect(next).not.toHaveProperty('EmailTags');
    expect(request).toEqual(v2Bulk());
  });

  it('v1 SendBulkTemplatedEmail: DefaultTags, and the ReplacementTags of destinations that have them', () => {
    const next = attachSesTagsTrackingId(v1Bulk(), 'spring.sale', { api: 'v1' });
    const encoded = [
      { Name: 'service_id', Value: 'c3ByaW5nLnNhbGU' },
      { Name: 'service_id_enc', Value: 'b64u' },
    ];
    expect(next.DefaultTags).toEqual([{ Name: 'team', Value: 'growth' }, ...encoded]);
    expect(next.Destinations[0]!.ReplacementTags).toEqual(encoded);
    expect(next.Destinations[1]).not.toHaveProperty('ReplacementTags');
    expect(next).not.toHaveProperty('Tags');
  });

  it('refuses a bulk request carrying the single-send tag field, which the SDK would drop', async () => {
    const v2 = await expectMailwardenError(
      () => attachSesTagsTrackingId({ ...v2Bulk(), EmailTags: [] }, 'x', { api: 'v2' }),
      'invalid_request',
    );
    expect(v2.message).toMatch(/SendBulkEmail.*DefaultEmailTags/);
    const v1 = await expectMailwardenError(() => attachSesTagsTrackingId({ ...v1Bulk(), Tags: [] }, 'x', { api: 'v1' }), 'invalid_request');
    expect(v1.message).toMatch(/SendBulkTemplatedEmail.*DefaultTags/);
  });

  it('refuses a bulk request of the other API version', async () => {
    await expectMailwardenError(() => attachSesTagsTrackingId(v1Bulk(), 'x', { api: 'v2' }), 'invalid_request');
    await expectMailwardenError(() => attachSesTagsTrackingId(v2Bulk(), 'x', { api: 'v1' }), 'invalid_request');
  });
});

describe('attachSesHeaderTrackingId on v2 SendBulkEmail', () => {
  it('adds X-Service-Id to DefaultContent.Template.Headers and to the entries that set their own headers', () => {
    const request = {
      ...v2Bulk(),
      DefaultContent: {
        Template: {
          TemplateName: 'spring',
          Headers: [
            { Name: 'x-service-id', Value: 'old' },
            { Name: 'X-A', Value: '1' },
          ],
        },
      },
      BulkEmailEntries: [
        { Destination: { ToAddresses: ['ana@example.org'] } },
        { Destination: { ToAddresses: ['bo@example.org'] }, ReplacementHeaders: [{ Name: 'X-Service-Id', Value: 'other' }] },
      ],
    };
    const next = attachSesHeaderTrackingId(request, 'Frühling');
    const header = { Name: 'X-Service-Id', Value: '=?UTF-8?B?RnLDvGhsaW5n?=' };
    expect(next.DefaultContent.Template.Headers).toEqual([{ Name: 'X-A', Value: '1' }, header]);
    expect(next.BulkEmailEntries[0]).toBe(request.BulkEmailEntries[0]);
    expect(next.BulkEmailEntries[1]!.ReplacementHeaders).toEqual([header]);
    expect(request.DefaultContent.Template.Headers).toHaveLength(2);
  });

  it('refuses a bulk request without a template, or one that also has Content', async () => {
    await expectMailwardenError(() => attachSesHeaderTrackingId({ BulkEmailEntries: [] }, 'x'), 'invalid_request');
    const both = { ...v2Bulk(), Content: { Simple: { Subject: { Data: 'Hi' }, Body: {} } } };
    await expectMailwardenError(() => attachSesHeaderTrackingId(both, 'x'), 'invalid_request');
  });
});
