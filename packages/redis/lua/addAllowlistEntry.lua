#!lua
-- addAllowlistEntry: adds an entry to the project's allowlist unless its key is there.
-- KEYS[1] allowlist (HASH key → createdAt ':' entry), KEYS[2] allowlistOrder (ZSET, scores 0: entry,
-- NUL, createdAt ',' key; layout.ts allowlistMember)
-- ARGV[1] key, ARGV[2] entry, ARGV[3] createdAt, ARGV[4] the project's key prefix, ARGV[5] the
-- feed's maxLength ('' for no feed), ARGV[6] the actor ('' for none)
-- Returns the existing value, or nil once added.
-- Flags: writes.
--@include "feed"
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ':' .. ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[2] .. '\0' .. ARGV[3] .. ',' .. ARGV[1])
feed = openFeed(ARGV[4], ARGV[5])
actor = ARGV[6] ~= '' and ARGV[6]
if feed then
  appendChange('allowlist.added', tonumber(ARGV[3]), { 'ak', ARGV[1], 'v', ARGV[3] .. ':' .. ARGV[2] })
  trimFeed()
end
return false
