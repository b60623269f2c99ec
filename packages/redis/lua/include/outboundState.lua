-- An outbound endpoint's state (layout.ts outboundKeyOf): a HASH of c cursor, f failures, fs
-- failingSince, n nextAttemptAt, p pausedAt, e lastError, s lastSuccessAt (absent for null), o the
-- lease's owner and u its end. The state as the scripts answer it: those seven, in that order.
local function outboundState(key)
  return redis.call('HMGET', key, 'c', 'f', 'fs', 'n', 'p', 'e', 's')
end
