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
