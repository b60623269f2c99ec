// Generated from packages/redis/lua/ by `npm run build:lua -w @mailwarden/redis`: edit the .lua files, not this one.
// Each script is its file with every `--@include` line followed by the included file; `lines` maps
// the script's lines back to the files. `{{name}}` is filled in from `values` when this module loads.
import { counterFacts, DAY_MS, Fact, HOUR_MS, statFacts, TIMELINE_CAP, TIMELINE_LIMITS } from '@mailwarden/core/store';
import { ORDER_MAX, SEARCH_BLOCK_FILL, SEARCH_BLOCK_MAX, STATUS_FACTS, SUPPRESSION_BLOCK_MAX, SUPPRESSION_FIELD_BYTES } from '../layout.js';
import { loadScript, type ScriptValue } from '../script.js';

const values = {
  DAY_MS,
  'Fact.complained': Fact.complained,
  'Fact.hard_bounced': Fact.hard_bounced,
  HOUR_MS,
  ORDER_MAX,
  SEARCH_BLOCK_FILL,
  SEARCH_BLOCK_MAX,
  STATUS_FACTS,
  SUPPRESSION_BLOCK_MAX,
  SUPPRESSION_FIELD_BYTES,
  TIMELINE_CAP,
  'TIMELINE_LIMITS.first': TIMELINE_LIMITS.first,
  'counterFacts.bounced': counterFacts.bounced,
  'counterFacts.clicked': counterFacts.clicked,
  'counterFacts.complained': counterFacts.complained,
  'counterFacts.delivered': counterFacts.delivered,
  'counterFacts.opened': counterFacts.opened,
  'counterFacts.unsubscribed': counterFacts.unsubscribed,
  statFacts,
} satisfies Record<string, ScriptValue>;

export const addAllowlistEntry = loadScript(
  {
    name: 'addAllowlistEntry',
    readOnly: false,
    lines: [
      [1, 'lua/addAllowlistEntry.lua', 1, 9],
      [10, 'lua/include/feed.lua', 1, 44],
      [54, 'lua/addAllowlistEntry.lua', 10, 11],
    ],
    source: `#!lua
-- addAllowlistEntry: adds an entry to the project's allowlist unless its key is there.
-- KEYS[1] allowlist (HASH key → createdAt ':' entry), KEYS[2] allowlistOrder (ZSET, scores 0: entry,
-- NUL, createdAt ',' key; layout.ts allowlistMember)
-- ARGV[1] key, ARGV[2] entry, ARGV[3] createdAt, ARGV[4] the project's key prefix, ARGV[5] the
-- feed's maxLength ('' for no feed), ARGV[6] the actor ('' for none)
-- Returns the existing value, or nil once added.
-- Flags: writes.
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ':' .. ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[2] .. '\\0' .. ARGV[3] .. ',' .. ARGV[1])
feed = openFeed(ARGV[4], ARGV[5])
actor = ARGV[6] ~= '' and ARGV[6]
if feed then
  appendChange('allowlist.added', tonumber(ARGV[3]), { 'ak', ARGV[1], 'v', ARGV[3] .. ':' .. ARGV[2] })
  trimFeed()
end
return false
`,
  },
  values,
);

export const addSuppression = loadScript(
  {
    name: 'addSuppression',
    readOnly: false,
    lines: [
      [1, 'lua/addSuppression.lua', 1, 12],
      [13, 'lua/include/suppressionLayout.lua', 1, 7],
      [20, 'lua/include/before.lua', 1, 8],
      [28, 'lua/include/suppressionLayout.lua', 8, 80],
      [108, 'lua/addSuppression.lua', 13, 1],
      [109, 'lua/include/storedSuppression.lua', 1, 3],
      [112, 'lua/include/suppressionValue.lua', 1, 23],
      [135, 'lua/include/storedSuppression.lua', 4, 1],
      [136, 'lua/include/order.lua', 1, 13],
      [149, 'lua/include/storedSuppression.lua', 5, 1],
      [150, 'lua/include/orderBytes.lua', 1, 17],
      [167, 'lua/include/storedSuppression.lua', 6, 1],
      [168, 'lua/include/hex.lua', 1, 14],
      [182, 'lua/include/storedSuppression.lua', 7, 44],
      [226, 'lua/addSuppression.lua', 14, 2],
      [228, 'lua/include/publish.lua', 1, 4],
      [232, 'lua/addSuppression.lua', 16, 1],
      [233, 'lua/include/feed.lua', 1, 44],
      [277, 'lua/addSuppression.lua', 17, 19],
    ],
    source: `#!lua
-- addSuppression: stores one suppression in a list unless its hash has one there already (one
-- expired at now counts as absent: the new one replaces it).
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] packed record (layout.ts packSuppression), ARGV[3] createdAt,
-- ARGV[4] invalidation channel, ARGV[5] projectId, ARGV[6] the stream ('' for the project-wide list),
-- ARGV[7] now ('' for none: nothing is expired), ARGV[8] the record's expiresAt ('' for none),
-- ARGV[9] the feed's maxLength ('' for no feed), ARGV[10] the actor ('' for none)
-- Returns the existing value, or nil once created.
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "orderBytes"
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[6])
local now = tonumber(ARGV[7])
feed = openFeed(K.p, ARGV[9])
actor = ARGV[10] ~= '' and ARGV[10]
local existing, field, hash = storedSuppression(K, ARGV[1])
if existing then
  local _, createdAt, _, _, expiresAt = unpackSuppression(existing)
  if not expired(expiresAt, now) then return existing end
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, ARGV[1], expiresAt, nil)
  suppressionChange(K, 'suppression.expired', now, ARGV[1], existing, nil, RULE_EXPIRY)
end
redis.call('HSET', K.s, field, ARGV[2])
orderAdd(K, orderBytes(tonumber(ARGV[3])) .. hash)
indexExpiry(K, ARGV[1], nil, tonumber(ARGV[8]))
suppressionChange(K, 'suppression.added', now or tonumber(ARGV[3]), ARGV[1], ARGV[2])
trimFeed()
publish(ARGV[4], ARGV[5], { ARGV[1] })
return false
`,
  },
  values,
);

