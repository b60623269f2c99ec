-- Search blocks (layout.ts searchBlockKeyOf): TK the heads ('' and trackingIdOrder members); the
-- STRING 'tb:<head>' is the count of IDs in the block's range in 3 digits, then '\254' .. search key
-- per ID, in any order. 0xFE is in no UTF-8 text, so a search never matches across two keys. TC, while
-- blocks are built for IDs stored before them, is the last member built: members after it are in no
-- block yet.
local BLOCK_MAX, BLOCK_FILL = {{SEARCH_BLOCK_MAX}}, {{SEARCH_BLOCK_FILL}}
local function blockHead(TK, member)
  return redis.call('ZRANGE', TK, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
end
-- TK is '<prefix>tk'.
local function blockKey(TK, head)
  return string.sub(TK, 1, -3) .. 'tb:' .. head
end
local function blockValue(count, keys)
  return string.format('%03d', count) .. table.concat(keys)
end
