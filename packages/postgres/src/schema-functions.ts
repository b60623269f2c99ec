import { counterFacts, HOUR_MS, statColumns, statFacts, TIMELINE_CAP, TIMELINE_LIMITS } from '@mailwarden/core/store';
import { INVALIDATION_CHANNEL, type SchemaNames } from './schema-names.js';

/**
 * A function of the schema. Not a versioned step: every `migrate()` creates it, or replaces it when the
 * source in the database differs from this release's (`CREATE OR REPLACE`, which keeps its owner and
 * grants), so a fix to a function is an edit here, not a new migration that copies it. Two rules follow:
 *
 * - During a rolling deploy, instances of the previous release call the new function: it must accept
 *   what they send (`toEventColumns` in postgres-store.ts, or the array of event objects before it) and
 *   answer what they expect.
 * - `CREATE OR REPLACE` cannot change a function's arguments or result type: such a change is a
 *   numbered migration that drops the old function (it runs before the functions are defined).
 */
export interface SchemaFunction {
  name: string;
  /** The arguments as `pg_get_function_identity_arguments` prints them. */
  arguments: string;
  /** The result type as `pg_get_function_result` prints it. */
  returns: string;
  language: 'plpgsql';
  /** The source as `pg_proc.prosrc` keeps it: what `migrate()` compares to decide whether to replace it. */
  body: (schema: SchemaNames) => string;
}

/**
 * The store's `applyEvents`: one call per batch, one transaction. Set-based, with the semantics of applying each
 * event in order: the first occurrence of a key not seen before is applied, the rest are duplicates;
 * messages, counters and suppressions are joins, so their end state does not depend on the order.
 * Every writer locks rows table by table (event_keys, messages, tracking_ids, suppressions), each in
 * key order, so concurrent batches wait for each other instead of deadlocking.
 * p_events: the batch as a JSON object of columns (toEventColumns in postgres-store.ts), or the previous
 * release's array of event objects.
 * Returns one character per event, as core's `eventOutcomeOfCode` reads it: 'd' duplicate, 'a' applied,
 * 's' suppressed (created the address's suppression), or the rank of the reason the event upgraded.
 */
/** A cause's time for a row without provenance: the latest, so the first known cause of its reason replaces it. */
const LATEST = '9223372036854775807';
/** In the suppression upsert: whether the batch's cause beats the stored one (core provenanceWins). */
const causeWins = `(excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, ${LATEST}) < coalesce(s.source_at, ${LATEST})
        OR (coalesce(excluded.source_at, ${LATEST}) = coalesce(s.source_at, ${LATEST})
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))`;

/** An event's fact times (core mergeFactTimes' `seen`), aggregated over a batch: per fact, its earliest event. */
const seenFactTimes = `ARRAY[${statFacts
  .map((bit) => `min(e.first_event_at) FILTER (WHERE e.facts & ${bit} <> 0)`)
  .join(',\n             ')}]`;
/** mergeFactTimes of known k and seen s: a new fact takes the seen time, a timed one the earlier, an untimed one stays untimed. */
const mergedFactTimes = `ARRAY[${statFacts
  .map(
    (bit, i) => `CASE WHEN s.fact_times[${i + 1}] IS NULL THEN k.fact_times[${i + 1}]
        WHEN k.facts & ${bit} = 0 THEN s.fact_times[${i + 1}]
        WHEN k.fact_times[${i + 1}] IS NULL THEN NULL
        ELSE least(k.fact_times[${i + 1}], s.fact_times[${i + 1}]) END`,
  )
  .join(',\n      ')}]`;
/**
 * The merge's input: its rows in order (`seen_events`), joined per address (`seen`): the first email,
 * the strongest reason, the earliest time, the winning cause.
 */
const suppressionEvents = `seen_events AS (
    SELECT (x.event->>'hash') COLLATE "C" AS hash, x.event, x.ord,
           (x.event->>'reason')::smallint AS reason, (x.event->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(event, ord)
  ), seen AS (
    SELECT hash,
           (array_agg(event->>'email' ORDER BY ord))[1] AS email,
           max(reason) AS reason,
           min(created_at) AS created_at,
           (array_agg(event ORDER BY reason DESC, coalesce((event->>'source_at')::bigint, ${LATEST}),
                      coalesce(event->>'cause_event_id', '') COLLATE "C", coalesce(event->>'source', '~') COLLATE "C"))[1] AS cause
    FROM seen_events
    GROUP BY 1
  )`;