export const applyEvents = loadScript(
  {
    name: 'applyEvents',
    readOnly: false,
    lines: [
      [1, 'lua/applyEvents.lua', 1, 27],
      [28, 'lua/include/suppressionLayout.lua', 1, 7],
      [35, 'lua/include/before.lua', 1, 8],
      [43, 'lua/include/suppressionLayout.lua', 8, 80],
      [123, 'lua/applyEvents.lua', 28, 1],
      [124, 'lua/include/mergeSuppression.lua', 1, 3],
      [127, 'lua/include/storedSuppression.lua', 1, 3],
      [130, 'lua/include/suppressionValue.lua', 1, 23],
      [153, 'lua/include/storedSuppression.lua', 4, 1],
      [154, 'lua/include/order.lua', 1, 13],
      [167, 'lua/include/storedSuppression.lua', 5, 1],
      [168, 'lua/include/orderBytes.lua', 1, 17],
      [185, 'lua/include/storedSuppression.lua', 6, 1],
      [186, 'lua/include/hex.lua', 1, 14],
      [200, 'lua/include/storedSuppression.lua', 7, 44],
      [244, 'lua/include/mergeSuppression.lua', 4, 5],
      [249, 'lua/include/feed.lua', 1, 44],
      [293, 'lua/include/mergeSuppression.lua', 9, 66],
      [359, 'lua/applyEvents.lua', 29, 1],
      [360, 'lua/include/softBounceRule.lua', 1, 155],
      [515, 'lua/applyEvents.lua', 30, 1],
      [516, 'lua/include/publish.lua', 1, 4],
      [520, 'lua/applyEvents.lua', 31, 3],
      [523, 'lua/include/trackingIdMember.lua', 1, 18],
      [541, 'lua/applyEvents.lua', 34, 1],
      [542, 'lua/include/searchBlocks.lua', 1, 16],
      [558, 'lua/applyEvents.lua', 35, 2],
      [560, 'lua/include/alertWindows.lua', 1, 189],
      [749, 'lua/applyEvents.lua', 37, 382],
    ],
    source: `#!lua
-- applyEvents: applies a batch of stored events, each whole: the dedup key, the message merge
-- (mergeMessage), the tracking-ID rows (trackingIdDeltas) and the suppression upsert.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4] messageOrder,
-- KEYS[5] trackingIds, KEYS[6] trackingIdOrder, KEYS[7] searchBlockHeads, KEYS[8] searchBuildCursor,
-- KEYS[9..] the keys the events name (dedup keys, message hashes, tracking-ID message orders, the
-- HASH and heads of a stream's suppression list), referred to by index
-- ARGV[1] the events as JSON, ARGV[2] project key prefix, ARGV[3] retention in ms ('' for none),
-- ARGV[4] invalidation channel, ARGV[5] projectId, ARGV[6] now ('' for none: nothing is expired, no
-- history forgotten), ARGV[7] the soft-bounce rule as JSON ('' for none: events' \`u\` are ignored),
-- ARGV[8] the feed's maxLength ('' when the store keeps no feed), ARGV[9] the alert rule as JSON (''
-- for none: no window is read or written)
-- Returns one character per event: 'd' duplicate, else the outcome of its suppression ('s' created,
-- the rank it raised from, 'a'; eventOutcomeOfCode).
--
-- An event's \`a\` is its actor (StoredEvent.actor), absent for none.
--
-- Per applied event, after its message: its own suppression \`s\` (not written when it comes from a
-- webhook and the recipient is allowlisted), then the soft-bounce rule's input \`u\`, then its
-- message's status change (the feed), then the alert windows.
-- Flags: writes.
--
-- Keys not in KEYS, all under the project's prefix, so in its slot: the message order of a tracking
-- ID a message leaves or keeps (from the stored message), the messages read to recompute a row's
-- lastEventAt, the allowlist 'al', the expiry index 'x', the soft-bounce histories 'sh:<hash>', the
-- feed 'feed' and 'changes', the alert windows 'aw' and 'aw:<trackingId>' and the paused streams.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "mergeSuppression"
-- The join of a suppression into the stored ones (core's suppression merge), as applyEvents and
-- mergeSuppressions write it.
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "suppressionLayout"
--@include "suppressionValue"
--@include "orderBytes"
--@include "before"
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
-- What the provenance join compares after the reason: the cause's time, event ID and source letter
-- (a, i, u, w: the sources' byte order; core provenanceWins); a record without provenance compares as
-- the latest, with no ID and the last source.
local function causeKey(provenance)
  if not provenance then return math.huge, '', '~' end
  local source, at, id = string.match(provenance, '^(%a)(%-?%d+),(%x*),')
  return tonumber(at), id, source
end
-- Joins suppression s ({ h hash, r rank, c createdAt, e email, p packed provenance, x expiresAt })
-- into the suppressions of K: reason only upgraded, createdAt the earliest, the email the first one
-- stored, the provenance the stronger reason's, then the earlier cause's, then the smaller event ID's,
-- then the smaller source's (core provenanceWins), and expiresAt with the provenance. With now (nil:
-- nothing expires), s already expired is not written, and a stored record expired at now counts as
-- absent: s replaces it whole (docs/decisions.md, "Suppressions that expire"). A hash it writes is
-- added to changed (a set with its list in changed.list). With the feed open, each change is
-- appended (an expired record replaced, then added, upgraded or updated), at now (nil: the record's
-- createdAt). Returns the outcome: 's' when it created the suppression, the rank it had when s
-- raised it, else 'a'.
local function mergeSuppression(K, s, changed, now)
  if expired(s.x, now) then return 'a' end
  local v, field, hash = storedSuppression(K, s.h)
  local outcome = 'a'
  local rank, createdAt, email, provenance, expiresAt
  if v then rank, createdAt, email, provenance, expiresAt = unpackSuppression(v) end
  if v and expired(expiresAt, now) then
    orderRemove(K, orderBytes(createdAt) .. hash)
    suppressionChange(K, 'suppression.expired', now, s.h, v, nil, RULE_EXPIRY)
    v = false
  end
  if not v then
    local stored = packSuppression(s.r, s.c, s.e, s.p, s.x)
    redis.call('HSET', K.s, field, stored)
    orderAdd(K, orderBytes(s.c) .. hash)
    indexExpiry(K, s.h, expiresAt, s.x)
    suppressionChange(K, 'suppression.added', now or s.c, s.h, stored)
    outcome = 's'
  else
    local newRank, newCreatedAt, newProvenance, newExpiresAt = math.max(rank, s.r), math.min(createdAt, s.c), provenance, expiresAt
    if s.r > rank then
      newProvenance, newExpiresAt = s.p, s.x
    elseif s.r == rank then
      local at, id, source = causeKey(s.p)
      local knownAt, knownId, knownSource = causeKey(provenance)
      if at < knownAt or (at == knownAt and (before(id, knownId) or (id == knownId and before(source, knownSource)))) then
        newProvenance, newExpiresAt = s.p, s.x
      end
    end
    if newRank == rank and newCreatedAt == createdAt and newProvenance == provenance and newExpiresAt == expiresAt then return outcome end
    if newRank > rank then outcome = tostring(rank) end
    local stored = packSuppression(newRank, newCreatedAt, email, newProvenance, newExpiresAt)
    redis.call('HSET', K.s, field, stored)
    if stored ~= v then
      suppressionChange(K, newRank > rank and 'suppression.upgraded' or 'suppression.updated', now or s.c, s.h, stored, v)
    end
    if newCreatedAt ~= createdAt then
      orderRemove(K, orderBytes(createdAt) .. hash)
      orderAdd(K, orderBytes(newCreatedAt) .. hash)
    end
    indexExpiry(K, s.h, expiresAt, newExpiresAt)
  end
  if not changed[s.h] then
    changed[s.h] = true
    changed.list[#changed.list + 1] = s.h
  end
  return outcome
end
--@include "softBounceRule"
-- The soft-bounce rule (docs/decisions.md, "The soft-bounce rule"), inside applyEvents' step per event.
-- History per address: the STRING 'sh:<hash>' (64 hex) under the project's prefix: the latest delivery
-- counted (digits, or nothing), then per kept bounce, oldest first by (at, eventId), '\\n' at ',' eventId
-- ',' the message's length ':' the message, then the bounce as packed provenance lists it (core
-- packRuleBounce: JSON, so no '\\n'). A message may hold any byte: its length says where it ends.
--@include "mergeSuppression"
--@include "suppressionValue"
--@include "before"
local DAY_MS = {{DAY_MS}}
local function loadHistory(key)
  local v = redis.call('GET', key)
  local history = { bounces = {} }
  if not v then return history end
  local nl = string.find(v, '\\n', 1, true)
  history.delivery = tonumber(string.sub(v, 1, (nl or 0) - 1))
  while nl do
    local at, id, length, from = string.match(v, '^(%-?%d+),(%x+),(%d+):()', nl + 1)
    local to = from + tonumber(length)
    nl = string.find(v, '\\n', to, true)
    local b = history.bounces
    b[#b + 1] = { at = tonumber(at), id = id, message = string.sub(v, from, to - 1), packed = string.sub(v, to, (nl or 0) - 1) }
  end
  return history
end
-- Saves the history, or deletes it when empty. Redis forgets it once the rule would have forgotten all
-- of it (its latest time plus keepMs, a day's margin): a relative TTL, so the callers' clock, not
-- Redis's, decides, and it is garbage collection only (every step prunes by now).
local function saveHistory(key, history, rule, now)
  local parts, latest = { history.delivery and string.format('%d', history.delivery) or '' }, history.delivery
  for _, b in ipairs(history.bounces) do
    parts[#parts + 1] = string.format('\\n%d,%s,%d:', b.at, b.id, #b.message) .. b.message .. b.packed
    if not latest or b.at > latest then latest = b.at end
  end
  if not latest then
    redis.call('DEL', key)
  elseif now then
    redis.call('SET', key, table.concat(parts), 'PX', string.format('%d', latest + rule.k - now + DAY_MS))
  else
    redis.call('SET', key, table.concat(parts))
  end
end
-- Whether bounce a comes before bounce b: by time, then event ID.
local function earlier(a, b)
  if a.at ~= b.at then return a.at < b.at end
  return before(a.id, b.id)
end
-- A rule's window as the suppression's packed provenance (core packProvenance): the last bounce E as
-- the cause ('w', its time, its event ID, [provider, messageId, diagnostic] taken out of its packed
-- bounce [provider, messageId, "eventId", at, diagnostic]: no JSON string holds a bare '"'), then the
-- rule and every bounce of the window.
local function ruleProvenance(rule, window)
  local E = window[#window]
  local at = string.format('%d', E.at)
  local s, e = string.find(E.packed, ',"' .. E.id .. '",' .. at .. ',', 1, true)
  local cause = string.sub(E.packed, 1, s - 1) .. ',' .. string.sub(E.packed, e + 1, -2)
  local bounces = {}
  for i, b in ipairs(window) do bounces[i] = b.packed end
  return 'w' .. at .. ',' .. E.id .. ',' .. cause .. ',[' .. rule.p .. ',[' .. table.concat(bounces, ',') .. ']]]'
end
-- When the suppression stored (and not expired) was made by a window ending at the same bounce E as
-- candidate's, a bounce arrived between that window's members: candidate's window, of the bounces
-- kept now, replaces its provenance and expiry (a join would keep either by arrival). Returns whether
-- it did.
local function remakeWindow(K, candidate, E, now, changed)
  local v, field = storedSuppression(K, candidate.h)
  if not v then return false end
  local rank, createdAt, email, provenance, expiresAt = unpackSuppression(v)
  if expired(expiresAt, now) or not provenance then return false end
  local at, id, source = causeKey(provenance)
  if source ~= 'w' or at ~= E.at or id ~= E.id then return false end
  local rest = cjson.decode(string.sub(provenance, #string.match(provenance, '^[^,]*,[^,]*,') + 1))
  if rest[4] == nil or rest[4] == cjson.null then return false end
  local newExpiresAt = candidate.x or expiresAt
  local remade = packSuppression(rank, createdAt, email, candidate.p, newExpiresAt)
  if remade == v then return true end
  redis.call('HSET', K.s, field, remade)
  indexExpiry(K, candidate.h, expiresAt, newExpiresAt)
  suppressionChange(K, 'suppression.updated', now or candidate.c, candidate.h, remade, v)
  if not changed[candidate.h] then
    changed[candidate.h] = true
    changed.list[#changed.list + 1] = candidate.h
  end
  return true
end
-- Counts one rule input u of an applied event (a soft bounce { h, e, t at, i eventId, m message,
-- q packed }, or a delivery { d = 1, h, t }) under rule ({ n bounces, w windowMs, r reset, x
-- expiresAfterMs or nil, k keepMs, p packed rule }), K the project-wide list. allowlisted(u) tells
-- whether the recipient is allowlisted. Returns the outcome of the suppression a window made ('s',
-- a rank, 'a'), or nil when none was made.
local function countRuleInput(K, u, rule, now, changed, allowlisted)
  local key = K.p .. 'sh:' .. u.h
  local history = loadHistory(key)
  local bounces = history.bounces
  local horizon = now and now - rule.k
  if horizon then
    local keptBounces = {}
    for _, b in ipairs(bounces) do if b.at >= horizon then keptBounces[#keptBounces + 1] = b end end
    bounces, history.bounces = keptBounces, keptBounces
    if history.delivery and history.delivery < horizon then history.delivery = nil end
  end
  local t = u.t
  if u.d then
    if not horizon or t >= horizon then
      history.delivery = math.max(history.delivery or t, t)
      local keptBounces = {}
      for _, b in ipairs(bounces) do if b.at >= history.delivery then keptBounces[#keptBounces + 1] = b end end
      history.bounces = keptBounces
    end
    return saveHistory(key, history, rule, now)
  end
  local I = { at = t, id = u.i, message = u.m, packed = u.q }
  local counted = not (allowlisted(u) or (horizon and t < horizon) or (rule.r and history.delivery and t < history.delivery))
  if counted then
    -- A bounce after the address was suppressed for bouncing or complaining cannot move that suppression.
    local v = storedSuppression(K, u.h)
    if v then
      local rank, _, _, provenance, expiresAt = unpackSuppression(v)
      if rank >= 2 and provenance and not expired(expiresAt, now) and causeKey(provenance) < t then counted = false end
    end
  end
  if counted then
    -- Bounces of one message count once, at the earliest.
    for i, b in ipairs(bounces) do
      if b.message == I.message then
        if earlier(I, b) then table.remove(bounces, i) else counted = false end
        break
      end
    end
  end
  if not counted then return saveHistory(key, history, rule, now) end
  local at = #bounces + 1
  while at > 1 and earlier(I, bounces[at - 1]) do at = at - 1 end
  table.insert(bounces, at, I)
  local outcome
  local n = rule.n
  -- The earliest-ending window that holds I, of those whose suppression would not already be expired
  -- at now (an expired one does not count: a later one may).
  for j = math.max(1, at - n + 1), at do
    local last = bounces[j + n - 1]
    local expiresAt = last and rule.x and last.at + rule.x
    if last and last.at - bounces[j].at <= rule.w and not expired(expiresAt, now) then
      local window = {}
      for w = j, j + n - 1 do window[#window + 1] = bounces[w] end
      local candidate = { h = u.h, r = 2, c = last.at, e = u.e, p = ruleProvenance(rule, window), x = expiresAt }
      if not remakeWindow(K, candidate, last, now, changed) then outcome = mergeSuppression(K, candidate, changed, now) end
      -- Bounces after the suppression cannot move it (they would not be counted): forgotten.
      local keptBounces = {}
      for _, b in ipairs(bounces) do if b.at <= last.at then keptBounces[#keptBounces + 1] = b end end
      history.bounces = keptBounces
      break
    end
  end
  saveHistory(key, history, rule, now)
  return outcome
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "order"
--@include "before"
--@include "trackingIdMember"
-- A trackingIdOrder member: the ID with NUL escaped as NUL 0xFF, a NUL, then its search key. It sorts
-- as the ID alone (the escape keeps byte order and no member is a prefix of another), and a search
-- reads the search key from the member itself.
local function encodeId(id)
  return (string.gsub(id, '%z', '\\0\\255')) .. '\\0'
end
-- Where the encoded ID of a member ends (its NUL): a search key never starts with 0xFF (UTF-8).
local function idEnd(member)
  local at = 0
  repeat at = string.find(member, '\\0', at + 1, true) until string.byte(member, at + 1) ~= 255
  return at
end
local function decodeId(member, at)
  return (string.gsub(string.sub(member, 1, at - 1), '%z\\255', '\\0'))
end
local function searchKeyOf(member)
  return string.sub(member, idEnd(member) + 1)
end
--@include "searchBlocks"
-- Search blocks (layout.ts searchBlockKeyOf): TK the heads ('' and trackingIdOrder members); the
-- STRING 'tb:<head>' is the count of IDs in the block's range in 3 digits, then '\\254' .. search key
-- per ID, in any order. 0xFE is in no UTF-8 text, so a search never matches across two keys. TC, while
-- blocks are built for IDs stored before them, is the last member built: members after it are in no
-- block yet.
local BLOCK_MAX, BLOCK_FILL = {{SEARCH_BLOCK_MAX}}, {{SEARCH_BLOCK_FILL}}
local function blockHead(TK, member)
  return redis.call('ZRANGE', TK, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- TK is '<prefix>tk'.
local function blockKey(TK, head)
  return string.sub(TK, 1, -3) .. 'tb:' .. head
end
local function blockValue(count, keys)
  return string.format('%03d', count) .. table.concat(keys)
end
--@include "feed"
--@include "alertWindows"
-- Deliverability alerts (docs/decisions.md, "Deliverability alerts"), inside applyEvents' step per
-- event. A window per scope (layout.ts alertWindowKeyOf): a HASH of counters n (messages), b (hard
-- bounced), c (complained), i (messages that ever entered: the newest slot's number), bf and cf (1
-- while firing), and per message in it a slot 's<number>' (a flags digit, 1 bounced + 2 complained,
-- then the message key) and 'k<message key>' (its slot's number). The oldest slot is number i - n + 1.
--@include "feed"
local HARD_BOUNCED, COMPLAINED = {{Fact.hard_bounced}}, {{Fact.complained}}
local function flagsOf(f)
  return (bit.band(f, HARD_BOUNCED) ~= 0 and 1 or 0) + (bit.band(f, COMPLAINED) ~= 0 and 2 or 0)
end
-- A script reads each window's HASH once and writes it once, at its end (flushWindows): windows holds
-- the windows read, by key, each with its counters (n, b, c, i, and bf, cf true while firing), the
-- fields read or written (f: name -> value, false when absent) and the names written (w). A window's
-- events then cost Lua, not commands (docs/storage.md, "The change feed, alerts and outbound state").
local windows = {}
-- The 'k<message key>' fields of the script's messages (prefetchWindows), read with a window's
-- counters, and the rule's window size.
local prefetched, windowSize = {}, 0
local function prefetchWindows(messageKeys, size)
  windowSize = size
  local seen = {}
  for _, messageKey in ipairs(messageKeys) do
    if not seen[messageKey] then
      seen[messageKey] = true
      prefetched[#prefetched + 1] = 'k' .. messageKey
    end
  end
end
local function loadWindow(key)
  local W = windows[key]
  if W then return W end
  local v = redis.call('HMGET', key, 'n', 'b', 'c', 'i', 'bf', 'cf', unpack(prefetched))
  W = { key = key, n = tonumber(v[1]) or 0, b = tonumber(v[2]) or 0, c = tonumber(v[3]) or 0, i = tonumber(v[4]) or 0, bf = v[5] and true, cf = v[6] and true, f = {}, w = {} }
  W.loaded = { W.n, W.b, W.c, W.i, W.bf, W.cf }
  for j, name in ipairs(prefetched) do W.f[name] = v[j + 6] or false end
  -- And the oldest slots the script's new messages may push out (a shrunk rule's more are read as needed).
  local out = math.min(W.n, W.n + #prefetched - windowSize)
  if out > 0 then
    local names = {}
    for j = 1, out do names[j] = 's' .. (W.i - W.n + j) end
    local slots = redis.call('HMGET', key, unpack(names))
    for j, name in ipairs(names) do W.f[name] = slots[j] or false end
  end
  windows[key] = W
  return W
end
-- Reads fields of W not read yet, in one HMGET; returns the first's value (false when absent).
local function readFields(W, ...)
  local names, missing = { ... }, {}
  for _, name in ipairs(names) do
    if W.f[name] == nil then missing[#missing + 1] = name end
  end
  if #missing > 0 then
    local v = redis.call('HMGET', W.key, unpack(missing))
    for j, name in ipairs(missing) do W.f[name] = v[j] or false end
  end
  return W.f[names[1]]
end
local function setField(W, name, value)
  W.f[name], W.w[name] = value, true
end
-- Writes what the script changed: the fields written (HSET, HDEL for those gone) and the counters
-- that moved, in chunks (unpack's stack is bounded).
local function flushWindows()
  for key, W in pairs(windows) do
    local set, gone = {}, {}
    local function put(name, value)
      set[#set + 1], set[#set + 2] = name, value
    end
    for name in pairs(W.w) do
      if W.f[name] then put(name, W.f[name]) else gone[#gone + 1] = name end
    end
    local L = W.loaded
    if W.n ~= L[1] or W.b ~= L[2] or W.c ~= L[3] or W.i ~= L[4] then
      put('n', W.n)
      put('b', W.b)
      put('c', W.c)
      put('i', W.i)
    end
    if W.bf and not L[5] then put('bf', 1) elseif L[5] and not W.bf then gone[#gone + 1] = 'bf' end
    if W.cf and not L[6] then put('cf', 1) elseif L[6] and not W.cf then gone[#gone + 1] = 'cf' end
    for j = 1, #set, 4000 do redis.call('HSET', key, unpack(set, j, math.min(j + 3999, #set))) end
    for j = 1, #gone, 4000 do redis.call('HDEL', key, unpack(gone, j, math.min(j + 3999, #gone))) end
  end
  windows = {}
end
-- A message held in window W (number its slot's) gained flags (those of its facts f): each counts
-- once. Returns W when a count moved, else nil.
local function markSlot(W, number, f)
  local slot = readFields(W, 's' .. number)
  local known = tonumber(string.sub(slot, 1, 1))
  local flags = bit.band(flagsOf(f), bit.bnot(known))
  if flags == 0 then return nil end
  setField(W, 's' .. number, (known + flags) .. string.sub(slot, 2))
  W.b, W.c = W.b + flags % 2, W.c + math.floor(flags / 2)
  return W
end
-- A message in the window at key gained flags: the window when a count moved, else nil (also when the
-- message is not in it).
local function markWindow(key, messageKey, f)
  local W = loadWindow(key)
  local number = readFields(W, 'k' .. messageKey)
  if not number then return nil end
  return markSlot(W, number, f)
end
-- A message the store had not seen (facts f) enters the window at key, pushing the oldest out past
-- rule.w (the rule's window may have shrunk: as many as it takes). A key held already (retention
-- forgot its message, an event made it anew) is marked instead. Returns the window: it moved.
local function enterWindow(key, rule, messageKey, f)
  local W = loadWindow(key)
  -- The oldest slot comes along with the key when the window is full: one read for both.
  local number = readFields(W, 'k' .. messageKey, 's' .. (W.i - W.n + 1))
  if number then return markSlot(W, number, f) or W end
  local flags = flagsOf(f)
  W.i, W.n = W.i + 1, W.n + 1
  setField(W, 's' .. W.i, flags .. messageKey)
  setField(W, 'k' .. messageKey, W.i)
  while W.n > rule.w do
    local oldest = W.i - W.n + 1
    local gone = readFields(W, 's' .. oldest)
    if gone then
      local goneFlags = tonumber(string.sub(gone, 1, 1))
      W.b, W.c = W.b - goneFlags % 2, W.c - math.floor(goneFlags / 2)
      setField(W, 's' .. oldest, false)
      setField(W, 'k' .. string.sub(gone, 2), false)
    end
    W.n = W.n - 1
  end
  W.b, W.c = W.b + flags % 2, W.c + math.floor(flags / 2)
  return W
end
-- Compares one alert of a moved window with the rule (integers only, as every store does): a
-- crossing flips its state (firing, the field of W) and appends its change (kind). Returns true when it
-- fired, false when it resolved, nil when neither.
local function crossAlert(W, firing, kind, count, ppm, minMessages, trackingId, at)
  local flip, threshold
  if not W[firing] and W.n >= minMessages and count * 1000000 >= ppm[1] * W.n then
    flip, threshold = true, ppm[1]
  elseif W[firing] and count * 1000000 < ppm[2] * W.n then
    flip, threshold = false, ppm[2]
  else
    return nil
  end
  W[firing] = flip
  if feed then
    local fields = { 'fi', flip and '1' or '0', 'n', W.n, 'c', count, 'th', threshold }
    if trackingId then fields[#fields + 1], fields[#fields + 2] = 'tr', trackingId end
    appendChange(kind, at, fields)
  end
  return flip
end
-- A moved window W (nil: none moved) against the rule: bounces, then complaints. Returns the kind of
-- the first crossing up, or nil.
local function crossWindow(W, rule, trackingId, at)
  if not W then return nil end
  local bounce = crossAlert(W, 'bf', 'alert.bounce_rate', W.b, rule.b, rule.m, trackingId, at)
  local complaint = crossAlert(W, 'cf', 'alert.complaint_rate', W.c, rule.c, rule.m, trackingId, at)
  if bounce then return 'alert.bounce_rate' end
  if complaint then return 'alert.complaint_rate' end
  return nil
end
-- Pauses the rule's streams not already paused (HASH 'paused': stream → pausedAt '|' cause).
local function pauseStreams(prefix, streams, cause, at)
  for _, stream in ipairs(streams) do
    if redis.call('HSETNX', prefix .. 'paused', stream, string.format('%d', at) .. '|' .. cause) == 1 and feed then
      appendChange('stream.paused', at, { 'st', stream, 'ca', cause })
    end
  end
end
-- The alerts of one applied event of message e under rule ({ w window, m minMessages, b and c {
-- firePpm, resolvePpm }, t per tracking ID, p streams to pause }): merged holds its facts before (old,
-- nil when the event created it) and after (f), its tracking ID before (oldT) and after (t). A message
-- counts in the windows it entered: its tracking ID's then, or (joined later) now. Crossings: the
-- project's window first; then the streams its crossing up pauses.
local function moveAlerts(prefix, rule, e, merged, at)
  -- Each window is compared as soon as it moved: they are apart, so the changes keep that order.
  local up
  if merged.old == nil then
    up = crossWindow(enterWindow(prefix .. 'aw', rule, e.key, merged.f), rule, nil, at)
    if rule.t and merged.t then crossWindow(enterWindow(prefix .. 'aw:' .. merged.t, rule, e.key, merged.f), rule, merged.t, at) end
  elseif bit.band(flagsOf(merged.f), bit.bnot(flagsOf(merged.old))) ~= 0 then
    up = crossWindow(markWindow(prefix .. 'aw', e.key, merged.f), rule, nil, at)
    if rule.t then
      if merged.oldT then crossWindow(markWindow(prefix .. 'aw:' .. merged.oldT, e.key, merged.f), rule, merged.oldT, at) end
      if merged.t and merged.t ~= merged.oldT then crossWindow(markWindow(prefix .. 'aw:' .. merged.t, e.key, merged.f), rule, merged.t, at) end
    end
  end
  if up then pauseStreams(prefix, rule.p, up, at) end
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local MO, T, TO, TK, TC = KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local events = cjson.decode(ARGV[1])
local prefix, ttl, channel, projectId = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local now, rule = tonumber(ARGV[6]), ARGV[7] ~= '' and cjson.decode(ARGV[7])
local changed = { list = {} }
feed = openFeed(prefix, ARGV[8])
local alerts = ARGV[9] ~= '' and cjson.decode(ARGV[9])

-- Whether a recipient (its hash h and address e) is on the project's allowlist (the HASH 'al': key →
-- entry, the hash or '@' and the domain after the address's last '@'). Read only for events that need
-- it, and not at all while the project has no allowlist.
local allowlist
local function allowlisted(r)
  if allowlist == nil then allowlist = redis.call('EXISTS', prefix .. 'al') == 1 end
  if not allowlist then return false end
  local found = redis.call('HMGET', prefix .. 'al', r.h, '@' .. string.match(r.e, '[^@]*$'))
  return (found[1] or found[2]) and true or false
end

-- countersOf: delivered, bounced, complained, opened, clicked, unsubscribed.
local COUNTED = { {{counterFacts.delivered}}, {{counterFacts.bounced}}, {{counterFacts.complained}}, {{counterFacts.opened}}, {{counterFacts.clicked}}, {{counterFacts.unsubscribed}} }
local function counters(f)
  local c = {}
  for i, mask in ipairs(COUNTED) do c[i] = bit.band(f, mask) ~= 0 and 1 or 0 end
  return c
end
-- Counters a - b (b nil: a), times sign.
local function minus(a, b, sign)
  local c = {}
  for i = 1, #COUNTED do c[i] = (a[i] - (b and b[i] or 0)) * (sign or 1) end
  return c
end

local function messagesOf(id) return prefix .. 'mt:' .. id end

-- Counts over time (core messages/stats.ts): a message's fact times are its hash fields c1..c7
-- (statColumns order), the hour buckets HASHes per UTC day (layout.ts statsKeyOf), field 'hour:column'.
local STAT_FACTS = { {{statFacts}} }
local function bump(id, t, c, delta)
  local hour = math.floor(t / {{HOUR_MS}})
  local day = math.floor(hour / 24)
  local key = prefix .. 'sp:' .. string.format('%d', day)
  if id then key = prefix .. 'st:' .. string.format('%d', day) .. ':' .. id end
  local field = string.format('%d:%d', hour - day * 24, c - 1)
  -- A count back at 0 leaves, so a day whose counts all moved away leaves no key behind.
  if redis.call('HINCRBY', key, field, delta) == 0 then redis.call('HDEL', key, field) end
end
-- mergeFactTimes: known holds the message's c1..c7 from index 'at' (false when absent), knownF its facts
-- (nil for a new message). Returns the times and the HSET fields that changed.
local function factTimes(known, at, knownF, f, time)
  local times, fields = {}, {}
  for c = 1, #STAT_FACTS do
    local had = known and known[at + c - 1]
    had = had and tonumber(had) or nil
    local t = had
    if bit.band(f, STAT_FACTS[c]) ~= 0 then
      if not knownF or bit.band(knownF, STAT_FACTS[c]) == 0 then t = time
      elseif had and time < had then t = time end
    end
    times[c] = t
    if t ~= had then fields[#fields + 1], fields[#fields + 2] = 'c' .. c, t end
  end
  return times, fields
end
-- statsMoves: what the message counted leaves its buckets, what it counts comes in.
local function moveStats(oldT, old, newT, new)
  for c = 1, #STAT_FACTS do
    local o, n = old[c], new[c]
    if o ~= n then
      if o then bump(nil, o, c, -1) end
      if n then bump(nil, n, c, 1) end
    end
    if o ~= n or oldT ~= newT then
      if o and oldT then bump(oldT, o, c, -1) end
      if n and newT then bump(newT, n, c, 1) end
    end
  end
end

-- The latest event of a row's messages. Drops entries whose message expired or came back under
-- another ID or time (retention): an entry is current when its message has this ID and that first time.
local function latestOf(id, fallback)
  local index, latest = messagesOf(id), nil
  for _, member in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    local m = redis.call('HMGET', prefix .. 'm:' .. string.sub(member, 18), 't', 'a', 'b')
    if m[2] and m[1] == id and tonumber(m[2]) == timeOf(member) then
      local b = tonumber(m[3])
      if latest == nil or b > latest then latest = b end
    else
      redis.call('ZREM', index, member)
    end
  end
  return latest or fallback
end

-- Rows read once per call (most events of a batch share a few tracking IDs), written at every event.
local rows = {}
local function row(id)
  local r = rows[id]
  if r == nil then
    local v = redis.call('HGET', T, id)
    if v and string.byte(v, 1) == 43 then
      -- '+m,d,b,c,o,k,u,last,key': with opened, clicked and unsubscribed (layout.ts decodeTrackingIdRow).
      local m, d, b, c, o, k, u, last, key = string.match(v, '^%+(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(.*)$')
      r = { tonumber(m), tonumber(d), tonumber(b), tonumber(c), tonumber(last), key, tonumber(o), tonumber(k), tonumber(u) }
    elseif v then
      -- A row written before those counters: they start at 0.
      local m, d, b, c, last, key = string.match(v, '^(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(%-?%d+),(.*)$')
      r = { tonumber(m), tonumber(d), tonumber(b), tonumber(c), tonumber(last), key, 0, 0, 0 }
    else
      r = false
    end
    rows[id] = r
  end
  return r
end

-- Whether the search blocks hold this trackingIdOrder member's range: always once built; while being
-- built, up to the cursor; never for IDs stored before blocks existed, until a search builds them.
local function inBlocks(member, adding)
  local cursor = redis.call('GET', TC)
  if cursor then return not before(cursor, member) end
  if redis.call('EXISTS', TK) == 1 then return true end
  -- A project's first tracking ID (just added: the only member) starts its blocks.
  if not adding or redis.call('ZCARD', TO) ~= 1 then return false end
  redis.call('ZADD', TK, 0, '')
  redis.call('SET', blockKey(TK, ''), '000')
  return true
end
-- Rewrites the block at head from trackingIdOrder as two: in halves, or when the member just added is
-- the block's last (IDs that arrive in order), BLOCK_FILL and the rest, so appended blocks stay full.
local function splitBlock(head, added)
  local nextHead = redis.call('ZRANGE', TK, '(' .. head, '+', 'BYLEX', 'LIMIT', 0, 1)[1]
  local stop = nextHead and '(' .. nextHead or '+'
  local cursor = redis.call('GET', TC)
  if cursor and not nextHead then stop = '[' .. cursor end
  local members = redis.call('ZRANGE', TO, head == '' and '-' or '[' .. head, stop, 'BYLEX')
  local half = math.floor(#members / 2)
  if members[#members] == added then half = BLOCK_FILL end
  local first, second = {}, {}
  for i, member in ipairs(members) do
    local keys = i <= half and first or second
    keys[#keys + 1] = '\\254' .. searchKeyOf(member)
  end
  redis.call('SET', blockKey(TK, head), blockValue(#first, first))
  redis.call('SET', blockKey(TK, members[half + 1]), blockValue(#second, second))
  redis.call('ZADD', TK, 0, members[half + 1])
end
-- After a member was added to trackingIdOrder: its search key joins its block (APPEND: the block is
-- not copied).
local function addSearchKey(member, key)
  if not inBlocks(member, true) then return end
  local head = blockHead(TK, member)
  local block = blockKey(TK, head)
  local count = tonumber(redis.call('GETRANGE', block, 0, 2))
  if count >= BLOCK_MAX then return splitBlock(head, member) end
  redis.call('APPEND', block, '\\254' .. key)
  redis.call('SETRANGE', block, 0, string.format('%03d', count + 1))
end
-- Before a member leaves trackingIdOrder: its search key leaves its block, and an emptied block goes
-- (its range falls to the block before; the first block, head '', stays).
local function removeSearchKey(member, key)
  if not inBlocks(member, false) then return end
  local head = blockHead(TK, member)
  local block = blockKey(TK, head)
  local v = redis.call('GET', block)
  local at = string.find(v .. '\\254', '\\254' .. key .. '\\254', 4, true)
  if not at then return end
  local count = tonumber(string.sub(v, 1, 3))
  if count == 1 and head ~= '' then
    redis.call('DEL', block)
    redis.call('ZREM', TK, head)
  else
    redis.call('SET', block, string.format('%03d', count - 1) .. string.sub(v, 4, at - 1) .. string.sub(v, at + 1 + #key))
  end
end

-- Moves a row by a delta; raise = nil recomputes lastEventAt (the message left the row).
local function moveRow(id, searchKey, dm, delta, raise)
  local r = row(id)
  if not r then
    r = { 0, 0, 0, 0, raise or 0, searchKey or id, 0, 0, 0 }
    rows[id] = r
    redis.call('ZADD', TO, 0, encodeId(id) .. r[6])
    addSearchKey(encodeId(id) .. r[6], r[6])
  end
  r[1], r[2], r[3], r[4] = r[1] + dm, r[2] + delta[1], r[3] + delta[2], r[4] + delta[3]
  r[7], r[8], r[9] = r[7] + delta[4], r[8] + delta[5], r[9] + delta[6]
  if r[1] <= 0 then
    redis.call('HDEL', T, id)
    removeSearchKey(encodeId(id) .. r[6], r[6])
    redis.call('ZREM', TO, encodeId(id) .. r[6])
    redis.call('DEL', messagesOf(id))
    rows[id] = false
    return
  end
  if raise then r[5] = math.max(r[5], raise) else r[5] = latestOf(id, r[5]) end
  redis.call('HSET', T, id, string.format('+%d,%d,%d,%d,%d,%d,%d,%d,', r[1], r[2], r[3], r[4], r[7], r[8], r[9], r[5]) .. r[6])
end

-- insertTimelineEntry: in order, unless an entry of that time has this id; past the cap, the entry
-- right after the first ones kept goes. Expires with its message.
local function addTimelineEntry(tl, time, member)
  local id = string.sub(member, 1, 32)
  for _, known in ipairs(redis.call('ZRANGE', tl, time, time, 'BYSCORE')) do
    if string.sub(known, 1, 32) == id then return end
  end
  redis.call('ZADD', tl, time, member)
  if redis.call('ZCARD', tl) > {{TIMELINE_CAP}} then
    redis.call('ZREMRANGEBYRANK', tl, {{TIMELINE_LIMITS.first}}, {{TIMELINE_LIMITS.first}})
  end
  if ttl then redis.call('PEXPIRE', tl, ttl) end
end

-- Merges an event's message. Returns its facts before (old, nil when the event created it) and after
-- (f), its tracking ID before (oldT), and the message as stored now: t, s, a, b, and with the feed p,
-- i, r; false without the feed and alerts (nothing reads it then).
local function mergeMessage(e)
  local mk = KEYS[e.k]
  -- What the feed and the alert windows read; nothing to build without either.
  local merged = (feed or alerts) and {}
  local known
  -- With the feed, the identity fields too, for a status change.
  if feed then
    known = redis.call('HMGET', mk, 't', 'f', 'a', 'b', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 's', 'p', 'i', 'r')
  else
    known = redis.call('HMGET', mk, 't', 'f', 'a', 'b', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 's')
  end
  local seenIndex = e.x and KEYS[e.x]
  if not known[2] then
    local fields = { 'p', e.p, 'i', e.i, 'r', e.r, 'f', e.f, 'a', e.a, 'b', e.b }
    if e.t then fields[#fields + 1], fields[#fields + 2] = 't', e.t end
    if e.s then fields[#fields + 1], fields[#fields + 2] = 's', e.s end
    local times, timeFields = factTimes(nil, 5, nil, e.f, e.a)
    for _, v in ipairs(timeFields) do fields[#fields + 1] = v end
    redis.call('HSET', mk, unpack(fields))
    moveStats(nil, {}, e.t, times)
    local member = e.o .. e.key
    redis.call('ZADD', MO, 0, member)
    if e.t then
      redis.call('ZADD', seenIndex, 0, member)
      moveRow(e.t, e.q or e.t, 1, counters(e.f), e.b)
    end
    if merged then
      merged.f, merged.t, merged.s, merged.p, merged.i, merged.r = e.f, e.t, e.s, e.p, e.i, e.r
      merged.a, merged.b = e.a, e.b
    end
  else
    local oldT, oldF, oldA, oldB = known[1] or nil, tonumber(known[2]), tonumber(known[3]), tonumber(known[4])
    -- joinTrackingIds: an ID beats none; of two, the smaller in byte order.
    local newT = oldT
    if e.t and e.t ~= oldT and (not oldT or before(e.t, oldT)) then newT = e.t end
    local newF, newA, newB = bit.bor(oldF, e.f), math.min(oldA, e.a), math.max(oldB, e.b)
    -- The stream joins as the ID does: one beats none; of two (a sender error), the smaller.
    local oldS = known[12] or nil
    local newS = oldS
    if e.s and e.s ~= oldS and (not oldS or before(e.s, oldS)) then
      redis.call('HSET', mk, 's', e.s)
      newS = e.s
    end
    local oldTimes = factTimes(known, 5, oldF, 0, 0)
    local newTimes, timeFields = factTimes(known, 5, oldF, e.f, e.a)
    if #timeFields > 0 then redis.call('HSET', mk, unpack(timeFields)) end
    moveStats(oldT, oldTimes, newT, newTimes)
    if newT ~= oldT then
      redis.call('HSET', mk, 'f', newF, 'a', newA, 'b', newB, 't', newT)
    elseif newF ~= oldF or newA ~= oldA or newB ~= oldB then
      redis.call('HSET', mk, 'f', newF, 'a', newA, 'b', newB)
    end
    -- Order members, only when an index changes: the time moved earlier, or the ID changed.
    local oldMember, newMember
    if newA ~= oldA or newT ~= oldT then
      oldMember = order(oldA) .. e.key
      newMember = newA == oldA and oldMember or e.o .. e.key
    end
    if newA ~= oldA then
      redis.call('ZREM', MO, oldMember)
      redis.call('ZADD', MO, 0, newMember)
    end
    if oldT and oldT ~= newT then
      redis.call('ZREM', messagesOf(oldT), oldMember)
      moveRow(oldT, nil, -1, minus(counters(oldF), nil, -1), nil)
    end
    if newT then
      local index = newT == e.t and seenIndex or messagesOf(newT)
      local now = counters(newF)
      if oldT == newT then
        if newA ~= oldA then
          redis.call('ZREM', index, oldMember)
          redis.call('ZADD', index, 0, newMember)
        end
        moveRow(newT, nil, 0, minus(now, counters(oldF)), newB)
      else
        redis.call('ZADD', index, 0, newMember)
        moveRow(newT, e.q or e.t, 1, now, newB)
      end
    end
    if merged then
      merged.old, merged.f, merged.oldT, merged.t = oldF, newF, oldT, newT
      merged.s, merged.a, merged.b, merged.p, merged.i, merged.r = newS, newA, newB, known[13], known[14], known[15]
    end
  end
  if ttl then redis.call('PEXPIRE', mk, ttl) end
  if e.l then addTimelineEntry(KEYS[e.l], e.z, e.e) end
  return merged
end

-- A message's status (core messageStatus) as its 1-based index in messageStatuses: the first whose
-- fact it has, else the last (sent).
local STATUS_FACTS = { {{STATUS_FACTS}} }
local function statusOf(f)
  for i, mask in ipairs(STATUS_FACTS) do
    if bit.band(f, mask) ~= 0 then return i end
  end
  return #STATUS_FACTS
end
-- message.status_changed when the merge created the message or changed its status: the message as
-- stored now, from and to as status indexes, and the event (its timeline entry's id, type y, time z).
local function statusChange(e, m, at)
  -- An event without its timeline entry names no event (the service always gives one; the model appends none).
  if not e.l then return end
  local to = statusOf(m.f)
  local from = m.old and statusOf(m.old)
  if from == to then return end
  local fields = { 'm', e.key, 'mp', m.p, 'mi', m.i, 'mr', m.r, 'mf', m.f, 'm1', m.a, 'm2', m.b, 'to', to }
  local function add(name, value)
    if value then fields[#fields + 1], fields[#fields + 2] = name, value end
  end
  add('fr', from)
  add('mt', m.t)
  add('ms', m.s)
  add('ei', string.sub(e.e, 1, 32))
  add('et', e.y)
  add('eo', e.z)
  appendChange('message.status_changed', at, fields)
end

if alerts then
  local messageKeys = {}
  for _, e in ipairs(events) do
    if e.m then messageKeys[#messageKeys + 1] = e.m.key end
  end
  prefetchWindows(messageKeys, alerts.w)
end

local outcomes = {}
for i, e in ipairs(events) do
  local fresh
  if ttl then fresh = redis.call('SET', KEYS[e.d], '1', 'NX', 'PX', ttl) else fresh = redis.call('SET', KEYS[e.d], '1', 'NX') end
  if fresh then
    -- The event's actor (its webhook's); the rules' changes name their rule.
    actor = e.a or false
    local merged = e.m and mergeMessage(e.m) or nil
    local outcome
    if e.s and not (string.byte(e.s.p or '', 1) == 119 and allowlisted(e.s)) then
      outcome = mergeSuppression(listOf(K, e.s), e.s, changed, now)
    end
    if e.u and rule then
      actor = RULE_SOFT_BOUNCES
      local ruleOutcome = countRuleInput(K, e.u, rule, now, changed, allowlisted)
      actor = e.a or false
      if not e.s then outcome = ruleOutcome end
    end
    if merged then
      -- Without now, a change's time is the event's (its message's lastEventAt).
      local at = now or e.m.b
      if feed then statusChange(e.m, merged, at) end
      if alerts then
        actor = RULE_ALERTS
        moveAlerts(prefix, alerts, e.m, merged, at)
      end
    end
    outcomes[i] = outcome or 'a'
  else
    outcomes[i] = 'd'
  end
end
flushWindows()
trimFeed()
publish(channel, projectId, changed.list)
return table.concat(outcomes)
`,
  },
  values,
);

