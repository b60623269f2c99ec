#!lua
-- buildSearchBlocks: builds the search blocks of IDs stored before blocks existed, in order from the
-- cursor, BLOCK_FILL to a block; applyEvents keeps blocks up to the cursor current meanwhile.
-- KEYS[1] trackingIdOrder, KEYS[2] searchBlockHeads, KEYS[3] searchBuildCursor
-- ARGV[1] the most IDs to add in this call
-- Returns 1 while IDs remain, 0 once every ID is in a block (the cursor is gone).
-- Flags: writes.
--@include "trackingIdMember"
--@include "searchBlocks"
local TO, TK, TC = KEYS[1], KEYS[2], KEYS[3]
local budget = tonumber(ARGV[1])
local cursor = redis.call('GET', TC)
if not cursor then
  if redis.call('EXISTS', TK) == 1 then return 0 end
  redis.call('ZADD', TK, 0, '')
  redis.call('SET', blockKey(TK, ''), '000')
  cursor = ''
end
local members = redis.call('ZRANGE', TO, cursor == '' and '-' or '(' .. cursor, '+', 'BYLEX', 'LIMIT', 0, budget)
-- Later IDs go to the last block, and on to new ones as each fills.
local head = redis.call('ZRANGE', TK, '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
local v = redis.call('GET', blockKey(TK, head))
local count, keys = tonumber(string.sub(v, 1, 3)), { string.sub(v, 4) }
for _, member in ipairs(members) do
  if count >= BLOCK_FILL then
    redis.call('SET', blockKey(TK, head), string.format('%03d', count) .. table.concat(keys))
    head, count, keys = member, 0, {}
    redis.call('ZADD', TK, 0, head)
  end
  keys[#keys + 1] = '\254' .. searchKeyOf(member)
  count = count + 1
end
redis.call('SET', blockKey(TK, head), string.format('%03d', count) .. table.concat(keys))
if #members < budget then
  redis.call('DEL', TC)
  return 0
end
redis.call('SET', TC, members[#members])
return 1
