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
