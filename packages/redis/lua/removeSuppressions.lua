#!lua
-- removeSuppressions: deletes each hash; one PUBLISH names those deleted.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder
-- ARGV[1] invalidation channel, ARGV[2] projectId, ARGV[3..] the hashes (64 hex)
-- Returns per hash the value it deleted, or false.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local removed, deleted = {}, {}
for i = 3, #ARGV do
  local existing = deleteSuppression(K, ARGV[i])
  if existing then deleted[#deleted + 1] = ARGV[i] end
  removed[i - 2] = existing
end
publish(ARGV[1], ARGV[2], deleted)
return removed
