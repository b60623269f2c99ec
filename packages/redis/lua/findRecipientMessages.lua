#!lua flags=no-writes
-- findRecipientMessages: the keys of messages to one recipient, from a stretch of the message order
-- (what eraseAddress deletes: Redis keeps no index of recipients, so the order is read in stretches
-- before the erasure's one step, which checks each message again).
-- KEYS[1] messageOrder
-- ARGV[1] the project's key prefix, ARGV[2] ZRANGE BYLEX start, ARGV[3] how many members to read,
-- ARGV[4] the recipient (normalized)
-- Returns { the last member read when there may be more ('' when done), then the keys found }.
local count = tonumber(ARGV[3])
local members = redis.call('ZRANGE', KEYS[1], ARGV[2], '+', 'BYLEX', 'LIMIT', 0, count)
local reply = { #members == count and members[#members] or '' }
for _, member in ipairs(members) do
  local key = string.sub(member, 18)
  if redis.call('HGET', ARGV[1] .. 'm:' .. key, 'r') == ARGV[4] then reply[#reply + 1] = key end
end
return reply
