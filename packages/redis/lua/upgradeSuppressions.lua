#!lua
-- upgradeSuppressions: moves suppressions of the old layout (in its order) to the new one. Each call
-- is whole, so the upgrade can stop between any two and resume: the old order is its own cursor.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder
-- ARGV[1] the most suppressions to upgrade in this call
-- Returns how many remain: 0 once the old layout is gone.
-- Flags: writes.
--@include "suppressionLayout"
--@include "storedSuppression"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
for _, member in ipairs(redis.call('ZRANGE', K.so, 0, tonumber(ARGV[1]) - 1)) do upgradeSuppression(K, member) end
return redis.call('ZCARD', K.so)
