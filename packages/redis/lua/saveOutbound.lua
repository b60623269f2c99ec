#!lua
-- saveOutbound: writes an endpoint's progress if owner still holds its lease (ended or not, as long
-- as no one took it since), and keeps the lease to until. pausedAt going from null to a time appends
-- endpoint.paused (at that time, with the last error).
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] owner, ARGV[2] until, ARGV[3] the endpoint, ARGV[4] the project's key prefix, ARGV[5] the
-- feed's maxLength ('' for no feed), ARGV[6] the fields that are null, space-separated, ARGV[7..]
-- the others, name and value
-- Returns 1 when written, 0 when owner no longer holds the lease.
-- Flags: writes.
--@include "feed"
local known = redis.call('HMGET', KEYS[1], 'o', 'p')
if known[1] ~= ARGV[1] then return 0 end
local nulls = {}
for name in string.gmatch(ARGV[6], '%S+') do nulls[#nulls + 1] = name end
if #nulls > 0 then redis.call('HDEL', KEYS[1], unpack(nulls)) end
local set, pausedAt, lastError = { 'u', ARGV[2] }, nil, nil
for i = 7, #ARGV, 2 do
  set[#set + 1], set[#set + 2] = ARGV[i], ARGV[i + 1]
  if ARGV[i] == 'p' then pausedAt = ARGV[i + 1] elseif ARGV[i] == 'e' then lastError = ARGV[i + 1] end
end
redis.call('HSET', KEYS[1], unpack(set))
feed = openFeed(ARGV[4], ARGV[5])
if feed and pausedAt and not known[2] then
  local fields = { 'ep', ARGV[3] }
  if lastError then fields[3], fields[4] = 'er', lastError end
  appendChange('endpoint.paused', tonumber(pausedAt), fields, RULE_OUTBOUND)
  trimFeed()
end
return 1
