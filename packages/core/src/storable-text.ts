/**
 * What every store can keep exactly: well-formed Unicode (a lone surrogate has no UTF-8 form, so
 * PostgreSQL's JSON and Redis's cjson refuse it) without U+0000 (PostgreSQL text cannot hold it). Text
 * that reaches a store is checked here first, so a store never fails a batch on one bad string and
 * every store accepts or refuses the same events.
 *
 * @returns `undefined` when `text` is storable, else what is wrong with it.
 */
export function storableTextProblem(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return 'contains U+0000';
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return 'contains a lone surrogate';
    i++;
  }
  return undefined;
}
