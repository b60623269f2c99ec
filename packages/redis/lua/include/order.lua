-- The order of messages (layout.ts orderOf): a 17-character member prefix, newest first in byte order.
-- Also the order of suppressions in the layout before order blocks (legacySuppressionOrder).
local MAX = {{ORDER_MAX}}
local function order(t)
  if t >= 0 then return string.format('0%016d', MAX - t) end
  return string.format('1%016d', -t)
end
-- The time of an order member (cheaper than formatting one to compare).
local function timeOf(member)
  local v = tonumber(string.sub(member, 2, 17))
  if string.byte(member, 1) == 48 then return MAX - v end
  return -v
end
