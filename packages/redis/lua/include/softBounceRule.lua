-- The soft-bounce rule (docs/decisions.md, "The soft-bounce rule"), inside applyEvents' step per event.
-- History per address: the STRING 'sh:<hash>' (64 hex) under the project's prefix: the latest delivery
-- counted (digits, or nothing), then per kept bounce, oldest first by (at, eventId), '\n' at ',' eventId
-- ',' the message's length ':' the message, then the bounce as packed provenance lists it (core
-- packRuleBounce: JSON, so no '\n'). A message may hold any byte: its length says where it ends.
--@include "mergeSuppression"
--@include "suppressionValue"
--@include "before"
local DAY_MS = {{DAY_MS}}
local function loadHistory(key)
  local v = redis.call('GET', key)
  local history = { bounces = {} }
  if not v then return history end
  local nl = string.find(v, '\n', 1, true)
  history.delivery = tonumber(string.sub(v, 1, (nl or 0) - 1))
  while nl do
    local at, id, length, from = string.match(v, '^(%-?%d+),(%x+),(%d+):()', nl + 1)
    local to = from + tonumber(length)
    nl = string.find(v, '\n', to, true)
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
    parts[#parts + 1] = string.format('\n%d,%s,%d:', b.at, b.id, #b.message) .. b.message .. b.packed
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