/** The `seen` addresses as suppression rows, in hash order (the lock order); ends in a WHERE to extend. */
const suppressionRows = `SELECT p_project_id, hash, email, reason, created_at,
           cause->>'source', (cause->>'source_at')::bigint, cause->>'cause_provider', cause->>'cause_message_id',
           cause->>'cause_event_id', cause->>'cause_diagnostic'
    FROM seen WHERE true`;
const statSums = statColumns.map((_, i) => `coalesce(sum(d) FILTER (WHERE col = ${i + 1}), 0)::integer AS c${i + 1}`).join(', ');
const bucketColumns = 'delivered, hard_bounced, soft_bounced, complained, opened, clicked, unsubscribed';

/**
 * The store's `mergeSuppressions`, and step 5 of `mailwarden_apply_events`: suppression rows (the
 * suppression fields of `toEventRow`: hash, email, reason rank, created_at, the provenance columns)
 * joined in, in one transaction, as if one by one in order: the reason only upgrades, createdAt is
 * the earliest, the provenance is the stronger reason's, then the earlier cause's, then the smaller
 * event ID's (core provenanceWins; a row without provenance compares as the latest). Notifies the hashes
 * it created or changed, once per batch. Returns one character per row: 's' created, the rank of the
 * reason it raised, else 'a'.
 */
const mergeSuppressions: SchemaFunction = {
  name: 'mailwarden_merge_suppressions',
  arguments: 'p_project_id text, p_rows jsonb',
  returns: 'text',
  language: 'plpgsql',
  body: ({ identifier: s, literal }) => `
DECLARE
  v_hashes text[];
  v_suppressed text[];
  v_before jsonb;
  v_chunk integer;
BEGIN
  -- 1. In hash order, addresses without a row get one and the others are locked (WHERE false updates
  --    nothing but still locks), so what each address had before the batch is known and stays so
  --    until commit: the rows' outcomes.
  WITH ${suppressionEvents}, created AS (
    INSERT INTO ${s}.suppressions AS s (project_id, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic)
    ${suppressionRows} ORDER BY hash
    ON CONFLICT (project_id, hash) DO UPDATE SET reason = s.reason WHERE false
    RETURNING s.hash
  )
  SELECT array_agg(hash) INTO v_suppressed FROM created;

  -- 2. The rows that were there: read (a new snapshot: locked rows, as committed) and joined.
  --    Only rows that changed are written, and only they and the created ones are invalidated.
  --    Looked up from the batch's addresses, one primary-key probe each (a scalar subquery: a join
  --    planned while the table's statistics said it was small hash-joins a scan of the whole project),
  --    leaving out those just created (a hash anti-join, not a scan of an array). Every address left
  --    has a row: step 1 locked it.
  WITH ${suppressionEvents}, before AS (
    SELECT e.hash,
           (SELECT x.reason FROM ${s}.suppressions x WHERE x.project_id = p_project_id AND x.hash = e.hash) AS reason
    FROM seen e
    LEFT JOIN unnest(v_suppressed) AS c(hash) ON c.hash = e.hash
    WHERE c.hash IS NULL
  ), written AS (
    INSERT INTO ${s}.suppressions AS s (project_id, hash, email, reason, created_at,
                                        source, source_at, cause_provider, cause_message_id, cause_event_id, cause_diagnostic)
    ${suppressionRows} AND hash IN (SELECT hash FROM before) ORDER BY hash
    ON CONFLICT (project_id, hash) DO UPDATE SET
      reason = greatest(s.reason, excluded.reason),
      created_at = least(s.created_at, excluded.created_at),
      source = CASE WHEN ${causeWins} THEN excluded.source ELSE s.source END,
      source_at = CASE WHEN ${causeWins} THEN excluded.source_at ELSE s.source_at END,
      cause_provider = CASE WHEN ${causeWins} THEN excluded.cause_provider ELSE s.cause_provider END,
      cause_message_id = CASE WHEN ${causeWins} THEN excluded.cause_message_id ELSE s.cause_message_id END,
      cause_event_id = CASE WHEN ${causeWins} THEN excluded.cause_event_id ELSE s.cause_event_id END,
      cause_diagnostic = CASE WHEN ${causeWins} THEN excluded.cause_diagnostic ELSE s.cause_diagnostic END
    WHERE excluded.created_at < s.created_at OR ${causeWins}
    RETURNING s.hash
  )
  SELECT (SELECT array_agg(hash) FROM written) || v_suppressed,
         (SELECT coalesce(jsonb_object_agg(hash, reason), '{}') FROM before)
  INTO v_hashes, v_before;

  -- 3. Delivered to listeners on commit; payloads stay under NOTIFY's 8000-byte limit.
  IF v_hashes IS NOT NULL THEN
    v_chunk := greatest(1, (7900 - octet_length(
      json_build_object('schema', ${literal}, 'projectId', p_project_id, 'hashes', '[]'::json)::text)) / 67);
    FOR i IN 1 .. cardinality(v_hashes) BY v_chunk LOOP
      PERFORM pg_notify('${INVALIDATION_CHANNEL}', json_build_object(
        'schema', ${literal}, 'projectId', p_project_id, 'hashes', v_hashes[i : i + v_chunk - 1])::text);
    END LOOP;
  END IF;

  -- 4. Per row, as if merged one by one (core's eventOutcomeOfCode reads the codes): the first row of
  --    an address that had no suppression created it ('s'); a row whose reason is stronger than all
  --    the address had before it (the stored row's, the batch's earlier rows') raised it from that
  --    (the rank it had); any other 'a'.
  RETURN (
    WITH ${suppressionEvents}, ranked AS (
      SELECT ord, hash, reason,
             max(reason) OVER (PARTITION BY hash ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior
      FROM seen_events
    )
    SELECT coalesce(string_agg(CASE
             WHEN e.prior IS NULL AND NOT v_before ? e.hash THEN 's'
             WHEN e.reason > coalesce(greatest(e.prior, (v_before->>e.hash)::smallint), 0)
               THEN greatest(e.prior, (v_before->>e.hash)::smallint)::text
             ELSE 'a' END, '' ORDER BY e.ord), '')
    FROM ranked e);
END
`,
};

