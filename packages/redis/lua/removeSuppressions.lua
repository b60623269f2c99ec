#!lua
-- removeSuppressions: deletes each hash from a list (expired or not; from the project-wide list with
-- its soft-bounce history); one PUBLISH names those deleted.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] invalidation channel, ARGV[2] projectId, ARGV[3] the stream ('' for the project-wide list),
-- ARGV[4..] the hashes (64 hex)
-- Returns per hash the value it deleted, or false.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[3])
local removed, deleted = {}, {}
for i = 4, #ARGV do
  local existing = deleteSuppression(K, ARGV[i])
  forgetHistory(K, ARGV[i])
  if existing then deleted[#deleted + 1] = ARGV[i] end
  removed[i - 3] = existing
end
publish(ARGV[1], ARGV[2], deleted)
return removed
