/**
 * The domain `MessageQuery.recipientDomain` compares: the text after the recipient's first `@`, or all
 * of it when it has none. A normalized address has exactly one `@` (a local part cannot hold one), so
 * this is its domain; the rule for any other text is only so that every store answers alike.
 */
export function recipientDomainOf(recipient: string): string {
  return recipient.slice(recipient.indexOf('@') + 1);
}
