#!lua
-- mergeSuppressions: joins each record in order (mergeSuppression); one PUBLISH names every hash it
-- changed.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4..] the HASH
-- and heads of each stream's list the records name (a record's `k`, listOf)
-- ARGV[1] the records as JSON (as applyEvents' `s`), ARGV[2] invalidation channel, ARGV[3] projectId,
-- ARGV[4] now ('' for none: nothing is expired), ARGV[5] the feed's maxLength ('' for no feed),
-- ARGV[6] the actor ('' for none)
-- Returns one character per record: 's', the rank an upgrade raised from, or 'a'.
-- Flags: writes.
--@include "suppressionLayout"
--@include "mergeSuppression"
--@include "publish"
--@include "feed"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local records = cjson.decode(ARGV[1])
local now = tonumber(ARGV[4])
feed = openFeed(K.p, ARGV[5])
actor = ARGV[6] ~= '' and ARGV[6]
local changed, outcomes = { list = {} }, {}
for i, s in ipairs(records) do outcomes[i] = mergeSuppression(listOf(K, s), s, changed, now) end
trimFeed()
publish(ARGV[2], ARGV[3], changed.list)
return table.concat(outcomes)
