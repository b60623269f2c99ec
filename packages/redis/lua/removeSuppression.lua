#!lua
-- removeSuppression: deletes one suppression.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder
-- ARGV[1] hash (64 hex), ARGV[2] invalidation channel, ARGV[3] projectId
-- Returns the value it deleted, or nil.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
local existing = deleteSuppression(suppressionKeys(KEYS[1], KEYS[2], KEYS[3]), ARGV[1])
if existing then publish(ARGV[2], ARGV[3], { ARGV[1] }) end
return existing
