#!lua flags=no-writes
-- listSuppressions: a page of one list's suppressions in order, newest first.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1], ARGV[2] ZRANGE BYLEX start and stop of the order members (binary: a time range is a range
-- of the order), ARGV[3] limit, ARGV[4] the reason rank to keep ('' for any), ARGV[5] the most entries
-- to read in this call, ARGV[6] the start of the email to keep ('' for any; never holds NUL, which
-- would reach into the packed provenance), ARGV[7] now ('' for none: expired records are kept),
-- ARGV[8] '1' only records that expire, '0' only those that never do, '' any, ARGV[9] the stream
-- (absent for the project-wide list)
-- Returns a resume member ('' when done), then member, value, member, value… (binary: the caller
-- reads the reply as buffers).
-- Flags: no-writes (EVALSHA_RO).
--
-- The walk reads the block that holds the start, then the blocks after it. While suppressions of the
-- old layout remain (legacySuppressionOrder), their order is read too and merged in.
--@include "suppressionLayout"
--@include "order"
--@include "orderBytes"
--@include "hex"
--@include "before"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[9])
local start, stop, limit, rank, budget, emailPrefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), ARGV[6]
local now, expiring = tonumber(ARGV[7]), ARGV[8]
local filtered = rank ~= '' or emailPrefix ~= '' or expiring ~= ''
-- Whether a HASH value (rank, createdAt, ':', email…, \1 expiresAt) is kept: the email starts right
-- after the colon, expiresAt after the only \1.
local function kept(value)
  if rank ~= '' and string.sub(value, 1, 1) ~= rank then return false end
  local colon = string.find(value, ':', 2, true)
  if now or expiring ~= '' then
    local x = string.find(value, '\1', colon + 1, true)
    if expiring == '1' and not x or expiring == '0' and x then return false end
    if x and now and tonumber(string.sub(value, x + 1)) <= now then return false end
  end
  if emailPrefix == '' then return true end
  return string.sub(value, colon + 1, colon + #emailPrefix) == emailPrefix
end
local stopAt = stop ~= '+' and string.sub(stop, 2)
-- A bound of the order blocks as the same bound of the old order.
local function legacyBound(bound)
  if bound == '-' or bound == '+' then return bound end
  local body = string.sub(bound, 2)
  return string.sub(bound, 1, 1) .. order(timeOfBytes(body)) .. hex(string.sub(body, 9))
end
-- The first n members after start (and before stop), and the HASH field of each.
local function range(start, n)
  local members, fields = {}, {}
  local head = orderHead(K, start == '-' and '' or string.sub(start, 2))
  while head and #members < n do
    for _, member in ipairs(redis.call('ZRANGE', orderBlockKey(K, head), start, stop, 'BYLEX', 'LIMIT', 0, n - #members)) do
      members[#members + 1] = member
      fields[#fields + 1] = fieldOfMember(member)
    end
    head = #members < n and redis.call('ZRANGE', K.sk, '(' .. head, '+', 'BYLEX', 'LIMIT', 0, 1)[1]
    if head and stopAt and not before(head, stopAt) then head = nil end
  end
  if not K.legacy then return members, fields end
  local merged, mergedFields, i = {}, {}, 1
  for _, old in ipairs(redis.call('ZRANGE', K.so, legacyBound(start), legacyBound(stop), 'BYLEX', 'LIMIT', 0, n)) do
    local member = orderBytes(timeOf(old)) .. unhex(string.sub(old, 18))
    while members[i] and before(members[i], member) do
      merged[#merged + 1], mergedFields[#mergedFields + 1] = members[i], fields[i]
      i = i + 1
    end
    merged[#merged + 1], mergedFields[#mergedFields + 1] = member, string.sub(old, 18)
  end
  for j = i, #members do merged[#merged + 1], mergedFields[#mergedFields + 1] = members[j], fields[j] end
  for j = #merged, n + 1, -1 do merged[j], mergedFields[j] = nil, nil end
  return merged, mergedFields
end

local reply, found, scanned, chunk = { '' }, 0, 0, limit
-- Without a filter every entry is kept: one read of the page. With one, chunks that start at the page
-- size and double, as the message listing reads them.
while true do
  local size = math.min(filtered and chunk or limit - found, budget - scanned)
  chunk = math.min(chunk * 2, 1000)
  local members, fields = range(start, size)
  -- HMGET in slices: unpack() of a whole long page would overflow Lua's stack.
  for from = 1, #members, 1000 do
    local values = redis.call('HMGET', K.s, unpack(fields, from, math.min(from + 999, #members)))
    for i, value in ipairs(values) do
      if value and kept(value) then
        reply[#reply + 1] = members[from + i - 1]
        reply[#reply + 1] = value
        found = found + 1
        if found == limit then return reply end
      end
    end
  end
  scanned = scanned + #members
  if #members < size then return reply end
  start = '(' .. members[#members]
  if scanned >= budget then
    reply[1] = members[#members]
    return reply
  end
end
