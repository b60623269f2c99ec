#!lua flags=no-writes
-- getStats: the hour buckets of some days.
-- KEYS[1..] day HASHes of hour buckets (layout.ts statsKeyOf)
-- Returns each one's fields and values, flat.
-- Flags: no-writes (EVALSHA_RO).
local reply = {}
for i, key in ipairs(KEYS) do reply[i] = redis.call('HGETALL', key) end
return reply
