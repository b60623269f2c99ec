#!lua
-- removeSuppression: deletes one suppression from a list (expired or not); from the project-wide
-- list it also forgets the hash's soft-bounce history.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] invalidation channel, ARGV[3] projectId, ARGV[4] the stream (''
-- for the project-wide list), ARGV[5] now ('' for none), ARGV[6] the feed's maxLength ('' for no feed),
-- ARGV[7] the actor ('' for none)
-- Returns the value it deleted, or nil.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
--@include "feed"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[4])
feed = openFeed(K.p, ARGV[6])
actor = ARGV[7] ~= '' and ARGV[7]
local existing = deleteSuppression(K, ARGV[1])
forgetHistory(K, ARGV[1])
if existing then
  suppressionChange(K, 'suppression.removed', tonumber(ARGV[5]) or 0, ARGV[1], existing)
  trimFeed()
  publish(ARGV[2], ARGV[3], { ARGV[1] })
end
return existing