export const buildSearchBlocks = loadScript(
  {
    name: 'buildSearchBlocks',
    readOnly: false,
    lines: [
      [1, 'lua/buildSearchBlocks.lua', 1, 8],
      [9, 'lua/include/trackingIdMember.lua', 1, 18],
      [27, 'lua/buildSearchBlocks.lua', 9, 1],
      [28, 'lua/include/searchBlocks.lua', 1, 16],
      [44, 'lua/buildSearchBlocks.lua', 10, 30],
    ],
    source: `#!lua
-- buildSearchBlocks: builds the search blocks of IDs stored before blocks existed, in order from the
-- cursor, BLOCK_FILL to a block; applyEvents keeps blocks up to the cursor current meanwhile.
-- KEYS[1] trackingIdOrder, KEYS[2] searchBlockHeads, KEYS[3] searchBuildCursor
-- ARGV[1] the most IDs to add in this call
-- Returns 1 while IDs remain, 0 once every ID is in a block (the cursor is gone).
-- Flags: writes.
--@include "trackingIdMember"
-- A trackingIdOrder member: the ID with NUL escaped as NUL 0xFF, a NUL, then its search key. It sorts
-- as the ID alone (the escape keeps byte order and no member is a prefix of another), and a search
-- reads the search key from the member itself.
local function encodeId(id)
  return (string.gsub(id, '%z', '\\0\\255')) .. '\\0'
end
-- Where the encoded ID of a member ends (its NUL): a search key never starts with 0xFF (UTF-8).
local function idEnd(member)
  local at = 0
  repeat at = string.find(member, '\\0', at + 1, true) until string.byte(member, at + 1) ~= 255
  return at
end
local function decodeId(member, at)
  return (string.gsub(string.sub(member, 1, at - 1), '%z\\255', '\\0'))
end
local function searchKeyOf(member)
  return string.sub(member, idEnd(member) + 1)
end
--@include "searchBlocks"
-- Search blocks (layout.ts searchBlockKeyOf): TK the heads ('' and trackingIdOrder members); the
-- STRING 'tb:<head>' is the count of IDs in the block's range in 3 digits, then '\\254' .. search key
-- per ID, in any order. 0xFE is in no UTF-8 text, so a search never matches across two keys. TC, while
-- blocks are built for IDs stored before them, is the last member built: members after it are in no
-- block yet.
local BLOCK_MAX, BLOCK_FILL = {{SEARCH_BLOCK_MAX}}, {{SEARCH_BLOCK_FILL}}
local function blockHead(TK, member)
  return redis.call('ZRANGE', TK, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- TK is '<prefix>tk'.
local function blockKey(TK, head)
  return string.sub(TK, 1, -3) .. 'tb:' .. head
end
local function blockValue(count, keys)
  return string.format('%03d', count) .. table.concat(keys)
end
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
  keys[#keys + 1] = '\\254' .. searchKeyOf(member)
  count = count + 1
end
redis.call('SET', blockKey(TK, head), string.format('%03d', count) .. table.concat(keys))
if #members < budget then
  redis.call('DEL', TC)
  return 0
end
redis.call('SET', TC, members[#members])
return 1
`,
  },
  values,
);

