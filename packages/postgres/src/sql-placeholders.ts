import {
  counterFacts,
  Fact,
  HOUR_MS,
  reasonRanks,
  ruleActors,
  statFacts,
  statusCodes,
  TIMELINE_CAP,
  TIMELINE_LIMITS,
} from '@mailwarden/core/store';
import { INVALIDATION_CHANNEL, type SchemaNames } from './schema-names.js';

/** A placeholder in the SQL files: `{{name}}`, filled in when the text is run. */
export const placeholderPattern = /\{\{([\w.]+)\}\}/g;

const entries = (prefix: string, table: Readonly<Record<string, number>>) =>
  Object.entries(table).map(([name, value]) => [`${prefix}.${name}`, String(value)] as const);

/**
 * The values the SQL files name instead of writing them: core's persisted numbers under their names in
 * `@mailwarden/core/store` (`{{Fact.complained}}`, `{{counterFacts.bounced}}`), the counted facts by
 * their 1-based position, as SQL arrays count (`{{statFacts.1}}` is `statFacts[0]`), the actors of the
 * rules (`'{{ruleActors.expiry}}'`, quoted where used), and the channel.
 */
const constants: ReadonlyMap<string, string> = new Map([
  ...entries('Fact', Fact),
  ...entries('statusCodes', statusCodes),
  ...entries('reasonRanks', reasonRanks),
  ...entries('counterFacts', counterFacts),
  ...Object.entries(ruleActors).map(([name, actor]) => [`ruleActors.${name}`, actor] as const),
  ...statFacts.map((bit, i) => [`statFacts.${i + 1}`, String(bit)] as const),
  ...entries('TIMELINE_LIMITS', TIMELINE_LIMITS),
  ['TIMELINE_CAP', String(TIMELINE_CAP)],
  ['HOUR_MS', String(HOUR_MS)],
  ['INVALIDATION_CHANNEL', INVALIDATION_CHANNEL],
]);

/** Every name a SQL file may write as `{{name}}`: the schema (quoted identifier), as a string literal, then the constants. */
export const placeholderNames: readonly string[] = ['schema', 'schema_literal', ...constants.keys()];

/** A text of `src/generated/sql.ts` as it runs on a schema: every placeholder replaced by its value. */
export function fillPlaceholders(text: string, { identifier, literal }: SchemaNames): string {
  return text.replace(placeholderPattern, (placeholder, name: string) => {
    const value = name === 'schema' ? identifier : name === 'schema_literal' ? literal : constants.get(name);
    // scripts/build-sql.ts refuses unknown names, so only a hand-edited generated module gets here.
    if (value === undefined) throw new Error(`unknown SQL placeholder ${placeholder}`);
    return value;
  });
}
