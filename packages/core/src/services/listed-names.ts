import { MailwardenError } from '../errors.js';

/**
 * The names a list parameter holds (the feed's `kind` and `actor`), as given: an array, each item
 * comma-separated, blanks dropped. Throws `invalid_request` with `notText` when an item is not text.
 */
export function listedNames(input: unknown, notText: string): string[] {
  const items = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) throw new MailwardenError('invalid_request', notText);
  return (items as string[]).flatMap((item) => item.split(',')).flatMap((name) => (name.trim() === '' ? [] : [name.trim()]));
}
