#!lua
-- mergeSuppressions: joins each record in order (mergeSuppression); one PUBLISH names every hash it
-- changed.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder
-- ARGV[1] the records as JSON (as applyEvents' `s`), ARGV[2] invalidation channel, ARGV[3] projectId
-- Returns one character per record: 's', the rank an upgrade raised from, or 'a'.
-- Flags: writes.
--@include "suppressionLayout"
--@include "mergeSuppression"
--@include "publish"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local records = cjson.decode(ARGV[1])
local changed, outcomes = { list = {} }, {}
for i, s in ipairs(records) do outcomes[i] = mergeSuppression(K, s, changed) end
publish(ARGV[2], ARGV[3], changed.list)
return table.concat(outcomes)
