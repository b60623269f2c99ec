-- An event's fact times (core mergeFactTimes' `seen`), aggregated over a batch's events `e`: per counted
-- fact, its earliest event. Position n is core's statColumns[n - 1], {{statFacts.n}} its fact bit.

ARRAY[min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.1}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.2}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.3}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.4}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.5}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.6}} <> 0),
             min(e.first_event_at) FILTER (WHERE e.facts & {{statFacts.7}} <> 0)]
