#!lua flags=no-writes
-- getStreamSuppressions: the checks of some hashes in a stream, once the project holds no old layout:
-- each hash's value in the project-wide list, else in the stream's (the project-wide one wins), in one
-- call: cheaper than two HMGETs in a pipeline, whose second command costs the client as much again.
-- KEYS[1] suppressions, KEYS[2] the stream's suppressions (layout.ts streamSuppressionKeys)
-- ARGV[1..] the HASH fields (binary, layout.ts suppressionFields)
-- Returns per hash its project-wide value (false for none), then per hash its value in the stream's
-- list when the project-wide list has none or one that expires (\1 in its value: the caller reads the
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
    reply[n + from + i - 1] = (not p or string.find(p, '\1', 1, true)) and inStream[i] or false
  end
end
return reply
