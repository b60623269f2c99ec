#!lua
-- resumeStream: resumes a paused stream (stream.resumed, with the cause that paused it).
-- KEYS[1] the paused streams (HASH stream → pausedAt '|' cause)
-- ARGV[1] stream, ARGV[2] now, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength ('' for no feed),
-- ARGV[5] the actor ('' for none)
-- Returns the value it removed, or nil when the stream was not paused.
-- Flags: writes.
--@include "feed"
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('stream.resumed', tonumber(ARGV[2]), { 'st', ARGV[1], 'ca', string.match(existing, '|(.*)$') })
  trimFeed()
end
return existing
