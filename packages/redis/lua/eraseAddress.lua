#!lua
-- eraseAddress: erases an address from a project in one step, keeping what blocks it (core
-- Store.eraseAddress; docs/decisions.md, "Erasure", and "Redis: erasure and actors (issue 27)").
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4] messageOrder,
-- KEYS[5..] the HASH and heads of each stream's list named in ARGV[12], two keys per stream, in order
-- ARGV[1] the project's key prefix, ARGV[2] the hash (64 hex), ARGV[3] the address as normalized,
-- ARGV[4] now, ARGV[5] the actor ('' for none), ARGV[6] the feed's maxLength ('' for no feed),
-- ARGV[7] invalidation channel, ARGV[8] projectId, ARGV[9] the placeholder email (erasedEmail),
-- ARGV[10] the record the project-wide list gets when it holds none live (packed), ARGV[11] its
-- createdAt, ARGV[12] the streams whose lists exist (JSON, by name), ARGV[13] the keys of messages
-- that may be the address's (JSON: each checked here), ARGV[14] dedup keys that contain a form of
-- the address (JSON, whole key names under the prefix)
-- Returns { messages deleted, changes deleted, then per list that holds the hash its stream ('' for
-- the project-wide list, first) and its value }.
-- Flags: writes.
--
-- Keys not in KEYS, all under the prefix, so in the project's slot: the messages 'm:<key>', their
-- timelines 'tl:<key>' and tracking-ID orders 'mt:<id>', dedup keys 'e:<provider>:<eventKey>', the
-- soft-bounce history 'sh:<hash>', the allowlist 'al' and 'ao', the expiry index 'x' and the feed.
--@include "suppressionLayout"
--@include "storedSuppression"
--@include "publish"
--@include "order"
--@include "feed"
local prefix, h, email, now, placeholder = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[9]
feed = openFeed(prefix, ARGV[6])
actor = ARGV[5] ~= '' and ARGV[5]

-- JSON of a decoded provenance part: its numbers are integers but for a rule's days (cjson.encode
-- would write times with 14 digits).
local function json(v)
  if v == nil or v == cjson.null then return 'null' end
  if type(v) == 'number' then
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string.format('%d', v) end
    return string.format('%.17g', v)
  end
  if type(v) == 'string' then return cjson.encode(v) end
  local items = {}
  for i, x in ipairs(v) do items[i] = json(x) end
  return '[' .. table.concat(items, ',') .. ']'
end
-- Packed provenance (core packProvenance) without diagnostics, the event's and each rule bounce's:
-- SMTP replies quote addresses.
local function withoutDiagnostics(provenance)
  if not provenance then return nil end
  local head, rest = string.match(provenance, '^([^,]*,[^,]*,)(.*)$')
  if rest == '' then return provenance end
  local parts = cjson.decode(rest)
  parts[3] = cjson.null
  local rule = parts[4]
  if type(rule) == 'table' and type(rule[4]) == 'table' then
    for _, bounce in ipairs(rule[4]) do bounce[5] = cjson.null end
  end
  return head .. json(parts)
end
-- The hash's record in list K rewritten with the placeholder email and no diagnostics (in the
-- project-wide list, no expiry either), or false when K holds none (in the project-wide list, none
-- live: an expired one goes without a change of its own).
local function eraseIn(K, projectWide)
  local v, field = storedSuppression(K, h)
  if not v then return false end
  local rank, createdAt, _, provenance, expiresAt = unpackSuppression(v)
  if projectWide and expired(expiresAt, now) then
    deleteSuppression(K, h)
    return false
  end
  local newExpiresAt = expiresAt
  if projectWide then newExpiresAt = nil end
  local stored = packSuppression(rank, createdAt, placeholder, withoutDiagnostics(provenance), newExpiresAt)
  if stored ~= v then redis.call('HSET', K.s, field, stored) end
  indexExpiry(K, h, expiresAt, newExpiresAt)
  return stored
