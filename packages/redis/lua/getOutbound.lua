#!lua flags=no-writes
-- getOutbound: the states of some outbound endpoints.
-- KEYS the endpoints' HASHes
-- Returns per endpoint its state (outboundState; the cursor nil for one never leased).
--@include "outboundState"
local states = {}
for i, key in ipairs(KEYS) do states[i] = outboundState(key) end
return states
