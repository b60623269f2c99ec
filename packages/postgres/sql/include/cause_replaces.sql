-- In the suppression upsert of mailwarden_merge_suppressions: whether the batch's cause (excluded)
-- replaces the stored one (s): the stored row is expired at `v_now` (it counts as absent, so the batch's
-- row replaces it whole), or the batch's cause wins (cause_wins.sql). The provenance's columns, the
-- expiry among them, go together.

(coalesce(s.expires_at <= v_now, false) OR {{> cause_wins}})