end

-- Suppressions: kept by hash.
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local records = { '', eraseIn(K, true) }
if not records[2] then
  local _, field, hash = storedSuppression(K, h)
  redis.call('HSET', K.s, field, ARGV[10])
  orderAdd(K, orderBytes(tonumber(ARGV[11])) .. hash)
  records[2] = ARGV[10]
end
for i, stream in ipairs(cjson.decode(ARGV[12])) do
  local v = eraseIn(suppressionKeys(KEYS[3 + 2 * i], KEYS[4 + 2 * i], nil, stream), false)
  if v then records[#records + 1], records[#records + 2] = stream, v end
end

-- The allowlist entry of the hash (its entry is the address): an erased address is blocked.
local entry = redis.call('HGET', prefix .. 'al', h)
if entry then
  local colon = string.find(entry, ':', 1, true)
  redis.call('HDEL', prefix .. 'al', h)
  redis.call('ZREM', prefix .. 'ao', string.sub(entry, colon + 1) .. '\0' .. string.sub(entry, 1, colon - 1) .. ',' .. h)
end

-- Messages to the address, with their timelines, order entries and their events' dedup keys.
local messages = 0
for _, key in ipairs(cjson.decode(ARGV[13])) do
  local mk, tl = prefix .. 'm:' .. key, prefix .. 'tl:' .. key
  local m = redis.call('HMGET', mk, 'r', 't', 'a')
  if m[1] == email then
    local member = order(tonumber(m[3])) .. key
    redis.call('ZREM', KEYS[4], member)
    if m[2] then redis.call('ZREM', prefix .. 'mt:' .. m[2], member) end
    for _, timelineMember in ipairs(redis.call('ZRANGE', tl, 0, -1)) do
      local e = cjson.decode(string.sub(timelineMember, 33))
      redis.call('DEL', prefix .. 'e:' .. e.provider .. ':' .. e.eventKey)
    end
    redis.call('DEL', mk, tl)
    messages = messages + 1
  end
end
local eventPrefix = prefix .. 'e:'
for _, key in ipairs(cjson.decode(ARGV[14])) do
  if string.sub(key, 1, #eventPrefix) == eventPrefix then redis.call('DEL', key) end
end
redis.call('DEL', prefix .. 'sh:' .. h)

-- The feed's changes about it: suppression changes of the hash, allowlist changes of its key, status
-- changes of its messages (earlier erasures stay). Read whole, 1000 entries a call.
local changes, stream, start = 0, prefix .. 'changes', '-'
while true do
  local entries = redis.call('XRANGE', stream, start, '+', 'COUNT', 1000)
  if #entries == 0 then break end
  local doomed = {}
  for _, e in ipairs(entries) do
    local f = e[2]
    local kind, about = f[2], nil
    if string.sub(kind, 1, 12) == 'suppression.' then about = 'h'
    elseif string.sub(kind, 1, 10) == 'allowlist.' then about = 'ak'
    elseif kind == 'message.status_changed' then about = 'mr' end
    if about then
      local want = about == 'mr' and email or h
      for i = 5, #f, 2 do
        if f[i] == about then
          if f[i + 1] == want then doomed[#doomed + 1] = e[1] end
          break
        end
      end
    end
  end
  if #doomed > 0 then
    redis.call('XDEL', stream, unpack(doomed))
    changes = changes + #doomed
  end
  start = '(' .. entries[#entries][1]
end

if feed then
  local fields = { 'h', h, 'n', messages, 'c', changes }
  for i = 1, #records, 2 do
    fields[#fields + 1] = records[i] == '' and 'v' or 'v.' .. records[i]
    fields[#fields + 1] = records[i + 1]
  end
  appendChange('address.erased', now, fields)
  trimFeed()
end
publish(ARGV[7], ARGV[8], { h })
local reply = { messages, changes }
for _, v in ipairs(records) do reply[#reply + 1] = v end
return reply
