#!lua flags=no-writes
-- listTrackingIds: a page of tracking IDs and their rows, optionally those whose search key holds a
-- search.
-- KEYS[1] trackingIds, KEYS[2] trackingIdOrder, KEYS[3] searchBlockHeads, KEYS[4] searchBuildCursor
-- (the blocks, 'tb:<head>', are named from searchBlockHeads' prefix and are not in KEYS)
-- ARGV[1] the tracking ID to start after ('' for the first), ARGV[2] limit, ARGV[3] search ('' for
-- none), ARGV[4] the most IDs to read in this call
-- Returns a resume ID ('' when done), '1' when a search found no search blocks built yet (the store
-- then builds a step of them: buildSearchBlocks), then ID, packed row, ID, packed row…
-- Flags: no-writes (EVALSHA_RO).
--
-- A search walks the blocks from the one holding the start: one plain find over a block's keys tells
-- whether its range can hold a match, and only such a range is read from trackingIdOrder and tested
-- member by member, as the walk without blocks tests every member. A block counts its IDs against the
-- budget whether read or skipped.
--@include "trackingIdMember"
--@include "searchBlocks"
--@include "before"
local TT, TO, TK, TC = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local after, limit, search, budget = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
-- Strictly after every member of that ID, whatever its search key: 0xFF never starts one.
local bound = after == '' and '' or encodeId(after) .. '\255'
local start = after == '' and '-' or '(' .. bound
local resume, unbuilt, ids, scanned, chunk = '', '', {}, 0, limit

-- Adds the members that match to the page; true once it is full.
local function take(members)
  for _, member in ipairs(members) do
    -- One find over the whole member; only a hit needs to know where the search key starts.
    local hit = search == '' or string.find(member, search, 1, true)
    local at = hit and idEnd(member)
    if hit and hit ~= true and hit <= at then hit = string.find(member, search, at + 1, true) end
    if hit then
      ids[#ids + 1] = decodeId(member, at)
      if #ids == limit then return true end
    end
  end
  return false
end

local blocks = search ~= '' and redis.call('EXISTS', TC) == 0 and redis.call('EXISTS', TK) == 1
if search ~= '' and not blocks then unbuilt = '1' end
if blocks then
  local head = blockHead(TK, bound)
  local from = start
  local heads, i = redis.call('ZRANGE', TK, '[' .. head, '+', 'BYLEX', 'LIMIT', 0, 100), 1
  while true do
    local h = heads[i]
    if i == #heads and #heads == 100 then
      heads, i = redis.call('ZRANGE', TK, '[' .. h, '+', 'BYLEX', 'LIMIT', 0, 100), 1
    end
    local nextHead = heads[i + 1]
    local v = redis.call('GET', blockKey(TK, h))
    if string.find(v, search, 4, true)
      and take(redis.call('ZRANGE', TO, from, nextHead and '(' .. nextHead or '+', 'BYLEX')) then break end
    if not nextHead then break end
    scanned = scanned + tonumber(string.sub(v, 1, 3))
    if scanned >= budget then
      -- Resume after this block's last ID, unless the walk has not passed the start yet.
      local last = redis.call('ZRANGE', TO, '(' .. nextHead, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
      if last and (bound == '' or before(bound, last)) then
        resume = decodeId(last, idEnd(last))
        break
      end
    end
    from = '[' .. nextHead
    i = i + 1
  end
else
  while #ids < limit do
    -- A search reads chunks that start at the page size and double, up to 1 000.
    local size = math.min(search == '' and limit - #ids or chunk, budget - scanned)
    chunk = math.min(chunk * 2, 1000)
    local members = redis.call('ZRANGE', TO, start, '+', 'BYLEX', 'LIMIT', 0, size)
    scanned = scanned + #members
    if take(members) or #members < size then break end
    start = '(' .. members[#members]
    if scanned >= budget then
      resume = decodeId(members[#members], idEnd(members[#members]))
      break
    end
  end
end
local reply = { resume, unbuilt }
-- HMGET in slices: unpack() of a whole long page would overflow Lua's stack.
for from = 1, #ids, 1000 do
  local slice = {}
  for i = from, math.min(from + 999, #ids) do slice[#slice + 1] = ids[i] end
  local rows = redis.call('HMGET', TT, unpack(slice))
  for i, id in ipairs(slice) do
    reply[#reply + 1] = id
    reply[#reply + 1] = rows[i]
  end
end
return reply