/**
 * The batch's columns, as `toEventColumns` (postgres-store.ts) sends them: one JSON array per column, the
 * n-th element of each belonging to the n-th event, JSON null where an event has no such part; a column
 * no event has is left out. Text columns that are keys compare as bytes (COLLATE "C").
 */
const eventColumns = {
  key: ' COLLATE "C"',
  message_key: ' COLLATE "C"',
  provider: '',
  message_id: '',
  recipient: '',
  tracking_id: ' COLLATE "C"',
  search_key: '',
  facts: '::integer',
  first_event_at: '::bigint',
  last_event_at: '::bigint',
  timeline: 'jsonb',
  suppression: 'jsonb',
} as const;
type EventColumn = keyof typeof eventColumns;

/**
 * The batch's events as rows (`ord` from 1, in event order) with the columns asked for: ROWS FROM zips the
 * columns' arrays side by side, so a statement reads only the columns it uses, each element once.
 */
function batchEvents(...columns: EventColumn[]): string {
  const all: EventColumn[] = ['key', ...columns.filter((column) => column !== 'key')];
  const elements = all.map((column) =>
    eventColumns[column] === 'jsonb' ? `jsonb_array_elements(p_events->'${column}')` : `jsonb_array_elements_text(p_events->'${column}')`,
  );
  const typed = all.map((column) =>
    eventColumns[column] === 'jsonb' ? `nullif(c.${column}, 'null') AS ${column}` : `c.${column}${eventColumns[column]} AS ${column}`,
  );
  return `(SELECT c.ord::integer AS ord, ${typed.join(', ')}
          FROM ROWS FROM (${elements.join(', ')}) WITH ORDINALITY AS c(${all.join(', ')}, ord))`;
}

