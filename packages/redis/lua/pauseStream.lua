#!lua
-- pauseStream: pauses a stream's sending unless it is paused (stream.paused, cause operator).
-- KEYS[1] the paused streams (HASH stream → pausedAt '|' cause)
-- ARGV[1] stream, ARGV[2] now, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength ('' for no feed),
-- ARGV[5] the actor ('' for none)
-- Returns the value of the stream already paused, or nil once paused.
-- Flags: writes.
--@include "feed"
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|operator')
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('stream.paused', tonumber(ARGV[2]), { 'st', ARGV[1], 'ca', 'operator' })
  trimFeed()
end
return false
