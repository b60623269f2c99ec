#!lua
-- purgeExpired: deletes a project's suppressions expired at now, of every list, oldest expiry first,
-- by its expiry index; one PUBLISH names them.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4] the expiry
-- index 'x' (ZSET: score expiresAt, member the hash in hex, then '.' and the stream for a stream's list)
-- ARGV[1] now, ARGV[2] the most to delete, ARGV[3] invalidation channel, ARGV[4] projectId, ARGV[5]
-- the feed's maxLength ('' for no feed: each deletion appends suppression.expired otherwise)
-- Returns how many it deleted. Stream lists' keys are named from the project's prefix (its slot).
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
--@include "feed"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local now = tonumber(ARGV[1])
local lists, deleted = {}, {}
feed = openFeed(K.p, ARGV[5])
actor = RULE_EXPIRY
for _, member in ipairs(redis.call('ZRANGE', KEYS[4], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))) do
  local h, stream = string.sub(member, 1, 64), string.sub(member, 66)
  local L = K
  if stream ~= '' then
    L = lists[stream]
    if not L then
      L = suppressionKeys(K.p .. 's.' .. stream, K.p .. 'sk.' .. stream, nil, stream)
      lists[stream] = L
    end
  end
  local v, expiresAt = storedSuppression(L, h), nil
  if v then expiresAt = select(5, unpackSuppression(v)) end
  if expired(expiresAt, now) then
    deleteSuppression(L, h)
    suppressionChange(L, 'suppression.expired', now, h, v)
    deleted[#deleted + 1] = h
  else
    -- The index out of step with the record (every write keeps it in step): it follows the record.
    indexExpiry(L, h, true, expiresAt)
  end
end
trimFeed()
publish(ARGV[3], ARGV[4], deleted)
return #deleted
