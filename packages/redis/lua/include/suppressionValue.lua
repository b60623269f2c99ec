-- The suppression HASH value: rank digit, createdAt, ':', email, then NUL and the packed provenance
-- when there is one (layout.ts packSuppression; an email holds no control character).
local function unpackSuppression(v)
  local colon = string.find(v, ':', 2, true)
  local nul = string.find(v, '\0', colon + 1, true)
  local email, provenance = string.sub(v, colon + 1), nil
  if nul then email, provenance = string.sub(v, colon + 1, nul - 1), string.sub(v, nul + 1) end
  return tonumber(string.sub(v, 1, 1)), tonumber(string.sub(v, 2, colon - 1)), email, provenance
end
local function packSuppression(rank, createdAt, email, provenance)
  local v = string.format('%d%d:', rank, createdAt) .. email
  if provenance then v = v .. '\0' .. provenance end
  return v
end
