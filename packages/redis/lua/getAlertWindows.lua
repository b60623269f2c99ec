#!lua flags=no-writes
-- getAlertWindows: the counters of some alert windows (lua/include/alertWindows.lua).
-- KEYS the windows' HASHes
-- Returns per window its n, b, c, bf, cf (n nil for a window never moved).
local windows = {}
for i, key in ipairs(KEYS) do windows[i] = redis.call('HMGET', key, 'n', 'b', 'c', 'bf', 'cf') end
return windows
