#!lua
-- leaseOutbound: takes or renews the lease on delivering an endpoint's changes: granted when no one
-- holds it, its holder's ended (until <= now), or owner holds it. An endpoint seen for the first time
-- starts at the project's latest seq.
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] owner, ARGV[2] now, ARGV[3] until, ARGV[4] the project's key prefix
-- Returns the state (outboundState), or nil when another owner holds a lease not ended.
-- Flags: writes.
--@include "outboundState"
local lease = redis.call('HMGET', KEYS[1], 'c', 'o', 'u')
if not lease[1] then
  local seq = redis.call('HGET', ARGV[4] .. 'feed', 'seq') or '0'
  redis.call('HSET', KEYS[1], 'c', seq, 'f', 0, 'n', 0)
elseif lease[2] and lease[2] ~= ARGV[1] and tonumber(lease[3]) > tonumber(ARGV[2]) then
  return false
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'u', ARGV[3])
return outboundState(KEYS[1])