export const claimWebhookToken = loadScript(
  {
    name: 'claimWebhookToken',
    readOnly: false,
    lines: [
      [1, 'lua/claimWebhookToken.lua', 1, 19],
    ],
    source: `#!lua
-- claimWebhookToken: records a webhook's replay token with the digest of its body.
-- KEYS[1] the token's key (\`wt:<token>\`)
-- ARGV[1] the body digest, ARGV[2] expiresAt (epoch ms)
-- Returns 'first' (recorded now), 'same' (recorded with this digest) or 'conflict' (recorded with
-- another one).
-- Flags: writes.
--
-- The record expires at expiresAt by Redis's own clock (PXAT, absolute, so no clock is read here). A
-- time already past is still a valid answer: SET with a past PXAT deletes the key at once (the token
-- is forgotten as soon as it is recorded, which the contract allows), and PXAT must be positive, so
-- for times at or before the epoch the SET is skipped altogether.
local known = redis.call('GET', KEYS[1])
if known then
  if known == ARGV[1] then return 'same' end
  return 'conflict'
end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2]) end
return 'first'
`,
  },
  values,
);

export const eraseAddress = loadScript(
  {
    name: 'eraseAddress',
    readOnly: false,
    lines: [
      [1, 'lua/eraseAddress.lua', 1, 20],
      [21, 'lua/include/suppressionLayout.lua', 1, 7],
      [28, 'lua/include/before.lua', 1, 8],
      [36, 'lua/include/suppressionLayout.lua', 8, 80],
      [116, 'lua/eraseAddress.lua', 21, 1],
      [117, 'lua/include/storedSuppression.lua', 1, 3],
      [120, 'lua/include/suppressionValue.lua', 1, 23],
      [143, 'lua/include/storedSuppression.lua', 4, 1],
      [144, 'lua/include/order.lua', 1, 13],
      [157, 'lua/include/storedSuppression.lua', 5, 1],
      [158, 'lua/include/orderBytes.lua', 1, 17],
      [175, 'lua/include/storedSuppression.lua', 6, 1],
      [176, 'lua/include/hex.lua', 1, 14],
      [190, 'lua/include/storedSuppression.lua', 7, 44],
      [234, 'lua/eraseAddress.lua', 22, 1],
      [235, 'lua/include/publish.lua', 1, 4],
      [239, 'lua/eraseAddress.lua', 23, 2],
      [241, 'lua/include/feed.lua', 1, 44],
      [285, 'lua/eraseAddress.lua', 25, 138],
    ],
    source: `#!lua
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
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "order"
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
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
  redis.call('ZREM', prefix .. 'ao', string.sub(entry, colon + 1) .. '\\0' .. string.sub(entry, 1, colon - 1) .. ',' .. h)
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
`,
  },
  values,
);

