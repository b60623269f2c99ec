-- The join of a suppression into the stored ones (core's suppression merge), as applyEvents and
-- mergeSuppressions write it.
--@include "storedSuppression"
--@include "suppressionLayout"
--@include "suppressionValue"
--@include "orderBytes"
--@include "before"
--@include "feed"
-- What the provenance join compares after the reason: the cause's time, event ID and source letter
-- (a, i, u, w: the sources' byte order; core provenanceWins); a record without provenance compares as
-- the latest, with no ID and the last source.
local function causeKey(provenance)
  if not provenance then return math.huge, '', '~' end
  local source, at, id = string.match(provenance, '^(%a)(%-?%d+),(%x*),')
  return tonumber(at), id, source
end
-- Joins suppression s ({ h hash, r rank, c createdAt, e email, p packed provenance, x expiresAt })
-- into the suppressions of K: reason only upgraded, createdAt the earliest, the email the first one
-- stored, the provenance the stronger reason's, then the earlier cause's, then the smaller event ID's,
-- then the smaller source's (core provenanceWins), and expiresAt with the provenance. With now (nil:
-- nothing expires), s already expired is not written, and a stored record expired at now counts as
-- absent: s replaces it whole (docs/decisions.md, "Suppressions that expire"). A hash it writes is
-- added to changed (a set with its list in changed.list). With the feed open, each change is
-- appended (an expired record replaced, then added, upgraded or updated), at now (nil: the record's
-- createdAt). Returns the outcome: 's' when it created the suppression, the rank it had when s
-- raised it, else 'a'.
local function mergeSuppression(K, s, changed, now)
  if expired(s.x, now) then return 'a' end
  local v, field, hash = storedSuppression(K, s.h)
  local outcome = 'a'
  local rank, createdAt, email, provenance, expiresAt
  if v then rank, createdAt, email, provenance, expiresAt = unpackSuppression(v) end
  if v and expired(expiresAt, now) then
    orderRemove(K, orderBytes(createdAt) .. hash)
    suppressionChange(K, 'suppression.expired', now, s.h, v, nil, RULE_EXPIRY)
    v = false
  end
  if not v then
    local stored = packSuppression(s.r, s.c, s.e, s.p, s.x)
    redis.call('HSET', K.s, field, stored)
    orderAdd(K, orderBytes(s.c) .. hash)
    indexExpiry(K, s.h, expiresAt, s.x)
    suppressionChange(K, 'suppression.added', now or s.c, s.h, stored)
    outcome = 's'
  else
    local newRank, newCreatedAt, newProvenance, newExpiresAt = math.max(rank, s.r), math.min(createdAt, s.c), provenance, expiresAt
    if s.r > rank then
      newProvenance, newExpiresAt = s.p, s.x
    elseif s.r == rank then
      local at, id, source = causeKey(s.p)
      local knownAt, knownId, knownSource = causeKey(provenance)
      if at < knownAt or (at == knownAt and (before(id, knownId) or (id == knownId and before(source, knownSource)))) then
        newProvenance, newExpiresAt = s.p, s.x
      end
    end
    if newRank == rank and newCreatedAt == createdAt and newProvenance == provenance and newExpiresAt == expiresAt then return outcome end
    if newRank > rank then outcome = tostring(rank) end
    local stored = packSuppression(newRank, newCreatedAt, email, newProvenance, newExpiresAt)
    redis.call('HSET', K.s, field, stored)
    if stored ~= v then
      suppressionChange(K, newRank > rank and 'suppression.upgraded' or 'suppression.updated', now or s.c, s.h, stored, v)
    end
    if newCreatedAt ~= createdAt then
      orderRemove(K, orderBytes(createdAt) .. hash)
      orderAdd(K, orderBytes(newCreatedAt) .. hash)
    end
    indexExpiry(K, s.h, expiresAt, newExpiresAt)
  end
  if not changed[s.h] then
    changed[s.h] = true
    changed.list[#changed.list + 1] = s.h
  end
  return outcome
end
