#!lua
-- resumeOutbound: resumes a paused endpoint (pausedAt, failures, failingSince and lastError cleared,
-- nextAttemptAt 0, the cursor kept) and appends endpoint.resumed; a running endpoint stays as it is.
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] now, ARGV[2] the endpoint, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength
-- ('' for no feed), ARGV[5] the actor ('' for none)
-- Returns the state (outboundState), or nil for an endpoint never leased.
-- Flags: writes.
--@include "outboundState"
--@include "feed"
local known = redis.call('HMGET', KEYS[1], 'c', 'p')
if not known[1] then return false end
if known[2] then
  redis.call('HDEL', KEYS[1], 'p', 'fs', 'e')
  redis.call('HSET', KEYS[1], 'f', 0, 'n', 0)
  feed = openFeed(ARGV[3], ARGV[4])
  actor = ARGV[5] ~= '' and ARGV[5]
  if feed then
    appendChange('endpoint.resumed', tonumber(ARGV[1]), { 'ep', ARGV[2] })
    trimFeed()
  end
end
return outboundState(KEYS[1])