export const findRecipientMessages = loadScript(
  {
    name: 'findRecipientMessages',
    readOnly: true,
    lines: [
      [1, 'lua/findRecipientMessages.lua', 1, 16],
    ],
    source: `#!lua flags=no-writes
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
`,
  },
  values,
);

export const getAlertWindows = loadScript(
  {
    name: 'getAlertWindows',
    readOnly: true,
    lines: [
      [1, 'lua/getAlertWindows.lua', 1, 7],
    ],
    source: `#!lua flags=no-writes
-- getAlertWindows: the counters of some alert windows (lua/include/alertWindows.lua).
-- KEYS the windows' HASHes
-- Returns per window its n, b, c, bf, cf (n nil for a window never moved).
local windows = {}
for i, key in ipairs(KEYS) do windows[i] = redis.call('HMGET', key, 'n', 'b', 'c', 'bf', 'cf') end
return windows
`,
  },
  values,
);

export const getLegacySuppressions = loadScript(
  {
    name: 'getLegacySuppressions',
    readOnly: true,
    lines: [
      [1, 'lua/getLegacySuppressions.lua', 1, 10],
      [11, 'lua/include/suppressionLayout.lua', 1, 7],
      [18, 'lua/include/before.lua', 1, 8],
      [26, 'lua/include/suppressionLayout.lua', 8, 80],
      [106, 'lua/getLegacySuppressions.lua', 11, 1],
      [107, 'lua/include/hex.lua', 1, 14],
      [121, 'lua/getLegacySuppressions.lua', 12, 8],
    ],
    source: `#!lua flags=no-writes
-- getLegacySuppressions: the checks of a project that may hold suppressions of the old layout: each
-- hash's value under its binary field, else under the hex one, in one atomic read.
-- KEYS[1] suppressions, KEYS[2] legacySuppressionOrder, KEYS[3] (for a check in a stream) that stream's
-- HASH
-- ARGV[1..] the hashes (64 hex)
-- Returns 1 while the old layout's order exists (0 once upgraded), then the values (false for none),
-- then, with KEYS[3], each hash's value in the stream's list (no old layout there).
-- Flags: no-writes (EVALSHA_RO).
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
local reply = { redis.call('EXISTS', KEYS[2]) }
for i, h in ipairs(ARGV) do
  local field = fieldOf(unhex(h))
  local values = redis.call('HMGET', KEYS[1], field, h)
  reply[i + 1] = values[1] or values[2]
  if KEYS[3] then reply[#ARGV + i + 1] = redis.call('HGET', KEYS[3], field) end
end
return reply
`,
  },
  values,
);

export const getMessage = loadScript(
  {
    name: 'getMessage',
    readOnly: true,
    lines: [
      [1, 'lua/getMessage.lua', 1, 10],
    ],
    source: `#!lua flags=no-writes
-- getMessage: one message and its timeline.
-- KEYS[1] the message's hash, KEYS[2] its timeline
-- Returns nil for no message, else fields p, i, r, t, f, a, b, s, then the timeline's members in order.
-- Flags: no-writes (EVALSHA_RO).
local m = redis.call('HMGET', KEYS[1], 'p', 'i', 'r', 't', 'f', 'a', 'b', 's')
if not m[5] then return false end
local reply = { m[1], m[2], m[3], m[4] or false, m[5], m[6], m[7], m[8] or false }
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do reply[#reply + 1] = member end
return reply
`,
  },
  values,
);

export const getOutbound = loadScript(
  {
    name: 'getOutbound',
    readOnly: true,
    lines: [
      [1, 'lua/getOutbound.lua', 1, 5],
      [6, 'lua/include/outboundState.lua', 1, 6],
      [12, 'lua/getOutbound.lua', 6, 3],
    ],
    source: `#!lua flags=no-writes
-- getOutbound: the states of some outbound endpoints.
-- KEYS the endpoints' HASHes
-- Returns per endpoint its state (outboundState; the cursor nil for one never leased).
--@include "outboundState"
-- An outbound endpoint's state (layout.ts outboundKeyOf): a HASH of c cursor, f failures, fs
-- failingSince, n nextAttemptAt, p pausedAt, e lastError, s lastSuccessAt (absent for null), o the
-- lease's owner and u its end. The state as the scripts answer it: those seven, in that order.
local function outboundState(key)
  return redis.call('HMGET', key, 'c', 'f', 'fs', 'n', 'p', 'e', 's')
end
local states = {}
for i, key in ipairs(KEYS) do states[i] = outboundState(key) end
return states
`,
  },
  values,
);

export const getStats = loadScript(
  {
    name: 'getStats',
    readOnly: true,
    lines: [
      [1, 'lua/getStats.lua', 1, 8],
    ],
    source: `#!lua flags=no-writes
-- getStats: the hour buckets of some days.
-- KEYS[1..] day HASHes of hour buckets (layout.ts statsKeyOf)
-- Returns each one's fields and values, flat.
-- Flags: no-writes (EVALSHA_RO).
local reply = {}
for i, key in ipairs(KEYS) do reply[i] = redis.call('HGETALL', key) end
return reply
`,
  },
  values,
);

export const getStreamSuppressions = loadScript(
  {
    name: 'getStreamSuppressions',
    readOnly: true,
    lines: [
      [1, 'lua/getStreamSuppressions.lua', 1, 23],
    ],
    source: `#!lua flags=no-writes
-- getStreamSuppressions: the checks of some hashes in a stream, once the project holds no old layout:
-- each hash's value in the project-wide list, else in the stream's (the project-wide one wins), in one
-- call: cheaper than two HMGETs in a pipeline, whose second command costs the client as much again.
-- KEYS[1] suppressions, KEYS[2] the stream's suppressions (layout.ts streamSuppressionKeys)
-- ARGV[1..] the HASH fields (binary, layout.ts suppressionFields)
-- Returns per hash its project-wide value (false for none), then per hash its value in the stream's
-- list when the project-wide list has none or one that expires (\\1 in its value: the caller reads the
-- stream's when it has expired), else false.
-- Flags: no-writes (EVALSHA_RO).
local n, reply = #ARGV, {}
-- HMGET in slices: unpack() of a whole long batch would overflow Lua's stack.
for from = 1, n, 1000 do
  local to = math.min(from + 999, n)
  local projectWide = redis.call('HMGET', KEYS[1], unpack(ARGV, from, to))
  local inStream = redis.call('HMGET', KEYS[2], unpack(ARGV, from, to))
  for i = 1, to - from + 1 do
    reply[from + i - 1] = projectWide[i]
    local p = projectWide[i]
    reply[n + from + i - 1] = (not p or string.find(p, '\\1', 1, true)) and inStream[i] or false
  end
end
return reply
`,
  },
  values,
);

export const leaseOutbound = loadScript(
  {
    name: 'leaseOutbound',
    readOnly: false,
    lines: [
      [1, 'lua/leaseOutbound.lua', 1, 9],
      [10, 'lua/include/outboundState.lua', 1, 6],
      [16, 'lua/leaseOutbound.lua', 10, 9],
    ],
    source: `#!lua
-- leaseOutbound: takes or renews the lease on delivering an endpoint's changes: granted when no one
-- holds it, its holder's ended (until <= now), or owner holds it. An endpoint seen for the first time
-- starts at the project's latest seq.
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] owner, ARGV[2] now, ARGV[3] until, ARGV[4] the project's key prefix
-- Returns the state (outboundState), or nil when another owner holds a lease not ended.
-- Flags: writes.
--@include "outboundState"
-- An outbound endpoint's state (layout.ts outboundKeyOf): a HASH of c cursor, f failures, fs
-- failingSince, n nextAttemptAt, p pausedAt, e lastError, s lastSuccessAt (absent for null), o the
-- lease's owner and u its end. The state as the scripts answer it: those seven, in that order.
local function outboundState(key)
  return redis.call('HMGET', key, 'c', 'f', 'fs', 'n', 'p', 'e', 's')
end
local lease = redis.call('HMGET', KEYS[1], 'c', 'o', 'u')
if not lease[1] then
  local seq = redis.call('HGET', ARGV[4] .. 'feed', 'seq') or '0'
  redis.call('HSET', KEYS[1], 'c', seq, 'f', 0, 'n', 0)
elseif lease[2] and lease[2] ~= ARGV[1] and tonumber(lease[3]) > tonumber(ARGV[2]) then
  return false
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'u', ARGV[3])
return outboundState(KEYS[1])
`,
  },
  values,
);

export const listChanges = loadScript(
  {
    name: 'listChanges',
    readOnly: true,
    lines: [
      [1, 'lua/listChanges.lua', 1, 53],
    ],
    source: `#!lua flags=no-writes
-- listChanges: a page of a project's change feed (lua/include/feed.lua).
-- KEYS[1] the feed's counter (HASH seq, trimmed), KEYS[2] its STREAM
-- ARGV[1] after (a seq), ARGV[2] limit, ARGV[3] the kinds wanted as ',kind,kind,' ('' for every
-- kind), ARGV[4] how many entries a filtered page looks at, at most, ARGV[5] the hash wanted ('' for
-- any), ARGV[6..] the actors wanted (none: any; core actorMatches: equal, or a prefix and ':')
-- Returns { last, trimmed } when after < trimmed (changes after it were deleted), else { last,
-- trimmed, next, entries } with entries as XRANGE answers them.
local counter = redis.call('HMGET', KEYS[1], 'seq', 'trimmed')
local last, trimmed = tonumber(counter[1]) or 0, tonumber(counter[2]) or 0
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if after < trimmed then return { last, trimmed } end
if limit < 1 then return { last, trimmed, after, {} } end
local function seqOf(entry) return tonumber(string.match(entry[1], '^%d+')) end
local kinds, hash, actors = ARGV[3], ARGV[5], #ARGV - 5
if kinds == '' and hash == '' and actors == 0 then
  local entries = redis.call('XRANGE', KEYS[2], '(' .. ARGV[1] .. '-0', '+', 'COUNT', limit)
  return { last, trimmed, #entries > 0 and seqOf(entries[#entries]) or after, entries }
end
-- Whether an entry (its fields: k kind, a at, then by its actor when it has one) passes the filters:
-- its kind, its hash (field h of suppression changes and erasures, ak of allowlist changes) and its actor.
local function wanted(fields)
  if kinds ~= '' and not string.find(kinds, ',' .. fields[2] .. ',', 1, true) then return false end
  if hash == '' and actors == 0 then return true end
  local by, h
  for i = 5, #fields, 2 do
    local name = fields[i]
    if name == 'by' then by = fields[i + 1] elseif name == 'h' or name == 'ak' then h = fields[i + 1] end
  end
  if hash ~= '' and h ~= hash then return false end
  if actors == 0 then return true end
  if not by then return false end
  for i = 6, #ARGV do
    local a = ARGV[i]
    if by == a or (#by > #a and string.sub(by, 1, #a + 1) == a .. ':') then return true end
  end
  return false
end
-- Filtered: looks at up to ARGV[4] entries, so next may pass entries the filters skip.
local budget, found, nextSeq = tonumber(ARGV[4]), {}, after
while budget > 0 and #found < limit do
  local entries = redis.call('XRANGE', KEYS[2], '(' .. string.format('%d', nextSeq) .. '-0', '+', 'COUNT', math.min(budget, limit * 4))
  if #entries == 0 then break end
  for _, entry in ipairs(entries) do
    nextSeq = seqOf(entry)
    budget = budget - 1
    if wanted(entry[2]) then
      found[#found + 1] = entry
      if #found == limit then break end
    end
  end
end
return { last, trimmed, nextSeq, found }
`,
  },
  values,
);

