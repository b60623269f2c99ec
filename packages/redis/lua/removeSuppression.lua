#!lua
-- removeSuppression: deletes one suppression from a list (expired or not); from the project-wide
-- list it also forgets the hash's soft-bounce history.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] invalidation channel, ARGV[3] projectId, ARGV[4] the stream (absent
-- for the project-wide list)
-- Returns the value it deleted, or nil.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[4])
local existing = deleteSuppression(K, ARGV[1])
forgetHistory(K, ARGV[1])
if existing then publish(ARGV[2], ARGV[3], { ARGV[1] }) end
return existing
