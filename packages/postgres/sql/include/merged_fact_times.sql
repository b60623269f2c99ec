-- mergeFactTimes (core) of a message's known times `k` and a batch's seen times `s` (seen_fact_times.sql):
-- a new fact takes the seen time, a timed one the earlier, an untimed one stays untimed. Position n is
-- core's statColumns[n - 1], {{statFacts.n}} its fact bit.

ARRAY[CASE WHEN s.fact_times[1] IS NULL THEN k.fact_times[1]
        WHEN k.facts & {{statFacts.1}} = 0 THEN s.fact_times[1]
        WHEN k.fact_times[1] IS NULL THEN NULL
        ELSE least(k.fact_times[1], s.fact_times[1]) END,
      CASE WHEN s.fact_times[2] IS NULL THEN k.fact_times[2]
        WHEN k.facts & {{statFacts.2}} = 0 THEN s.fact_times[2]
        WHEN k.fact_times[2] IS NULL THEN NULL
        ELSE least(k.fact_times[2], s.fact_times[2]) END,
      CASE WHEN s.fact_times[3] IS NULL THEN k.fact_times[3]
        WHEN k.facts & {{statFacts.3}} = 0 THEN s.fact_times[3]
        WHEN k.fact_times[3] IS NULL THEN NULL
        ELSE least(k.fact_times[3], s.fact_times[3]) END,
      CASE WHEN s.fact_times[4] IS NULL THEN k.fact_times[4]
        WHEN k.facts & {{statFacts.4}} = 0 THEN s.fact_times[4]
        WHEN k.fact_times[4] IS NULL THEN NULL
        ELSE least(k.fact_times[4], s.fact_times[4]) END,
      CASE WHEN s.fact_times[5] IS NULL THEN k.fact_times[5]
        WHEN k.facts & {{statFacts.5}} = 0 THEN s.fact_times[5]
        WHEN k.fact_times[5] IS NULL THEN NULL
        ELSE least(k.fact_times[5], s.fact_times[5]) END,
      CASE WHEN s.fact_times[6] IS NULL THEN k.fact_times[6]
        WHEN k.facts & {{statFacts.6}} = 0 THEN s.fact_times[6]
        WHEN k.fact_times[6] IS NULL THEN NULL
        ELSE least(k.fact_times[6], s.fact_times[6]) END,
      CASE WHEN s.fact_times[7] IS NULL THEN k.fact_times[7]
        WHEN k.facts & {{statFacts.7}} = 0 THEN s.fact_times[7]
        WHEN k.fact_times[7] IS NULL THEN NULL
        ELSE least(k.fact_times[7], s.fact_times[7]) END]