export const listMessages = loadScript(
  {
    name: 'listMessages',
    readOnly: false,
    lines: [
      [1, 'lua/listMessages.lua', 1, 13],
      [14, 'lua/include/order.lua', 1, 13],
      [27, 'lua/listMessages.lua', 14, 46],
    ],
    source: `#!lua
-- listMessages: a page of messages of an order, filtered.
-- KEYS[1] a message order (the project's, or one tracking ID's)
-- ARGV[1] the project key prefix, ARGV[2] ZRANGE BYLEX start, ARGV[3] limit, ARGV[4] and ARGV[5] the
-- status masks (\`stronger\`: facts that must be absent; \`want\`: one that must be present, 0 for any),
-- ARGV[6] the tracking ID the order belongs to ('' for the project's), ARGV[7] the most entries to read
-- in this call, ARGV[8] the provider, ARGV[9] the recipient, ARGV[10] and ARGV[11] the bounds of
-- lastEventAt (from inclusive, to exclusive), each '' for none, ARGV[12] the start of the recipient
-- ('' for any), ARGV[13] its domain after an '@' ('@' .. domain; '' for any), ARGV[14] the stream
-- ('' for any)
-- Returns a resume member ('' when done), then 9 items per message: key, p, i, r, t, f, a, b, s.
-- Flags: writes, only to drop entries of messages that expired (retention).
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
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
`,
  },
  values,
);

export const listSuppressions = loadScript(
  {
    name: 'listSuppressions',
    readOnly: true,
    lines: [
      [1, 'lua/listSuppressions.lua', 1, 17],
      [18, 'lua/include/suppressionLayout.lua', 1, 7],
      [25, 'lua/include/before.lua', 1, 8],
      [33, 'lua/include/suppressionLayout.lua', 8, 80],
      [113, 'lua/listSuppressions.lua', 18, 1],
      [114, 'lua/include/order.lua', 1, 13],
      [127, 'lua/listSuppressions.lua', 19, 1],
      [128, 'lua/include/orderBytes.lua', 1, 17],
      [145, 'lua/listSuppressions.lua', 20, 1],
      [146, 'lua/include/hex.lua', 1, 14],
      [160, 'lua/listSuppressions.lua', 21, 79],
    ],
    source: `#!lua flags=no-writes
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
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
--@include "before"
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[9])
local start, stop, limit, rank, budget, emailPrefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), ARGV[6]
local now, expiring = tonumber(ARGV[7]), ARGV[8]
local filtered = rank ~= '' or emailPrefix ~= '' or expiring ~= ''
-- Whether a HASH value (rank, createdAt, ':', email…, \\1 expiresAt) is kept: the email starts right
-- after the colon, expiresAt after the only \\1.
local function kept(value)
  if rank ~= '' and string.sub(value, 1, 1) ~= rank then return false end
  local colon = string.find(value, ':', 2, true)
  if now or expiring ~= '' then
    local x = string.find(value, '\\1', colon + 1, true)
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
`,
  },
  values,
);

export const listTrackingIds = loadScript(
  {
    name: 'listTrackingIds',
    readOnly: true,
    lines: [
      [1, 'lua/listTrackingIds.lua', 1, 16],
      [17, 'lua/include/trackingIdMember.lua', 1, 18],
      [35, 'lua/listTrackingIds.lua', 17, 1],
      [36, 'lua/include/searchBlocks.lua', 1, 16],
      [52, 'lua/listTrackingIds.lua', 18, 1],
      [53, 'lua/include/before.lua', 1, 8],
      [61, 'lua/listTrackingIds.lua', 19, 77],
    ],
    source: `#!lua flags=no-writes
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
-- A trackingIdOrder member: the ID with NUL escaped as NUL 0xFF, a NUL, then its search key. It sorts
-- as the ID alone (the escape keeps byte order and no member is a prefix of another), and a search
-- reads the search key from the member itself.
local function encodeId(id)
  return (string.gsub(id, '%z', '\\0\\255')) .. '\\0'
end
-- Where the encoded ID of a member ends (its NUL): a search key never starts with 0xFF (UTF-8).
local function idEnd(member)
  local at = 0
  repeat at = string.find(member, '\\0', at + 1, true) until string.byte(member, at + 1) ~= 255
  return at
end
local function decodeId(member, at)
  return (string.gsub(string.sub(member, 1, at - 1), '%z\\255', '\\0'))
end
local function searchKeyOf(member)
  return string.sub(member, idEnd(member) + 1)
end
--@include "searchBlocks"
-- Search blocks (layout.ts searchBlockKeyOf): TK the heads ('' and trackingIdOrder members); the
-- STRING 'tb:<head>' is the count of IDs in the block's range in 3 digits, then '\\254' .. search key
-- per ID, in any order. 0xFE is in no UTF-8 text, so a search never matches across two keys. TC, while
-- blocks are built for IDs stored before them, is the last member built: members after it are in no
-- block yet.
local BLOCK_MAX, BLOCK_FILL = {{SEARCH_BLOCK_MAX}}, {{SEARCH_BLOCK_FILL}}
local function blockHead(TK, member)
  return redis.call('ZRANGE', TK, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- TK is '<prefix>tk'.
local function blockKey(TK, head)
  return string.sub(TK, 1, -3) .. 'tb:' .. head
end
local function blockValue(count, keys)
  return string.format('%03d', count) .. table.concat(keys)
end
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local TT, TO, TK, TC = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local after, limit, search, budget = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
-- Strictly after every member of that ID, whatever its search key: 0xFF never starts one.
local bound = after == '' and '' or encodeId(after) .. '\\255'
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
`,
  },
  values,
);

export const mergeSuppressions = loadScript(
  {
    name: 'mergeSuppressions',
    readOnly: false,
    lines: [
      [1, 'lua/mergeSuppressions.lua', 1, 11],
      [12, 'lua/include/suppressionLayout.lua', 1, 7],
      [19, 'lua/include/before.lua', 1, 8],
      [27, 'lua/include/suppressionLayout.lua', 8, 80],
      [107, 'lua/mergeSuppressions.lua', 12, 1],
      [108, 'lua/include/mergeSuppression.lua', 1, 3],
      [111, 'lua/include/storedSuppression.lua', 1, 3],
      [114, 'lua/include/suppressionValue.lua', 1, 23],
      [137, 'lua/include/storedSuppression.lua', 4, 1],
      [138, 'lua/include/order.lua', 1, 13],
      [151, 'lua/include/storedSuppression.lua', 5, 1],
      [152, 'lua/include/orderBytes.lua', 1, 17],
      [169, 'lua/include/storedSuppression.lua', 6, 1],
      [170, 'lua/include/hex.lua', 1, 14],
      [184, 'lua/include/storedSuppression.lua', 7, 44],
      [228, 'lua/include/mergeSuppression.lua', 4, 5],
      [233, 'lua/include/feed.lua', 1, 44],
      [277, 'lua/include/mergeSuppression.lua', 9, 66],
      [343, 'lua/mergeSuppressions.lua', 13, 1],
      [344, 'lua/include/publish.lua', 1, 4],
      [348, 'lua/mergeSuppressions.lua', 14, 11],
    ],
    source: `#!lua
-- mergeSuppressions: joins each record in order (mergeSuppression); one PUBLISH names every hash it
-- changed.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4..] the HASH
-- and heads of each stream's list the records name (a record's \`k\`, listOf)
-- ARGV[1] the records as JSON (as applyEvents' \`s\`), ARGV[2] invalidation channel, ARGV[3] projectId,
-- ARGV[4] now ('' for none: nothing is expired), ARGV[5] the feed's maxLength ('' for no feed),
-- ARGV[6] the actor ('' for none)
-- Returns one character per record: 's', the rank an upgrade raised from, or 'a'.
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "mergeSuppression"
-- The join of a suppression into the stored ones (core's suppression merge), as applyEvents and
-- mergeSuppressions write it.
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "suppressionLayout"
--@include "suppressionValue"
--@include "orderBytes"
--@include "before"
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
-- What the provenance join compares after the reason: the cause's time, event ID and source letter
-- (a, i, u, w: the sources' byte order; core provenanceWins); a record without provenance compares as
-- the latest, with no ID and the last source.
local function causeKey(provenance)
  if not provenance then return math.huge, '', '~' end
  local source, at, id = string.match(provenance, '^(%a)(%-?%d+),(%x*),')
  return tonumber(at), id, source
end
-- Joins suppression s ({ h hash, r rank, c createdAt, e email, p packed provenance, x expiresAt })
-- into the suppressions of K: reason only upgraded, createdAt the earliest, the email the first one
-- stored, the provenance the stronger reason's, then the earlier cause's, then the smaller event ID's,
-- then the smaller source's (core provenanceWins), and expiresAt with the provenance. With now (nil:
-- nothing expires), s already expired is not written, and a stored record expired at now counts as
-- absent: s replaces it whole (docs/decisions.md, "Suppressions that expire"). A hash it writes is
-- added to changed (a set with its list in changed.list). With the feed open, each change is
-- appended (an expired record replaced, then added, upgraded or updated), at now (nil: the record's
-- createdAt). Returns the outcome: 's' when it created the suppression, the rank it had when s
-- raised it, else 'a'.
local function mergeSuppression(K, s, changed, now)
  if expired(s.x, now) then return 'a' end
  local v, field, hash = storedSuppression(K, s.h)
  local outcome = 'a'
  local rank, createdAt, email, provenance, expiresAt
  if v then rank, createdAt, email, provenance, expiresAt = unpackSuppression(v) end
  if v and expired(expiresAt, now) then
    orderRemove(K, orderBytes(createdAt) .. hash)
    suppressionChange(K, 'suppression.expired', now, s.h, v, nil, RULE_EXPIRY)
    v = false
  end
  if not v then
    local stored = packSuppression(s.r, s.c, s.e, s.p, s.x)
    redis.call('HSET', K.s, field, stored)
    orderAdd(K, orderBytes(s.c) .. hash)
    indexExpiry(K, s.h, expiresAt, s.x)
    suppressionChange(K, 'suppression.added', now or s.c, s.h, stored)
    outcome = 's'
  else
    local newRank, newCreatedAt, newProvenance, newExpiresAt = math.max(rank, s.r), math.min(createdAt, s.c), provenance, expiresAt
    if s.r > rank then
      newProvenance, newExpiresAt = s.p, s.x
    elseif s.r == rank then
      local at, id, source = causeKey(s.p)
      local knownAt, knownId, knownSource = causeKey(provenance)
      if at < knownAt or (at == knownAt and (before(id, knownId) or (id == knownId and before(source, knownSource)))) then
        newProvenance, newExpiresAt = s.p, s.x
      end
    end
    if newRank == rank and newCreatedAt == createdAt and newProvenance == provenance and newExpiresAt == expiresAt then return outcome end
    if newRank > rank then outcome = tostring(rank) end
    local stored = packSuppression(newRank, newCreatedAt, email, newProvenance, newExpiresAt)
    redis.call('HSET', K.s, field, stored)
    if stored ~= v then
      suppressionChange(K, newRank > rank and 'suppression.upgraded' or 'suppression.updated', now or s.c, s.h, stored, v)
    end
    if newCreatedAt ~= createdAt then
      orderRemove(K, orderBytes(createdAt) .. hash)
      orderAdd(K, orderBytes(newCreatedAt) .. hash)
    end
    indexExpiry(K, s.h, expiresAt, newExpiresAt)
  end
  if not changed[s.h] then
    changed[s.h] = true
    changed.list[#changed.list + 1] = s.h
  end
  return outcome
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
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
`,
  },
  values,
);

export const pauseStream = loadScript(
  {
    name: 'pauseStream',
    readOnly: false,
    lines: [
      [1, 'lua/pauseStream.lua', 1, 8],
      [9, 'lua/include/feed.lua', 1, 44],
      [53, 'lua/pauseStream.lua', 9, 10],
    ],
    source: `#!lua
-- pauseStream: pauses a stream's sending unless it is paused (stream.paused, cause operator).
-- KEYS[1] the paused streams (HASH stream → pausedAt '|' cause)
-- ARGV[1] stream, ARGV[2] now, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength ('' for no feed),
-- ARGV[5] the actor ('' for none)
-- Returns the value of the stream already paused, or nil once paused.
-- Flags: writes.
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|operator')
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('stream.paused', tonumber(ARGV[2]), { 'st', ARGV[1], 'ca', 'operator' })
  trimFeed()
end
return false
`,
  },
  values,
);

export const purgeChanges = loadScript(
  {
    name: 'purgeChanges',
    readOnly: false,
    lines: [
      [1, 'lua/purgeChanges.lua', 1, 20],
    ],
    source: `#!lua
-- purgeChanges: deletes a project's oldest changes older than the feed's maxAgeMs, from the front
-- (changes after one that is kept stay: the feed keeps no gap), and records the last one deleted.
-- KEYS[1] the feed's counter (HASH seq, trimmed), KEYS[2] its STREAM
-- ARGV[1] the time before which a change is deleted (now - maxAgeMs), ARGV[2] the most to look at
-- Returns how many it deleted.
-- Flags: writes.
local cutoff = tonumber(ARGV[1])
local deleted, through = 0, nil
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', tonumber(ARGV[2]))) do
  -- Fields k (the kind) then a (its time) come first.
  if tonumber(entry[2][4]) >= cutoff then break end
  through = tonumber(string.match(entry[1], '^%d+'))
  deleted = deleted + 1
end
if through then
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', through + 1))
  redis.call('HSET', KEYS[1], 'trimmed', string.format('%d', through))
end
return deleted
`,
  },
  values,
);

