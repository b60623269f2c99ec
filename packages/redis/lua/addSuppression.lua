#!lua
-- addSuppression: stores one suppression in a list unless its hash has one there already.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] packed record (layout.ts packSuppression), ARGV[3] createdAt,
-- ARGV[4] invalidation channel, ARGV[5] projectId, ARGV[6] the stream (absent for the project-wide list)
-- Returns the existing value, or nil once created.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "orderBytes"
--@include "publish"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[6])
local existing, field, hash = storedSuppression(K, ARGV[1])
if existing then return existing end
redis.call('HSET', K.s, field, ARGV[2])
orderAdd(K, orderBytes(tonumber(ARGV[3])) .. hash)
publish(ARGV[4], ARGV[5], { ARGV[1] })
return false
