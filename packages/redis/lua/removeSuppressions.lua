#!lua
-- removeSuppressions: deletes each hash from a list (expired or not; from the project-wide list with
-- its soft-bounce history); one PUBLISH names those deleted.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] invalidation channel, ARGV[2] projectId, ARGV[3] the stream ('' for the project-wide list),
-- ARGV[4] now ('' for none), ARGV[5] the feed's maxLength ('' for no feed), ARGV[6] the actor ('' for none),
-- ARGV[7..] the hashes (64 hex)
-- Returns per hash the value it deleted, or false.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
--@include "feed"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[3])
local removed, deleted = {}, {}
local at = tonumber(ARGV[4]) or 0
feed = openFeed(K.p, ARGV[5])
actor = ARGV[6] ~= '' and ARGV[6]
for i = 7, #ARGV do
  local existing = deleteSuppression(K, ARGV[i])
  forgetHistory(K, ARGV[i])
  if existing then
    deleted[#deleted + 1] = ARGV[i]
    suppressionChange(K, 'suppression.removed', at, ARGV[i], existing)
  end
  removed[i - 6] = existing
end
trimFeed()
publish(ARGV[1], ARGV[2], deleted)
return removed
