-- Reading and deleting one suppression by hash, upgrading it first when the old layout holds it.
--@include "suppressionLayout"
--@include "suppressionValue"
--@include "order"
--@include "orderBytes"
--@include "hex"
-- Moves one suppression that a release before the blocks wrote (its member of K.so) to the blocks:
-- the value under the binary field, the member into its block. Returns the value, or false.
local function upgradeSuppression(K, legacyMember)
  local h = string.sub(legacyMember, 18)
  local v = redis.call('HGET', K.s, h)
  if v then
    local hash = unhex(h)
    redis.call('HDEL', K.s, h)
    redis.call('HSET', K.s, fieldOf(hash), v)
    orderAdd(K, orderBytes(timeOf(legacyMember)) .. hash)
  end
  redis.call('ZREM', K.so, legacyMember)
  return v
end
-- The stored value of hash h (64 hex), or false, then its HASH field and the hash in binary. A
-- suppression still in the old layout (its field the 64-hex hash) is upgraded first, so writes see
-- one layout.
local function storedSuppression(K, h)
  local hash = unhex(h)
  local field = fieldOf(hash)
  local v = redis.call('HGET', K.s, field)
  if v or not K.legacy then return v, field, hash end
  local legacy = redis.call('HGET', K.s, h)
  if legacy then
    local _, createdAt = unpackSuppression(legacy)
    return upgradeSuppression(K, order(createdAt) .. h), field, hash
  end
  return false, field, hash
end
-- Deletes the suppression of hash h. Returns the value it deleted, or false.
local function deleteSuppression(K, h)
  local v, field, hash = storedSuppression(K, h)
  if not v then return false end
  local _, createdAt, _, _, expiresAt = unpackSuppression(v)
  redis.call('HDEL', K.s, field)
  orderRemove(K, orderBytes(createdAt) .. hash)
  indexExpiry(K, h, expiresAt, nil)
  return v
end
-- Removal from the project-wide list also forgets the hash's soft-bounce history (lua/include/softBounceRule.lua),
-- so the rule counts afresh.
local function forgetHistory(K, h)
  if K.m == '' then redis.call('DEL', K.p .. 'sh:' .. h) end
end
