#!lua
-- purgeChanges: deletes a project's oldest changes older than the feed's maxAgeMs, from the front
-- (changes after one that is kept stay: the feed keeps no gap), and records the last one deleted.
-- KEYS[1] the feed's counter (HASH seq, trimmed), KEYS[2] its STREAM
-- ARGV[1] the time before which a change is deleted (now - maxAgeMs), ARGV[2] the most to look at
-- Returns how many it deleted.
-- Flags: writes.
local cutoff = tonumber(ARGV[1])
local deleted, through = 0, nil
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', tonumber(ARGV[2]))) do
  -- Fields k (the kind) then a (its time) come first.
  if tonumber(entry[2][4]) >= cutoff then break end
  through = tonumber(string.match(entry[1], '^%d+'))
  deleted = deleted + 1
end
if through then
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', through + 1))
  redis.call('HSET', KEYS[1], 'trimmed', string.format('%d', through))
end
return deleted
