// Message keys and timeline entry IDs are stored data: every store keeps them, so how they are computed
// may change (for speed) but what they are may not. The definition: the first 32 hex characters of the
// SHA-256 of the UTF-8 text.
import { createHash } from 'node:crypto';
import { messageKey, timelineEntryId } from '@mailwarden/core/store';
import { providers } from '@mailwarden/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';

const definition = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
const text = fc.string({ unit: 'grapheme', maxLength: 80 });

test('a message key is the first 32 hex characters of SHA-256 of provider, message id and recipient, one per line', () => {
  fc.assert(
    fc.property(fc.constantFrom(...providers), text, text, (provider, messageId, recipient) => {
      expect(messageKey(provider, messageId, recipient)).toBe(definition(`${provider}\n${messageId}\n${recipient}`));
    }),
  );
  expect(messageKey('ses', 'msg-1', 'jane@example.com')).toBe('7a33449c5d3d79b23a57686e19775b51');
});

test('a timeline entry id is the first 32 hex characters of SHA-256 of the stored event key', () => {
  fc.assert(
    fc.property(text, (key) => {
      expect(timelineEntryId(key)).toBe(definition(key));
    }),
  );
  expect(timelineEntryId('sendgrid:abc')).toBe('018d440f27e1da21f9960fff77a58f40');
});
