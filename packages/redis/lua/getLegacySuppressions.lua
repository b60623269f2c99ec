#!lua flags=no-writes
-- getLegacySuppressions: the checks of a project that may hold suppressions of the old layout: each
-- hash's value under its binary field, else under the hex one, in one atomic read.
-- KEYS[1] suppressions, KEYS[2] legacySuppressionOrder, KEYS[3] (for a check in a stream) that stream's
-- HASH
-- ARGV[1..] the hashes (64 hex)
-- Returns 1 while the old layout's order exists (0 once upgraded), then the values (false for none),
-- then, with KEYS[3], each hash's value in the stream's list (no old layout there).
-- Flags: no-writes (EVALSHA_RO).
--@include "suppressionLayout"
--@include "hex"
local reply = { redis.call('EXISTS', KEYS[2]) }
for i, h in ipairs(ARGV) do
  local field = fieldOf(unhex(h))
  local values = redis.call('HMGET', KEYS[1], field, h)
  reply[i + 1] = values[1] or values[2]
  if KEYS[3] then reply[#ARGV + i + 1] = redis.call('HGET', KEYS[3], field) end
end
return reply
