#!lua flags=no-writes
-- getMessage: one message and its timeline.
-- KEYS[1] the message's hash, KEYS[2] its timeline
-- Returns nil for no message, else fields p, i, r, t, f, a, b, s, then the timeline's members in order.
-- Flags: no-writes (EVALSHA_RO).
local m = redis.call('HMGET', KEYS[1], 'p', 'i', 'r', 't', 'f', 'a', 'b', 's')
if not m[5] then return false end
local reply = { m[1], m[2], m[3], m[4] or false, m[5], m[6], m[7], m[8] or false }
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do reply[#reply + 1] = member end
return reply
