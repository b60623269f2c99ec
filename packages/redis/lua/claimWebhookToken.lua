#!lua
-- claimWebhookToken: records a webhook's replay token with the digest of its body.
-- KEYS[1] the token's key (`wt:<token>`)
-- ARGV[1] the body digest, ARGV[2] expiresAt (epoch ms)
-- Returns 'first' (recorded now), 'same' (recorded with this digest) or 'conflict' (recorded with
-- another one).
-- Flags: writes.
--
-- The record expires at expiresAt by Redis's own clock (PXAT, absolute, so no clock is read here). A
-- time already past is still a valid answer: SET with a past PXAT deletes the key at once (the token
-- is forgotten as soon as it is recorded, which the contract allows), and PXAT must be positive, so
-- for times at or before the epoch the SET is skipped altogether.
local known = redis.call('GET', KEYS[1])
if known then
  if known == ARGV[1] then return 'same' end
  return 'conflict'
end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2]) end
return 'first'
