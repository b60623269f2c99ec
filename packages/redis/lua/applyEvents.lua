#!lua
-- applyEvents: applies a batch of stored events, each whole: the dedup key, the message merge
-- (mergeMessage), the tracking-ID rows (trackingIdDeltas) and the suppression upsert.
-- KEYS[1] suppressions, KEYS[2] suppressionHeads, KEYS[3] legacySuppressionOrder, KEYS[4] messageOrder,
-- KEYS[5] trackingIds, KEYS[6] trackingIdOrder, KEYS[7] searchBlockHeads, KEYS[8] searchBuildCursor,
-- KEYS[9..] the keys the events name (dedup keys, message hashes, tracking-ID message orders, the
-- HASH and heads of a stream's suppression list), referred to by index
-- ARGV[1] the events as JSON, ARGV[2] project key prefix, ARGV[3] retention in ms ('' for none),
-- ARGV[4] invalidation channel, ARGV[5] projectId, ARGV[6] now ('' for none: nothing is expired, no
-- history forgotten), ARGV[7] the soft-bounce rule as JSON ('' for none: events' `u` are ignored),
-- ARGV[8] the feed's maxLength ('' when the store keeps no feed), ARGV[9] the alert rule as JSON (''
-- for none: no window is read or written)
-- Returns one character per event: 'd' duplicate, else the outcome of its suppression ('s' created,
-- the rank it raised from, 'a'; eventOutcomeOfCode).
--
-- An event's `a` is its actor (StoredEvent.actor), absent for none.
--
-- Per applied event, after its message: its own suppression `s` (not written when it comes from a
-- webhook and the recipient is allowlisted), then the soft-bounce rule's input `u`, then its
-- message's status change (the feed), then the alert windows.
-- Flags: writes.
--
-- Keys not in KEYS, all under the project's prefix, so in its slot: the message order of a tracking
-- ID a message leaves or keeps (from the stored message), the messages read to recompute a row's
-- lastEventAt, the allowlist 'al', the expiry index 'x', the soft-bounce histories 'sh:<hash>', the
-- feed 'feed' and 'changes', the alert windows 'aw' and 'aw:<trackingId>' and the paused streams.
--@include "suppressionLayout"
--@include "mergeSuppression"
--@include "softBounceRule"
--@include "publish"
--@include "order"
--@include "before"
--@include "trackingIdMember"
--@include "searchBlocks"
--@include "feed"
--@include "alertWindows"
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
    keys[#keys + 1] = '\254' .. searchKeyOf(member)
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
  redis.call('APPEND', block, '\254' .. key)
  redis.call('SETRANGE', block, 0, string.format('%03d', count + 1))
end
-- Before a member leaves trackingIdOrder: its search key leaves its block, and an emptied block goes
-- (its range falls to the block before; the first block, head '', stays).
local function removeSearchKey(member, key)
  if not inBlocks(member, false) then return end
  local head = blockHead(TK, member)
  local block = blockKey(TK, head)
  local v = redis.call('GET', block)
  local at = string.find(v .. '\254', '\254' .. key .. '\254', 4, true)
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
