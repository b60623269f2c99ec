-- An invalidation (core SuppressionInvalidation): the hashes of a project whose suppressions changed.
local function publish(channel, projectId, hashes)
  if #hashes > 0 then redis.call('PUBLISH', channel, cjson.encode({ projectId = projectId, hashes = hashes })) end
end
