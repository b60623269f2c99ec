#!lua
-- syncApiKeys: makes the project's stored keys equal to the given ones, and appends per difference,
-- in name order, key.added, key.updated or key.removed (core Store.syncApiKeys).
-- KEYS[1] the project's keys (layout.ts apiKeysKeyOf: HASH name → version '|' scopes)
-- ARGV[1] the project's key prefix, ARGV[2] the feed's maxLength ('' for no feed), ARGV[3] the
-- actor, ARGV[4] now, ARGV[5..] per key its name and value, each name once
-- Returns per change its kind, seq (0 without a feed), name, scopes and the scopes before ('' but
-- for key.updated).
-- Flags: writes.
--@include "before"
--@include "feed"
feed = openFeed(ARGV[1], ARGV[2])
actor = ARGV[3] ~= '' and ARGV[3]
local now = tonumber(ARGV[4])
local stored, given, names = redis.call('HGETALL', KEYS[1]), {}, {}
local old = {}
for i = 1, #stored, 2 do
  old[stored[i]] = stored[i + 1]
  names[#names + 1] = stored[i]
end
for i = 5, #ARGV, 2 do
  given[ARGV[i]] = ARGV[i + 1]
  if not old[ARGV[i]] then names[#names + 1] = ARGV[i] end
end
table.sort(names, before)
local function scopesOf(v) return string.match(v, '|(.*)$') end
local reply = {}
for _, name in ipairs(names) do
  local o, n = old[name], given[name]
  local kind
  if not o then kind = 'key.added' elseif not n then kind = 'key.removed' elseif o ~= n then kind = 'key.updated' end
  if kind then
    if n then redis.call('HSET', KEYS[1], name, n) else redis.call('HDEL', KEYS[1], name) end
    local fields = { 'kn', name, 'ks', scopesOf(n or o) }
    if kind == 'key.updated' then fields[5], fields[6] = 'kw', scopesOf(o) end
    local seq = 0
    if feed then
      appendChange(kind, now, fields)
      seq = feed.last
    end
    for _, v in ipairs({ kind, seq, name, scopesOf(n or o), kind == 'key.updated' and scopesOf(o) or '' }) do reply[#reply + 1] = v end
  end
end
trimFeed()
return reply
