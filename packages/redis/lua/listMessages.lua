#!lua
-- listMessages: a page of messages of an order, filtered.
-- KEYS[1] a message order (the project's, or one tracking ID's)
-- ARGV[1] the project key prefix, ARGV[2] ZRANGE BYLEX start, ARGV[3] limit, ARGV[4] and ARGV[5] the
-- status masks (`stronger`: facts that must be absent; `want`: one that must be present, 0 for any),
-- ARGV[6] the tracking ID the order belongs to ('' for the project's), ARGV[7] the most entries to read
-- in this call, ARGV[8] the provider, ARGV[9] the recipient, ARGV[10] and ARGV[11] the bounds of
-- lastEventAt (from inclusive, to exclusive), each '' for none, ARGV[12] the start of the recipient
-- ('' for any), ARGV[13] its domain after an '@' ('@' .. domain; '' for any), ARGV[14] the stream
-- ('' for any)
-- Returns a resume member ('' when done), then 9 items per message: key, p, i, r, t, f, a, b, s.
-- Flags: writes, only to drop entries of messages that expired (retention).
--@include "order"
local index, prefix, start = KEYS[1], ARGV[1], ARGV[2]
local limit, stronger, want, trackingId, budget = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local provider, recipient, from, to = ARGV[8], ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])
local recipientPrefix, atDomain, stream = ARGV[12], ARGV[13], ARGV[14]
local filtered = stronger ~= 0 or want ~= 0 or provider ~= '' or recipient ~= '' or from ~= nil or to ~= nil
  or recipientPrefix ~= '' or atDomain ~= '' or stream ~= ''
-- The recipient from its first '@' on (all of it, after an '@', when it has none): core's recipientDomainOf.
local function atDomainOf(r)
  local at = string.find(r, '@', 1, true)
  return at and string.sub(r, at) or '@' .. r
end
-- A filter reads chunks that start at the page size and double (ZRANGE of 1 000 costs as much as 50 HMGETs).
local reply, found, scanned, chunk = { '' }, 0, 0, limit
while true do
  local size = math.min(filtered and chunk or limit - found, budget - scanned)
  chunk = math.min(chunk * 2, 1000)
  local members = redis.call('ZRANGE', index, start, '+', 'BYLEX', 'LIMIT', 0, size)
  for _, member in ipairs(members) do
    scanned = scanned + 1
    local key = string.sub(member, 18)
    local m = redis.call('HMGET', prefix .. 'm:' .. key, 'p', 'i', 'r', 't', 'f', 'a', 'b', 's')
    local current = m[5] and tonumber(m[6]) == timeOf(member) and (trackingId == '' or m[4] == trackingId)
    if not current then
      redis.call('ZREM', index, member)
    else
      local f, b = tonumber(m[5]), tonumber(m[7])
      if bit.band(f, stronger) == 0 and (want == 0 or bit.band(f, want) ~= 0)
        and (provider == '' or m[1] == provider) and (recipient == '' or m[3] == recipient)
        and (recipientPrefix == '' or string.sub(m[3], 1, #recipientPrefix) == recipientPrefix)
        and (atDomain == '' or atDomainOf(m[3]) == atDomain) and (stream == '' or m[8] == stream)
        and (from == nil or b >= from) and (to == nil or b < to) then
        local n = #reply
        reply[n + 1], reply[n + 2], reply[n + 3], reply[n + 4] = key, m[1], m[2], m[3]
        reply[n + 5], reply[n + 6], reply[n + 7], reply[n + 8], reply[n + 9] = m[4], m[5], m[6], m[7], m[8]
        found = found + 1
        if found == limit then return reply end
      end
    end
    start = '(' .. member
  end
  if #members < size then return reply end
  if scanned >= budget then
    reply[1] = string.sub(start, 2)
    return reply
  end
end
