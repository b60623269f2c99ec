#!lua flags=no-writes
-- listChanges: a page of a project's change feed (lua/include/feed.lua).
-- KEYS[1] the feed's counter (HASH seq, trimmed), KEYS[2] its STREAM
-- ARGV[1] after (a seq), ARGV[2] limit, ARGV[3] the kinds wanted as ',kind,kind,' ('' for every
-- kind), ARGV[4] how many entries a filtered page looks at, at most, ARGV[5] the hash wanted ('' for
-- any), ARGV[6..] the actors wanted (none: any; core actorMatches: equal, or a prefix and ':')
-- Returns { last, trimmed } when after < trimmed (changes after it were deleted), else { last,
-- trimmed, next, entries } with entries as XRANGE answers them.
local counter = redis.call('HMGET', KEYS[1], 'seq', 'trimmed')
local last, trimmed = tonumber(counter[1]) or 0, tonumber(counter[2]) or 0
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if after < trimmed then return { last, trimmed } end
if limit < 1 then return { last, trimmed, after, {} } end
local function seqOf(entry) return tonumber(string.match(entry[1], '^%d+')) end
local kinds, hash, actors = ARGV[3], ARGV[5], #ARGV - 5
if kinds == '' and hash == '' and actors == 0 then
  local entries = redis.call('XRANGE', KEYS[2], '(' .. ARGV[1] .. '-0', '+', 'COUNT', limit)
  return { last, trimmed, #entries > 0 and seqOf(entries[#entries]) or after, entries }
end
-- Whether an entry (its fields: k kind, a at, then by its actor when it has one) passes the filters:
-- its kind, its hash (field h of suppression changes and erasures, ak of allowlist changes) and its actor.
local function wanted(fields)
  if kinds ~= '' and not string.find(kinds, ',' .. fields[2] .. ',', 1, true) then return false end
  if hash == '' and actors == 0 then return true end
  local by, h
  for i = 5, #fields, 2 do
    local name = fields[i]
    if name == 'by' then by = fields[i + 1] elseif name == 'h' or name == 'ak' then h = fields[i + 1] end
  end
  if hash ~= '' and h ~= hash then return false end
  if actors == 0 then return true end
  if not by then return false end
  for i = 6, #ARGV do
    local a = ARGV[i]
    if by == a or (#by > #a and string.sub(by, 1, #a + 1) == a .. ':') then return true end
  end
  return false
end
-- Filtered: looks at up to ARGV[4] entries, so next may pass entries the filters skip.
local budget, found, nextSeq = tonumber(ARGV[4]), {}, after
while budget > 0 and #found < limit do
  local entries = redis.call('XRANGE', KEYS[2], '(' .. string.format('%d', nextSeq) .. '-0', '+', 'COUNT', math.min(budget, limit * 4))
  if #entries == 0 then break end
  for _, entry in ipairs(entries) do
    nextSeq = seqOf(entry)
    budget = budget - 1
    if wanted(entry[2]) then
      found[#found + 1] = entry
      if #found == limit then break end
    end
  end
end
return { last, trimmed, nextSeq, found }
