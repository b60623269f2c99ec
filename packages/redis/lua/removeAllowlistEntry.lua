#!lua
-- removeAllowlistEntry: removes the entry of a key from the project's allowlist.
-- KEYS[1] allowlist, KEYS[2] allowlistOrder (as addAllowlistEntry's)
-- ARGV[1] key
-- Returns the value it removed (createdAt ':' entry), or nil.
-- Flags: writes.
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return false end
local colon = string.find(existing, ':', 1, true)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], string.sub(existing, colon + 1) .. '\0' .. string.sub(existing, 1, colon - 1) .. ',' .. ARGV[1])
return existing
