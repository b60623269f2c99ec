-- Suppressions (layout.ts): K.s the HASH, field the binary first FIELD_BYTES of the hash; K.sk the
-- heads of the order blocks ('' and block members), each block 'sb:<head>' a ZSET (scores 0) of the
-- members from its head to the next head, member = orderBytes(createdAt) .. the binary hash; K.so the
-- order that releases before the blocks wrote, only while some of their suppressions are not upgraded.
-- A stream's list (layout.ts streamSuppressionKeys) is laid out the same: K.s 's.<stream>', K.sk
-- 'sk.<stream>', blocks 'sb.<stream>:<head>', and no old layout.
--@include "before"
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