export const purgeExpired = loadScript(
  {
    name: 'purgeExpired',
    readOnly: false,
    lines: [
      [1, 'lua/purgeExpired.lua', 1, 10],
      [11, 'lua/include/suppressionLayout.lua', 1, 7],
      [18, 'lua/include/before.lua', 1, 8],
      [26, 'lua/include/suppressionLayout.lua', 8, 80],
      [106, 'lua/purgeExpired.lua', 11, 1],
      [107, 'lua/include/storedSuppression.lua', 1, 3],
      [110, 'lua/include/suppressionValue.lua', 1, 23],
      [133, 'lua/include/storedSuppression.lua', 4, 1],
      [134, 'lua/include/order.lua', 1, 13],
      [147, 'lua/include/storedSuppression.lua', 5, 1],
      [148, 'lua/include/orderBytes.lua', 1, 17],
      [165, 'lua/include/storedSuppression.lua', 6, 1],
      [166, 'lua/include/hex.lua', 1, 14],
      [180, 'lua/include/storedSuppression.lua', 7, 44],
      [224, 'lua/purgeExpired.lua', 12, 1],
      [225, 'lua/include/publish.lua', 1, 4],
      [229, 'lua/purgeExpired.lua', 13, 1],
      [230, 'lua/include/feed.lua', 1, 44],
      [274, 'lua/purgeExpired.lua', 14, 29],
    ],
    source: `#!lua
-- purgeExpired: deletes a project's suppressions expired at now, of every list, oldest expiry first,
-- by its expiry index; one PUBLISH names them.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4] the expiry
-- index 'x' (ZSET: score expiresAt, member the hash in hex, then '.' and the stream for a stream's list)
-- ARGV[1] now, ARGV[2] the most to delete, ARGV[3] invalidation channel, ARGV[4] projectId, ARGV[5]
-- the feed's maxLength ('' for no feed: each deletion appends suppression.expired otherwise)
-- Returns how many it deleted. Stream lists' keys are named from the project's prefix (its slot).
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
local now = tonumber(ARGV[1])
local lists, deleted = {}, {}
feed = openFeed(K.p, ARGV[5])
actor = RULE_EXPIRY
for _, member in ipairs(redis.call('ZRANGE', KEYS[4], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))) do
  local h, stream = string.sub(member, 1, 64), string.sub(member, 66)
  local L = K
  if stream ~= '' then
    L = lists[stream]
    if not L then
      L = suppressionKeys(K.p .. 's.' .. stream, K.p .. 'sk.' .. stream, nil, stream)
      lists[stream] = L
    end
  end
  local v, expiresAt = storedSuppression(L, h), nil
  if v then expiresAt = select(5, unpackSuppression(v)) end
  if expired(expiresAt, now) then
    deleteSuppression(L, h)
    suppressionChange(L, 'suppression.expired', now, h, v)
    deleted[#deleted + 1] = h
  else
    -- The index out of step with the record (every write keeps it in step): it follows the record.
    indexExpiry(L, h, true, expiresAt)
  end
end
trimFeed()
publish(ARGV[3], ARGV[4], deleted)
return #deleted
`,
  },
  values,
);

export const removeAllowlistEntry = loadScript(
  {
    name: 'removeAllowlistEntry',
    readOnly: false,
    lines: [
      [1, 'lua/removeAllowlistEntry.lua', 1, 8],
      [9, 'lua/include/feed.lua', 1, 44],
      [53, 'lua/removeAllowlistEntry.lua', 9, 12],
    ],
    source: `#!lua
-- removeAllowlistEntry: removes the entry of a key from the project's allowlist.
-- KEYS[1] allowlist, KEYS[2] allowlistOrder (as addAllowlistEntry's)
-- ARGV[1] key, ARGV[2] now ('' for none), ARGV[3] the project's key prefix, ARGV[4] the feed's
-- maxLength ('' for no feed), ARGV[5] the actor ('' for none)
-- Returns the value it removed (createdAt ':' entry), or nil.
-- Flags: writes.
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return false end
local colon = string.find(existing, ':', 1, true)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], string.sub(existing, colon + 1) .. '\\0' .. string.sub(existing, 1, colon - 1) .. ',' .. ARGV[1])
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('allowlist.removed', tonumber(ARGV[2]) or 0, { 'ak', ARGV[1], 'v', existing })
  trimFeed()
end
return existing
`,
  },
  values,
);

export const removeSuppression = loadScript(
  {
    name: 'removeSuppression',
    readOnly: false,
    lines: [
      [1, 'lua/removeSuppression.lua', 1, 11],
      [12, 'lua/include/suppressionLayout.lua', 1, 7],
      [19, 'lua/include/before.lua', 1, 8],
      [27, 'lua/include/suppressionLayout.lua', 8, 80],
      [107, 'lua/removeSuppression.lua', 12, 1],
      [108, 'lua/include/storedSuppression.lua', 1, 3],
      [111, 'lua/include/suppressionValue.lua', 1, 23],
      [134, 'lua/include/storedSuppression.lua', 4, 1],
      [135, 'lua/include/order.lua', 1, 13],
      [148, 'lua/include/storedSuppression.lua', 5, 1],
      [149, 'lua/include/orderBytes.lua', 1, 17],
      [166, 'lua/include/storedSuppression.lua', 6, 1],
      [167, 'lua/include/hex.lua', 1, 14],
      [181, 'lua/include/storedSuppression.lua', 7, 44],
      [225, 'lua/removeSuppression.lua', 13, 1],
      [226, 'lua/include/publish.lua', 1, 4],
      [230, 'lua/removeSuppression.lua', 14, 1],
      [231, 'lua/include/feed.lua', 1, 44],
      [275, 'lua/removeSuppression.lua', 15, 11],
    ],
    source: `#!lua
-- removeSuppression: deletes one suppression from a list (expired or not); from the project-wide
-- list it also forgets the hash's soft-bounce history.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] hash (64 hex), ARGV[2] invalidation channel, ARGV[3] projectId, ARGV[4] the stream (''
-- for the project-wide list), ARGV[5] now ('' for none), ARGV[6] the feed's maxLength ('' for no feed),
-- ARGV[7] the actor ('' for none)
-- Returns the value it deleted, or nil.
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[4])
feed = openFeed(K.p, ARGV[6])
actor = ARGV[7] ~= '' and ARGV[7]
local existing = deleteSuppression(K, ARGV[1])
forgetHistory(K, ARGV[1])
if existing then
  suppressionChange(K, 'suppression.removed', tonumber(ARGV[5]) or 0, ARGV[1], existing)
  trimFeed()
  publish(ARGV[2], ARGV[3], { ARGV[1] })
end
return existing
`,
  },
  values,
);

export const removeSuppressions = loadScript(
  {
    name: 'removeSuppressions',
    readOnly: false,
    lines: [
      [1, 'lua/removeSuppressions.lua', 1, 11],
      [12, 'lua/include/suppressionLayout.lua', 1, 7],
      [19, 'lua/include/before.lua', 1, 8],
      [27, 'lua/include/suppressionLayout.lua', 8, 80],
      [107, 'lua/removeSuppressions.lua', 12, 1],
      [108, 'lua/include/storedSuppression.lua', 1, 3],
      [111, 'lua/include/suppressionValue.lua', 1, 23],
      [134, 'lua/include/storedSuppression.lua', 4, 1],
      [135, 'lua/include/order.lua', 1, 13],
      [148, 'lua/include/storedSuppression.lua', 5, 1],
      [149, 'lua/include/orderBytes.lua', 1, 17],
      [166, 'lua/include/storedSuppression.lua', 6, 1],
      [167, 'lua/include/hex.lua', 1, 14],
      [181, 'lua/include/storedSuppression.lua', 7, 44],
      [225, 'lua/removeSuppressions.lua', 13, 1],
      [226, 'lua/include/publish.lua', 1, 4],
      [230, 'lua/removeSuppressions.lua', 14, 1],
      [231, 'lua/include/feed.lua', 1, 44],
      [275, 'lua/removeSuppressions.lua', 15, 17],
    ],
    source: `#!lua
-- removeSuppressions: deletes each hash from a list (expired or not; from the project-wide list with
-- its soft-bounce history); one PUBLISH names those deleted.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder (of a stream's list:
-- its HASH and heads, no KEYS[3])
-- ARGV[1] invalidation channel, ARGV[2] projectId, ARGV[3] the stream ('' for the project-wide list),
-- ARGV[4] now ('' for none), ARGV[5] the feed's maxLength ('' for no feed), ARGV[6] the actor ('' for none),
-- ARGV[7..] the hashes (64 hex)
-- Returns per hash the value it deleted, or false.
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
--@include "publish"
-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3], ARGV[3])
local removed, deleted = {}, {}
local at = tonumber(ARGV[4]) or 0
feed = openFeed(K.p, ARGV[5])
actor = ARGV[6] ~= '' and ARGV[6]
for i = 7, #ARGV do
  local existing = deleteSuppression(K, ARGV[i])
  forgetHistory(K, ARGV[i])
  if existing then
    deleted[#deleted + 1] = ARGV[i]
    suppressionChange(K, 'suppression.removed', at, ARGV[i], existing)
  end
  removed[i - 6] = existing
end
trimFeed()
publish(ARGV[1], ARGV[2], deleted)
return removed
`,
  },
  values,
);

export const resumeOutbound = loadScript(
  {
    name: 'resumeOutbound',
    readOnly: false,
    lines: [
      [1, 'lua/resumeOutbound.lua', 1, 9],
      [10, 'lua/include/outboundState.lua', 1, 6],
      [16, 'lua/resumeOutbound.lua', 10, 1],
      [17, 'lua/include/feed.lua', 1, 44],
      [61, 'lua/resumeOutbound.lua', 11, 13],
    ],
    source: `#!lua
-- resumeOutbound: resumes a paused endpoint (pausedAt, failures, failingSince and lastError cleared,
-- nextAttemptAt 0, the cursor kept) and appends endpoint.resumed; a running endpoint stays as it is.
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] now, ARGV[2] the endpoint, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength
-- ('' for no feed), ARGV[5] the actor ('' for none)
-- Returns the state (outboundState), or nil for an endpoint never leased.
-- Flags: writes.
--@include "outboundState"
-- An outbound endpoint's state (layout.ts outboundKeyOf): a HASH of c cursor, f failures, fs
-- failingSince, n nextAttemptAt, p pausedAt, e lastError, s lastSuccessAt (absent for null), o the
-- lease's owner and u its end. The state as the scripts answer it: those seven, in that order.
local function outboundState(key)
  return redis.call('HMGET', key, 'c', 'f', 'fs', 'n', 'p', 'e', 's')
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local known = redis.call('HMGET', KEYS[1], 'c', 'p')
if not known[1] then return false end
if known[2] then
  redis.call('HDEL', KEYS[1], 'p', 'fs', 'e')
  redis.call('HSET', KEYS[1], 'f', 0, 'n', 0)
  feed = openFeed(ARGV[3], ARGV[4])
  actor = ARGV[5] ~= '' and ARGV[5]
  if feed then
    appendChange('endpoint.resumed', tonumber(ARGV[1]), { 'ep', ARGV[2] })
    trimFeed()
  end
end
return outboundState(KEYS[1])
`,
  },
  values,
);

export const resumeStream = loadScript(
  {
    name: 'resumeStream',
    readOnly: false,
    lines: [
      [1, 'lua/resumeStream.lua', 1, 8],
      [9, 'lua/include/feed.lua', 1, 44],
      [53, 'lua/resumeStream.lua', 9, 10],
    ],
    source: `#!lua
-- resumeStream: resumes a paused stream (stream.resumed, with the cause that paused it).
-- KEYS[1] the paused streams (HASH stream → pausedAt '|' cause)
-- ARGV[1] stream, ARGV[2] now, ARGV[3] the project's key prefix, ARGV[4] the feed's maxLength ('' for no feed),
-- ARGV[5] the actor ('' for none)
-- Returns the value it removed, or nil when the stream was not paused.
-- Flags: writes.
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
feed = openFeed(ARGV[3], ARGV[4])
actor = ARGV[5] ~= '' and ARGV[5]
if feed then
  appendChange('stream.resumed', tonumber(ARGV[2]), { 'st', ARGV[1], 'ca', string.match(existing, '|(.*)$') })
  trimFeed()
end
return existing
`,
  },
  values,
);

export const saveOutbound = loadScript(
  {
    name: 'saveOutbound',
    readOnly: false,
    lines: [
      [1, 'lua/saveOutbound.lua', 1, 11],
      [12, 'lua/include/feed.lua', 1, 44],
      [56, 'lua/saveOutbound.lua', 12, 19],
    ],
    source: `#!lua
-- saveOutbound: writes an endpoint's progress if owner still holds its lease (ended or not, as long
-- as no one took it since), and keeps the lease to until. pausedAt going from null to a time appends
-- endpoint.paused (at that time, with the last error).
-- KEYS[1] the endpoint's HASH (outboundState)
-- ARGV[1] owner, ARGV[2] until, ARGV[3] the endpoint, ARGV[4] the project's key prefix, ARGV[5] the
-- feed's maxLength ('' for no feed), ARGV[6] the fields that are null, space-separated, ARGV[7..]
-- the others, name and value
-- Returns 1 when written, 0 when owner no longer holds the lease.
-- Flags: writes.
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
local known = redis.call('HMGET', KEYS[1], 'o', 'p')
if known[1] ~= ARGV[1] then return 0 end
local nulls = {}
for name in string.gmatch(ARGV[6], '%S+') do nulls[#nulls + 1] = name end
if #nulls > 0 then redis.call('HDEL', KEYS[1], unpack(nulls)) end
local set, pausedAt, lastError = { 'u', ARGV[2] }, nil, nil
for i = 7, #ARGV, 2 do
  set[#set + 1], set[#set + 2] = ARGV[i], ARGV[i + 1]
  if ARGV[i] == 'p' then pausedAt = ARGV[i + 1] elseif ARGV[i] == 'e' then lastError = ARGV[i + 1] end
end
redis.call('HSET', KEYS[1], unpack(set))
feed = openFeed(ARGV[4], ARGV[5])
if feed and pausedAt and not known[2] then
  local fields = { 'ep', ARGV[3] }
  if lastError then fields[3], fields[4] = 'er', lastError end
  appendChange('endpoint.paused', tonumber(pausedAt), fields, RULE_OUTBOUND)
  trimFeed()
end
return 1
`,
  },
  values,
);

