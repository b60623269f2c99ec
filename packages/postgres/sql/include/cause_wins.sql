-- In the suppression upsert of mailwarden_merge_suppressions: whether the batch's cause (excluded) beats
-- the stored one (s), as core's provenanceWins decides: the stronger reason, then the earlier cause, then
-- the smaller event ID, then the source. A cause without a time (a row from before provenance) compares
-- as the latest, 9223372036854775807, so the first known cause of its reason replaces it.

(excluded.reason > s.reason OR (excluded.reason = s.reason AND (
        coalesce(excluded.source_at, 9223372036854775807) < coalesce(s.source_at, 9223372036854775807)
        OR (coalesce(excluded.source_at, 9223372036854775807) = coalesce(s.source_at, 9223372036854775807)
            AND (coalesce(excluded.cause_event_id, '') COLLATE "C" < coalesce(s.cause_event_id, '') COLLATE "C"
                 OR (coalesce(excluded.cause_event_id, '') = coalesce(s.cause_event_id, '')
                     AND coalesce(excluded.source, '~') COLLATE "C" < coalesce(s.source, '~') COLLATE "C"))))))
