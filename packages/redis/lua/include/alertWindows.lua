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
