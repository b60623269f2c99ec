-- A trackingIdOrder member: the ID with NUL escaped as NUL 0xFF, a NUL, then its search key. It sorts
-- as the ID alone (the escape keeps byte order and no member is a prefix of another), and a search
-- reads the search key from the member itself.
local function encodeId(id)
  return (string.gsub(id, '%z', '\0\255')) .. '\0'
end
-- Where the encoded ID of a member ends (its NUL): a search key never starts with 0xFF (UTF-8).
local function idEnd(member)
  local at = 0
  repeat at = string.find(member, '\0', at + 1, true) until string.byte(member, at + 1) ~= 255
  return at
end
local function decodeId(member, at)
  return (string.gsub(string.sub(member, 1, at - 1), '%z\255', '\0'))
end
local function searchKeyOf(member)
  return string.sub(member, idEnd(member) + 1)
end
