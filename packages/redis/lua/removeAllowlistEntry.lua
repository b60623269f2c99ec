#!lua
-- removeAllowlistEntry: removes the entry of a key from the project's allowlist.
-- KEYS[1] allowlist, KEYS[2] allowlistOrder (as addAllowlistEntry's)
-- ARGV[1] key, ARGV[2] now ('' for none), ARGV[3] the project's key prefix, ARGV[4] the feed's
-- maxLength ('' for no feed), ARGV[5] the actor ('' for none)
-- Returns the value it removed (createdAt ':' entry), or nil.
-- Flags: writes.
--@include "feed"
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return false end
local colon = string.find(existing, ':', 1, true)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], string.sub(existing, colon + 1) .. '\0' .. string.sub(existing, 1, colon - 1) .. ',' .. ARGV[1])
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('allowlist.removed', tonumber(ARGV[2]) or 0, { 'ak', ARGV[1], 'v', existing })
  trimFeed()
end
return existing
