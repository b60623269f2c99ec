#!lua
-- addSuppression: stores one suppression in a list unless its hash has one there already (one
-- expired at now counts as absent: the new one replaces it).
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] packed record (layout.ts packSuppression), ARGV[3] createdAt,
-- ARGV[4] invalidation channel, ARGV[5] projectId, ARGV[6] the stream ('' for the project-wide list),
-- ARGV[7] now ('' for none: nothing is expired), ARGV[8] the record's expiresAt ('' for none),
-- ARGV[9] the feed's maxLength ('' for no feed), ARGV[10] the actor ('' for none)
-- Returns the existing value, or nil once created.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "orderBytes"
--@include "publish"
--@include "feed"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[6])
local now = tonumber(ARGV[7])
feed = openFeed(K.p, ARGV[9])
actor = ARGV[10] ~= '' and ARGV[10]
local existing, field, hash = storedSuppression(K, ARGV[1])
if existing then
  local _, createdAt, _, _, expiresAt = unpackSuppression(existing)
  if not expired(expiresAt, now) then return existing end
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, ARGV[1], expiresAt, nil)
  suppressionChange(K, 'suppression.expired', now, ARGV[1], existing, nil, RULE_EXPIRY)
end
redis.call('HSET', K.s, field, ARGV[2])
orderAdd(K, orderBytes(tonumber(ARGV[3])) .. hash)
indexExpiry(K, ARGV[1], nil, tonumber(ARGV[8]))
suppressionChange(K, 'suppression.added', now or tonumber(ARGV[3]), ARGV[1], ARGV[2])
trimFeed()
publish(ARGV[4], ARGV[5], { ARGV[1] })
return false
