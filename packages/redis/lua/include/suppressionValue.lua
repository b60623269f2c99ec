-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one, then \1 and expiresAt when there is one (layout.ts packSuppression; an email
-- holds no control character and packed provenance is JSON, which escapes them).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local expiresAt, body = nil, v
  local x = string.find(v, '\1', colon + 1, true)
  if x then expiresAt, body = tonumber(string.sub(v, x + 1)), string.sub(v, 1, x - 1) end
  local nul = string.find(body, '\0', colon + 1, true)
  local email, provenance = string.sub(body, colon + 1), nil
  if nul then email, provenance = string.sub(body, colon + 1, nul - 1), string.sub(body, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance, expiresAt
end
local function packSuppression(rank, createdAt, email, provenance, expiresAt)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\0' .. provenance end
  if expiresAt then v = v .. '\1' .. string.format('%d', expiresAt) end
  return v
end
-- Whether a record that stops suppressing at expiresAt (nil: never) is expired at now (nil: nothing is).
local function expired(expiresAt, now)
  return expiresAt ~= nil and now ~= nil and expiresAt <= now
end
