-- An alert window's flags of a column `facts`: 1 hard-bounced, 2 complained (mailwarden_apply_alerts).
-- Bitwise operators share one precedence in PostgreSQL, left to right: hence the parentheses.

((facts & {{Fact.hard_bounced}} <> 0)::integer | ((facts & {{Fact.complained}} <> 0)::integer << 1))
