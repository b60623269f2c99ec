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