export const syncApiKeys = loadScript(
  {
    name: 'syncApiKeys',
    readOnly: false,
    lines: [
      [1, 'lua/syncApiKeys.lua', 1, 10],
      [11, 'lua/include/before.lua', 1, 8],
      [19, 'lua/syncApiKeys.lua', 11, 1],
      [20, 'lua/include/feed.lua', 1, 44],
      [64, 'lua/syncApiKeys.lua', 12, 34],
    ],
    source: `#!lua
-- syncApiKeys: makes the project's stored keys equal to the given ones, and appends per difference,
-- in name order, key.added, key.updated or key.removed (core Store.syncApiKeys).
-- KEYS[1] the project's keys (layout.ts apiKeysKeyOf: HASH name → version '|' scopes)
-- ARGV[1] the project's key prefix, ARGV[2] the feed's maxLength ('' for no feed), ARGV[3] the
-- actor, ARGV[4] now, ARGV[5..] per key its name and value, each name once
-- Returns per change its kind, seq (0 without a feed), name, scopes and the scopes before ('' but
-- for key.updated).
-- Flags: writes.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
--@include "feed"
-- The change feed (layout.ts feedKeysOf): per project a HASH 'feed' (seq: the last change's number,
-- trimmed: the highest deleted by retention) and a STREAM 'changes' (ID '<seq>-0', fields k kind and a
-- at first, then the kind's own). A script opens it from an ARGV, the feed's maxLength or '' when the
-- store keeps no feed: then feed stays false and nothing is appended.
local feed = false
-- Who makes the script's changes (core store/actor.ts), false for none: a script sets it from its
-- ARGV; each change stores it as field 'by', and only when set (docs/storage-internals.md).
local actor = false
-- The actors of the rules a script applies itself (core ruleActors).
local RULE_SOFT_BOUNCES, RULE_EXPIRY, RULE_ALERTS, RULE_OUTBOUND = 'rule:soft_bounces', 'rule:expiry', 'rule:alerts', 'rule:outbound'
local function openFeed(prefix, maxLength)
  if not maxLength or maxLength == '' then return false end
  return { h = prefix .. 'feed', s = prefix .. 'changes', max = tonumber(maxLength) }
end
-- Appends one change: kind, at (nil: 0), the kind's fields (name, value pairs) and its actor, by
-- (nil: the script's actor).
local function appendChange(kind, at, fields, by)
  local seq = redis.call('HINCRBY', feed.h, 'seq', 1)
  by = by or actor
  if by then
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), 'by', by, unpack(fields))
  else
    redis.call('XADD', feed.s, string.format('%d-0', seq), 'k', kind, 'a', string.format('%d', at or 0), unpack(fields))
  end
  feed.last = seq
end
-- Keeps the last max changes, exactly (XADD's MAXLEN ~ is not), once at the end of a script that appended.
local function trimFeed()
  if not feed or not feed.last then return end
  local trimmed = tonumber(redis.call('HGET', feed.h, 'trimmed') or '0')
  if feed.last - trimmed <= feed.max then return end
  trimmed = feed.last - feed.max
  redis.call('XTRIM', feed.s, 'MINID', string.format('%d-0', trimmed + 1))
  redis.call('HSET', feed.h, 'trimmed', string.format('%d', trimmed))
end
-- A suppression change of list K (its stream K.t, nil for the project-wide list): hash h, the value
-- v as stored (packSuppression) and, for upgraded and updated, the value before; by as appendChange's.
local function suppressionChange(K, kind, at, h, v, previous, by)
  if not feed then return end
  local fields = { 'h', h, 'v', v }
  if K.t then fields[#fields + 1], fields[#fields + 2] = 't', K.t end
  if previous then fields[#fields + 1], fields[#fields + 2] = 'w', previous end
  appendChange(kind, at, fields, by)
end
feed = openFeed(ARGV[1], ARGV[2])
actor = ARGV[3] ~= '' and ARGV[3]
local now = tonumber(ARGV[4])
local stored, given, names = redis.call('HGETALL', KEYS[1]), {}, {}
local old = {}
for i = 1, #stored, 2 do
  old[stored[i]] = stored[i + 1]
  names[#names + 1] = stored[i]
end
for i = 5, #ARGV, 2 do
  given[ARGV[i]] = ARGV[i + 1]
  if not old[ARGV[i]] then names[#names + 1] = ARGV[i] end
end
table.sort(names, before)
local function scopesOf(v) return string.match(v, '|(.*)$') end
local reply = {}
for _, name in ipairs(names) do
  local o, n = old[name], given[name]
  local kind
  if not o then kind = 'key.added' elseif not n then kind = 'key.removed' elseif o ~= n then kind = 'key.updated' end
  if kind then
    if n then redis.call('HSET', KEYS[1], name, n) else redis.call('HDEL', KEYS[1], name) end
    local fields = { 'kn', name, 'ks', scopesOf(n or o) }
    if kind == 'key.updated' then fields[5], fields[6] = 'kw', scopesOf(o) end
    local seq = 0
    if feed then
      appendChange(kind, now, fields)
      seq = feed.last
    end
    for _, v in ipairs({ kind, seq, name, scopesOf(n or o), kind == 'key.updated' and scopesOf(o) or '' }) do reply[#reply + 1] = v end
  end
end
trimFeed()
return reply
`,
  },
  values,
);

export const upgradeSuppressions = loadScript(
  {
    name: 'upgradeSuppressions',
    readOnly: false,
    lines: [
      [1, 'lua/upgradeSuppressions.lua', 1, 8],
      [9, 'lua/include/suppressionLayout.lua', 1, 7],
      [16, 'lua/include/before.lua', 1, 8],
      [24, 'lua/include/suppressionLayout.lua', 8, 80],
      [104, 'lua/upgradeSuppressions.lua', 9, 1],
      [105, 'lua/include/storedSuppression.lua', 1, 3],
      [108, 'lua/include/suppressionValue.lua', 1, 23],
      [131, 'lua/include/storedSuppression.lua', 4, 1],
      [132, 'lua/include/order.lua', 1, 13],
      [145, 'lua/include/storedSuppression.lua', 5, 1],
      [146, 'lua/include/orderBytes.lua', 1, 17],
      [163, 'lua/include/storedSuppression.lua', 6, 1],
      [164, 'lua/include/hex.lua', 1, 14],
      [178, 'lua/include/storedSuppression.lua', 7, 44],
      [222, 'lua/upgradeSuppressions.lua', 10, 3],
    ],
    source: `#!lua
-- upgradeSuppressions: moves suppressions of the old layout (in its order) to the new one. Each call
-- is whole, so the upgrade can stop between any two and resume: the old order is its own cursor.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder
-- ARGV[1] the most suppressions to upgrade in this call
-- Returns how many remain: 0 once the old layout is gone.
-- Flags: writes.
--@include "suppressionLayout"
-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
-- Byte order, whatever the server's locale (Lua's < on strings uses strcoll).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local FIELD_BYTES, ORDER_BLOCK_MAX = {{SUPPRESSION_FIELD_BYTES}}, {{SUPPRESSION_BLOCK_MAX}}
-- The project-wide list (stream nil or '') or a stream's, K.b the start of its block names. K.legacy:
-- whether suppressions of the old layout remain (none can appear during a script). K.p is the
-- project's key prefix, K.x its expiry index (a ZSET: score expiresAt, member the hash in hex, then
-- '.' and the stream for a stream's list) and K.m that member's suffix for this list; K.t the stream.
local function suppressionKeys(s, sk, so, stream)
  if stream and stream ~= '' then
    local p = string.sub(sk, 1, -(#stream + 4))
    return { s = s, sk = sk, legacy = false, b = p .. 'sb.' .. stream .. ':', p = p, x = p .. 'x', m = '.' .. stream, t = stream }
  end
  local p = string.sub(sk, 1, -3)
  return { s = s, sk = sk, so = so, legacy = redis.call('EXISTS', so) == 1, b = p .. 'sb:', p = p, x = p .. 'x', m = '' }
end
-- Keeps the expiry index in step with a record of hash h (64 hex) whose expiresAt went from old to
-- new (nil: none): only records that expire are in it, so a project without them has no index.
local function indexExpiry(K, h, old, new)
  if new then
    if new ~= old then redis.call('ZADD', K.x, string.format('%d', new), h .. K.m) end
  elseif old then
    redis.call('ZREM', K.x, h .. K.m)
  end
end
-- The list a record s joins: K (the project-wide one) without s.t, else stream s.t's, whose HASH and
-- heads are KEYS[s.k] and KEYS[s.k + 1]; each list's keys made once per script.
local streamLists = {}
local function listOf(K, s)
  if not s.t then return K end
  local L = streamLists[s.t]
  if not L then
    L = suppressionKeys(KEYS[s.k], KEYS[s.k + 1], nil, s.t)
    streamLists[s.t] = L
  end
  return L
end
-- layout.ts suppressionField (of the binary hash) and suppressionMember = orderBytes(createdAt) .. hash.
local function fieldOf(hash) return string.sub(hash, 1, FIELD_BYTES) end
local function fieldOfMember(member) return string.sub(member, 9, 8 + FIELD_BYTES) end
local function orderBlockKey(K, head) return K.b .. head end
-- The head of the block that holds a member (or would), nil when there is no block yet.
local function orderHead(K, member)
  return redis.call('ZRANGE', K.sk, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- Adds a member to its block. A full block splits first: its later half moves to a new block; all of
-- it when the member comes before every one (suppressions arrive newest first: the old block then
-- fills again from the front), none when it comes after every one.
local function orderAdd(K, member)
  local head = orderHead(K, member)
  if not head then
    head = ''
    redis.call('ZADD', K.sk, 0, head)
  end
  local block = orderBlockKey(K, head)
  if redis.call('ZCARD', block) >= ORDER_BLOCK_MAX then
    local members = redis.call('ZRANGE', block, 0, -1)
    local from = math.floor(#members / 2) + 1
    if before(member, members[1]) then from = 1 elseif before(members[#members], member) then from = #members + 1 end
    local newHead = members[from] or member
    if from <= #members then
      local moved = {}
      for i = from, #members do moved[#moved + 1], moved[#moved + 2] = 0, members[i] end
      redis.call('ZADD', orderBlockKey(K, newHead), unpack(moved))
      redis.call('ZREMRANGEBYLEX', block, '[' .. newHead, '+')
    end
    redis.call('ZADD', K.sk, 0, newHead)
    if not before(member, newHead) then block = orderBlockKey(K, newHead) end
  end
  redis.call('ZADD', block, 0, member)
end
-- Removes a member from its block. An emptied block goes (its range falls to the block before); the
-- first block's head, '', stays while other blocks do.
local function orderRemove(K, member)
  local head = orderHead(K, member)
  if not head then return end
  local block = orderBlockKey(K, head)
  redis.call('ZREM', block, member)
  if redis.call('EXISTS', block) == 1 then return end
  if head ~= '' then redis.call('ZREM', K.sk, head) end
  -- The last suppression gone: the heads go too.
  if redis.call('ZCARD', K.sk) == 1 and redis.call('EXISTS', orderBlockKey(K, '')) == 0 then redis.call('DEL', K.sk) end
end
--@include "storedSuppression"
-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \\1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\\0' .. provenance end
  if expiresAt then v = v .. '\\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
--@include "order"
-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
--@include "orderBytes"
-- layout.ts orderBytes: the order's two parts in binary, 8 bytes (the order of suppression members).
--@include "order"
local function orderBytes(t)
  local v, sign, bytes = MAX - t, 0, {}
  if t < 0 then v, sign = -t, 1 end
  for i = 7, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(sign, unpack(bytes))
end
local function timeOfBytes(b)
  local v = 0
  for i = 2, 8 do v = v * 256 + string.byte(b, i) end
  if string.byte(b, 1) == 0 then return MAX - v end
  return -v
end
--@include "hex"
-- A hash (64 hex) in binary, 8 digits at a time (several times faster than a byte at a time).
local function unhex(h)
  local bytes, n = {}, 0
  for i = 1, #h, 8 do
    local v = tonumber(string.sub(h, i, i + 7), 16)
    bytes[n + 1], bytes[n + 2] = math.floor(v / 16777216), math.floor(v / 65536) % 256
    bytes[n + 3], bytes[n + 4] = math.floor(v / 256) % 256, v % 256
    n = n + 4
  end
  return string.char(unpack(bytes))
end
local function hex(b)
  return (string.gsub(b, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
local K = suppressionKeys(KEYS[1], KEYS[2], KEYS[3])
for _, member in ipairs(redis.call('ZRANGE', K.so, 0, tonumber(ARGV[1]) - 1)) do upgradeSuppression(K, member) end
return redis.call('ZCARD', K.so)
`,
  },
  values,
);
