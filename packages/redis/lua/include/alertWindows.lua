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
-- A window's counters (n, b, c, i, and bf, cf true while firing), key its HASH.
local function loadWindow(key)
  local v = redis.call('HMGET', key, 'n', 'b', 'c', 'i', 'bf', 'cf')
  return { key = key, n = tonumber(v[1]) or 0, b = tonumber(v[2]) or 0, c = tonumber(v[3]) or 0, i = tonumber(v[4]) or 0, bf = v[5] and true, cf = v[6] and true }
end
local function saveWindow(W, flags)
  W.b, W.c = W.b + flags % 2, W.c + math.floor(flags / 2)
  redis.call('HSET', W.key, 'n', W.n, 'b', W.b, 'c', W.c, 'i', W.i)
end
-- A message in the window at key gained flags (those of its facts f): each counts once. Returns the
-- window when a count moved, else nil (also when the message is not in it).
local function markWindow(key, messageKey, f)
  local number = redis.call('HGET', key, 'k' .. messageKey)
  if not number then return nil end
  local slot = redis.call('HGET', key, 's' .. number)
  local known = tonumber(string.sub(slot, 1, 1))
  local flags = bit.band(flagsOf(f), bit.bnot(known))
  if flags == 0 then return nil end
  redis.call('HSET', key, 's' .. number, (known + flags) .. string.sub(slot, 2))
  local W = loadWindow(key)
  saveWindow(W, flags)
  return W
end
-- A message the store had not seen (facts f) enters the window at key, pushing the oldest out past
-- rule.w (the rule's window may have shrunk: as many as it takes). A key held already (retention
-- forgot its message, an event made it anew) is marked instead. Returns the window: it moved.
local function enterWindow(key, rule, messageKey, f)
  local W = markWindow(key, messageKey, f)
  if W then return W end
  W = loadWindow(key)
  if redis.call('HEXISTS', key, 'k' .. messageKey) == 1 then return W end
  local flags = flagsOf(f)
  W.i, W.n = W.i + 1, W.n + 1
  redis.call('HSET', key, 's' .. W.i, flags .. messageKey, 'k' .. messageKey, W.i)
  while W.n > rule.w do
    local oldest = W.i - W.n + 1
    local gone = redis.call('HGET', key, 's' .. oldest)
    if gone then
      local goneFlags = tonumber(string.sub(gone, 1, 1))
      W.b, W.c = W.b - goneFlags % 2, W.c - math.floor(goneFlags / 2)
      redis.call('HDEL', key, 's' .. oldest, 'k' .. string.sub(gone, 2))
    end
    W.n = W.n - 1
  end
  saveWindow(W, flags)
  return W
end
-- Compares a moved window with the rule (integers only, as every store does): a crossing flips its
-- state and appends alert.bounce_rate, then alert.complaint_rate. Returns the kind of the first
-- crossing up, or nil.
local function crossWindow(W, rule, trackingId, at)
  local up
  for _, alert in ipairs({ { 'b', 'bf', 'alert.bounce_rate', rule.b }, { 'c', 'cf', 'alert.complaint_rate', rule.c } }) do
    local count, firing, ppm = W[alert[1]], W[alert[2]], alert[4]
    local flip, threshold
    if not firing and W.n >= rule.m and count * 1000000 >= ppm[1] * W.n then
      flip, threshold = true, ppm[1]
    elseif firing and count * 1000000 < ppm[2] * W.n then
      flip, threshold = false, ppm[2]
    end
    if flip ~= nil then
      if flip then redis.call('HSET', W.key, alert[2], 1) else redis.call('HDEL', W.key, alert[2]) end
      if flip and not up then up = alert[3] end
      if feed then
        local fields = { 'fi', flip and '1' or '0', 'n', W.n, 'c', count, 'th', threshold }
        if trackingId then fields[#fields + 1], fields[#fields + 2] = 'tr', trackingId end
        appendChange(alert[3], at, fields)
      end
    end
  end
  return up
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
  local moved = {}
  local function add(W, trackingId)
    if W then moved[#moved + 1] = { W, trackingId } end
  end
  if merged.old == nil then
    add(enterWindow(prefix .. 'aw', rule, e.key, merged.f), nil)
    if rule.t and merged.t then add(enterWindow(prefix .. 'aw:' .. merged.t, rule, e.key, merged.f), merged.t) end
  elseif bit.band(flagsOf(merged.f), bit.bnot(flagsOf(merged.old))) ~= 0 then
    add(markWindow(prefix .. 'aw', e.key, merged.f), nil)
    if rule.t then
      if merged.oldT then add(markWindow(prefix .. 'aw:' .. merged.oldT, e.key, merged.f), merged.oldT) end
      if merged.t and merged.t ~= merged.oldT then add(markWindow(prefix .. 'aw:' .. merged.t, e.key, merged.f), merged.t) end
    end
  end
  local up
  for _, window in ipairs(moved) do
    local kind = crossWindow(window[1], rule, window[2], at)
    if window[2] == nil then up = kind end
  end
  if up then pauseStreams(prefix, rule.p, up, at) end
end