/** An event's columns in the previous release's shape (one object per event, suppression fields flat): columns, as jsonb_build_object arguments. */
const columnsOfEventObjects = (Object.keys(eventColumns) as EventColumn[])
  .map((column) =>
    column === 'suppression'
      ? `'suppression', jsonb_agg(CASE WHEN x.event ? 'hash' THEN x.event END ORDER BY x.ord)`
      : `'${column}', jsonb_agg(x.event->'${column}' ORDER BY x.ord)`,
  )
  .join(',\n        ');

const applyEvents: SchemaFunction = {
  name: 'mailwarden_apply_events',
  arguments: 'p_project_id text, p_events jsonb',
  returns: 'text',
  language: 'plpgsql',
  // The counters' masks come from core's counterFacts (persisted fact bits): nothing here repeats them.
  body: ({ identifier: s }) => `
DECLARE
  v_outcomes boolean[];
  v_created text[];
  v_recompute text[];
  v_emptied text[];
  v_suppressions jsonb;
  v_suppressed integer[];
  v_codes text := '';
  v_timelines text[];
  v_stats jsonb;
  -- Computed once: per row, the numeric arithmetic cost as much as the key's insert.
  v_seen_at bigint := (extract(epoch FROM transaction_timestamp()) * 1000)::bigint;
BEGIN
  -- 0. The batch comes as columns (toEventColumns). An instance of the previous release, during a
  --    rolling deploy, sends one object per event: those are made columns first.
  IF jsonb_typeof(p_events) = 'array' THEN
    SELECT jsonb_build_object(
        ${columnsOfEventObjects})
    INTO p_events
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(event, ord);
  END IF;

  -- 1. Dedup: record the first occurrence of each key; ON CONFLICT waits for a concurrent batch that
  --    holds the same key and then treats it as seen.
  WITH keys AS (
    SELECT key, ord FROM ${batchEvents('key')} e
  ), firsts AS (
    SELECT DISTINCT ON (key) key, ord FROM keys ORDER BY key, ord
  ), recorded AS (
    INSERT INTO ${s}.event_keys (project_id, key, seen_at)
    SELECT p_project_id, key, v_seen_at
    FROM firsts ORDER BY key
    ON CONFLICT DO NOTHING
    RETURNING key
  )
  SELECT array_agg(r.key IS NOT NULL ORDER BY k.ord) INTO v_outcomes
  FROM keys k LEFT JOIN firsts f ON f.ord = k.ord LEFT JOIN recorded r ON r.key = f.key;

  -- 2. Messages the batch creates are inserted whole; existing ones are only locked (WHERE false
  --    updates nothing but still locks), so step 3 reads them unchanged by anyone else.
  WITH seen AS (
    SELECT e.message_key AS key,
           min(e.provider) AS provider,
           min(e.message_id) AS message_id,
           min(e.recipient) AS recipient,
           -- joinTrackingIds: min() ignores nulls, and compares in code-point order.
           min(e.tracking_id) AS tracking_id,
           bit_or(e.facts) AS facts,
           min(e.first_event_at) AS first_event_at,
           max(e.last_event_at) AS last_event_at,
           ${seenFactTimes} AS fact_times
    FROM ${batchEvents('message_key', 'provider', 'message_id', 'recipient', 'tracking_id', 'facts', 'first_event_at', 'last_event_at')} e
    WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL
    GROUP BY 1
  ), created AS (
    INSERT INTO ${s}.messages AS m
      (project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at, fact_times)
    SELECT p_project_id, key, provider, message_id, recipient, tracking_id, facts, first_event_at, last_event_at, fact_times
    FROM seen ORDER BY key
    ON CONFLICT (project_id, key) DO UPDATE SET facts = m.facts WHERE false
    RETURNING m.key
  )
  SELECT coalesce(array_agg(key), '{}') INTO v_created FROM created;

  -- 3. mergeMessage on the existing messages, then trackingIdDeltas of every message the batch
  --    touched, summed per tracking ID and applied in tracking-ID order.
  WITH seen AS (
    SELECT e.message_key AS key,
           min(e.tracking_id) AS tracking_id,
           bit_or(e.facts) AS facts,
           min(e.first_event_at) AS first_event_at,
           max(e.last_event_at) AS last_event_at,
           ${seenFactTimes} AS fact_times
    FROM ${batchEvents('message_key', 'tracking_id', 'facts', 'first_event_at', 'last_event_at')} e
    WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL
    GROUP BY 1
  ), new_messages AS (
    SELECT s.* FROM seen s JOIN unnest(v_created) AS c(key) ON c.key = s.key
  ), known AS (
    SELECT m.key, m.tracking_id, m.facts, m.first_event_at, m.last_event_at, m.fact_times
    FROM (SELECT key FROM seen EXCEPT ALL SELECT key FROM new_messages) e
    JOIN ${s}.messages m ON m.project_id = p_project_id AND m.key = e.key
  ), merged AS (
    UPDATE ${s}.messages m SET
      tracking_id = least(k.tracking_id, s.tracking_id),
      facts = k.facts | s.facts,
      first_event_at = least(k.first_event_at, s.first_event_at),
      last_event_at = greatest(k.last_event_at, s.last_event_at),
      fact_times = ${mergedFactTimes}
    FROM known k JOIN seen s ON s.key = k.key
    WHERE m.project_id = p_project_id AND m.key = k.key
      AND (least(k.tracking_id, s.tracking_id) IS DISTINCT FROM k.tracking_id OR k.facts | s.facts <> k.facts
           OR s.first_event_at < k.first_event_at OR s.last_event_at > k.last_event_at
           OR ${mergedFactTimes} IS DISTINCT FROM k.fact_times)
    RETURNING k.tracking_id AS before_id, k.facts AS before_facts, m.tracking_id, m.facts, m.last_event_at,
              k.fact_times AS before_times, m.fact_times
  ), changes AS (
    SELECT before_id, before_facts, tracking_id, facts, last_event_at, before_times, fact_times FROM merged
    UNION ALL
    SELECT NULL, NULL, tracking_id, facts, last_event_at, NULL::bigint[], fact_times FROM new_messages
  ), stat_moves AS (
    -- statsMoves: what a message counted leaves its hours, what it counts comes in; '' is the project.
    SELECT x.t, x.col, -1 AS d, c.before_id AS tracking_id
    FROM changes c CROSS JOIN LATERAL unnest(c.before_times) WITH ORDINALITY AS x(t, col) WHERE x.t IS NOT NULL
    UNION ALL
    SELECT x.t, x.col, 1, c.tracking_id
    FROM changes c CROSS JOIN LATERAL unnest(c.fact_times) WITH ORDINALITY AS x(t, col) WHERE x.t IS NOT NULL
  ), stat_totals AS (
    -- The hour by integer floor division (numeric division cost a millisecond a batch).
    SELECT scope, t / ${HOUR_MS} - (t % ${HOUR_MS} < 0)::integer AS hour, ${statSums}
    FROM (SELECT ''::text COLLATE "C" AS scope, t, col, d FROM stat_moves
          UNION ALL
          SELECT tracking_id, t, col, d FROM stat_moves WHERE tracking_id IS NOT NULL) m
    GROUP BY 1, 2
  ), deltas AS (
    -- A message leaving its tracking ID takes its counts along; the row's lastEventAt is recomputed.
    SELECT before_id AS tracking_id, -1 AS messages,
           -(before_facts & ${counterFacts.delivered} <> 0)::integer AS delivered,
           -(before_facts & ${counterFacts.bounced} <> 0)::integer AS bounced,
           -(before_facts & ${counterFacts.complained} <> 0)::integer AS complained,
           -(before_facts & ${counterFacts.opened} <> 0)::integer AS opened,
           -(before_facts & ${counterFacts.clicked} <> 0)::integer AS clicked,
           -(before_facts & ${counterFacts.unsubscribed} <> 0)::integer AS unsubscribed,
           NULL::bigint AS raise, true AS recompute
    FROM changes WHERE before_id IS NOT NULL AND before_id IS DISTINCT FROM tracking_id
    UNION ALL
    -- Counters move only when a fact flips from false to true.
    SELECT tracking_id, (before_id IS DISTINCT FROM tracking_id)::integer,
           (facts & ${counterFacts.delivered} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.delivered} <> 0)::integer ELSE 0 END,
           (facts & ${counterFacts.bounced} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.bounced} <> 0)::integer ELSE 0 END,
           (facts & ${counterFacts.complained} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.complained} <> 0)::integer ELSE 0 END,
           (facts & ${counterFacts.opened} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.opened} <> 0)::integer ELSE 0 END,
           (facts & ${counterFacts.clicked} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.clicked} <> 0)::integer ELSE 0 END,
           (facts & ${counterFacts.unsubscribed} <> 0)::integer
             - CASE WHEN before_id = tracking_id THEN (before_facts & ${counterFacts.unsubscribed} <> 0)::integer ELSE 0 END,
           last_event_at, false
    FROM changes WHERE tracking_id IS NOT NULL
  ), totals AS (
    SELECT tracking_id, sum(messages)::integer AS messages, sum(delivered)::integer AS delivered,
           sum(bounced)::integer AS bounced, sum(complained)::integer AS complained,
           sum(opened)::integer AS opened, sum(clicked)::integer AS clicked, sum(unsubscribed)::integer AS unsubscribed,
           max(raise) AS raise, bool_or(recompute) AS recompute
    FROM deltas GROUP BY tracking_id
  ), search_keys AS (
    SELECT DISTINCT ON (tracking_id) tracking_id, search_key
    FROM ${batchEvents('tracking_id', 'search_key')} e WHERE e.tracking_id IS NOT NULL
  ), moved AS (
    INSERT INTO ${s}.tracking_ids AS t
      (project_id, tracking_id, search_key, messages, delivered, bounced, complained, last_event_at, opened, clicked, unsubscribed)
    -- NOT NULL is checked before the conflict is: a row only left has no raise, and is recomputed.
    SELECT p_project_id, d.tracking_id, coalesce(k.search_key, lower(d.tracking_id)),
           d.messages, d.delivered, d.bounced, d.complained, coalesce(d.raise, -9223372036854775808),
           d.opened, d.clicked, d.unsubscribed
    FROM totals d LEFT JOIN search_keys k ON k.tracking_id = d.tracking_id
    ORDER BY d.tracking_id
    ON CONFLICT (project_id, tracking_id) DO UPDATE SET
      messages = t.messages + excluded.messages,
      delivered = t.delivered + excluded.delivered,
      bounced = t.bounced + excluded.bounced,
      complained = t.complained + excluded.complained,
      opened = t.opened + excluded.opened,
      clicked = t.clicked + excluded.clicked,
      unsubscribed = t.unsubscribed + excluded.unsubscribed,
      last_event_at = greatest(t.last_event_at, excluded.last_event_at)
    RETURNING t.tracking_id, t.messages
  )
  SELECT array_agg(m.tracking_id) FILTER (WHERE m.messages > 0 AND d.recompute),
         array_agg(m.tracking_id) FILTER (WHERE m.messages <= 0)
         , (SELECT jsonb_agg(to_jsonb(t)) FROM stat_totals t WHERE ${statColumns.map((_, i) => `c${i + 1} <> 0`).join(' OR ')})
  INTO v_recompute, v_emptied, v_stats
  FROM moved m JOIN totals d ON d.tracking_id = m.tracking_id;

  -- 4. Rows this transaction holds locked: a new snapshot sees every message change committed before.
  IF v_emptied IS NOT NULL THEN
    DELETE FROM ${s}.tracking_ids WHERE project_id = p_project_id AND tracking_id = ANY (v_emptied);
  END IF;
  IF v_recompute IS NOT NULL THEN
    -- From the messages still there; when retention purged them all, the row keeps its time.
    UPDATE ${s}.tracking_ids t SET last_event_at = coalesce((
      SELECT max(m.last_event_at) FROM ${s}.messages m
      WHERE m.project_id = p_project_id AND m.tracking_id = t.tracking_id
    ), t.last_event_at)
    WHERE t.project_id = p_project_id AND t.tracking_id = ANY (v_recompute);
  END IF;

  -- 4a. Counts over time: the hour buckets step 3 moved, in (scope, hour) order after the tracking-ID
  --     rows. A bucket is one hot row per project and hour: concurrent batches of a project queue on it.
  IF v_stats IS NOT NULL THEN
    INSERT INTO ${s}.stat_buckets AS b (project_id, tracking_id, hour, ${bucketColumns})
    SELECT p_project_id, x.scope, x.hour, ${statColumns.map((_, i) => `x.c${i + 1}`).join(', ')}
    FROM jsonb_to_recordset(v_stats) AS x(scope text, hour bigint, ${statColumns.map((_, i) => `c${i + 1} integer`).join(', ')})
    ORDER BY x.scope COLLATE "C", x.hour
    ON CONFLICT (project_id, tracking_id, hour) DO UPDATE SET
      ${bucketColumns.split(', ').map((c) => `${c} = b.${c} + excluded.${c}`).join(',\n      ')};
  END IF;

  -- 4b. Timelines (insertTimelineEntry): the entries of applied events, an entry of the same time and id
  --     once; then each touched timeline over the cap loses what lies between its first and latest
  --     entries kept. Its message row is locked since step 2, so no other batch changes it meanwhile.
  --     A message step 2 created had no entries before this batch, so its timeline is over the cap
  --     only if the batch added more than the cap: the others are not read again.
  WITH added AS (
    INSERT INTO ${s}.timeline_entries (project_id, message_key, occurred_at, id, entry)
    SELECT DISTINCT ON (e.message_key, e.occurred_at, e.id) p_project_id, e.message_key, e.occurred_at, e.id, e.entry
    FROM (SELECT e.message_key, (e.timeline->>'occurredAt')::bigint AS occurred_at,
                 (e.timeline->>'id') COLLATE "C" AS id, e.timeline AS entry
          FROM ${batchEvents('message_key', 'timeline')} e
          WHERE v_outcomes[e.ord] AND e.message_key IS NOT NULL AND e.timeline IS NOT NULL) e
    ORDER BY e.message_key, e.occurred_at, e.id
    ON CONFLICT DO NOTHING
    RETURNING message_key
  )
  SELECT array_agg(a.message_key) INTO v_timelines
  FROM (SELECT message_key, count(*) AS n FROM added GROUP BY 1) a
  LEFT JOIN unnest(v_created) AS c(key) ON c.key = a.message_key
  WHERE c.key IS NULL OR a.n > ${TIMELINE_CAP};
  IF v_timelines IS NOT NULL THEN
    DELETE FROM ${s}.timeline_entries t USING (
      SELECT message_key, occurred_at, id FROM (
        SELECT message_key, occurred_at, id,
               row_number() OVER (PARTITION BY message_key ORDER BY occurred_at, id) AS n,
               count(*) OVER (PARTITION BY message_key) AS total
        FROM ${s}.timeline_entries WHERE project_id = p_project_id AND message_key = ANY (v_timelines)
      ) r WHERE r.total > ${TIMELINE_CAP} AND r.n > ${TIMELINE_LIMITS.first} AND r.n <= r.total - ${TIMELINE_LIMITS.latest}
    ) d
    WHERE t.project_id = p_project_id AND t.message_key = d.message_key AND t.occurred_at = d.occurred_at AND t.id = d.id;
  END IF;

  -- 5. Suppressions: the applied events' suppressions, in event order, joined by
  --    mailwarden_merge_suppressions (which also notifies); its codes are theirs.
  SELECT jsonb_agg(e.suppression ORDER BY e.ord), array_agg(e.ord ORDER BY e.ord) INTO v_suppressions, v_suppressed
  FROM ${batchEvents('suppression')} e WHERE v_outcomes[e.ord] AND e.suppression IS NOT NULL;
  IF v_suppressions IS NOT NULL THEN
    v_codes := ${s}.mailwarden_merge_suppressions(p_project_id, v_suppressions);
  END IF;

  -- 6. Per event (EventOutcome, as core's eventOutcomeOfCode reads it): 'd' for a duplicate, the
  --    merge's code for an event with a suppression (the n-th of them gets the n-th code), else 'a'.
  RETURN (
    SELECT string_agg(CASE WHEN NOT o.applied THEN 'd' WHEN h.n IS NULL THEN 'a' ELSE substr(v_codes, h.n::integer, 1) END, '' ORDER BY o.ord)
    FROM unnest(v_outcomes) WITH ORDINALITY AS o(applied, ord)
    LEFT JOIN unnest(v_suppressed) WITH ORDINALITY AS h(ord, n) ON h.ord = o.ord);
END
`,
};

/** Every function of the schema, defined in this order by every `migrate()`. */
export const schemaFunctions: readonly SchemaFunction[] = [mergeSuppressions, applyEvents];
