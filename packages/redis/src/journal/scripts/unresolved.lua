-- Lists ids to reconcile, oldest first: every unknown entry and the pending ones idle since the cutoff.
-- KEYS[1] pending · KEYS[2] unknown index · ARGV staleAfterMs, limit
-- Reply {cutoffMs, id, score, id, score, ...} (the cutoff lets the caller re-check what it reads next)
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local cutoff = now - tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local unknown = redis.call('ZRANGE', KEYS[2], 0, limit - 1, 'WITHSCORES')
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', cutoff), 'WITHSCORES', 'LIMIT', 0, limit)
-- Merge two score-ordered lists, keeping the oldest `limit`.
local reply, i, j = { string.format('%d', cutoff) }, 1, 1
while (#reply - 1) / 2 < limit and (i <= #unknown or j <= #stale) do
  local take_unknown = j > #stale or (i <= #unknown and tonumber(unknown[i + 1]) <= tonumber(stale[j + 1]))
  if take_unknown then
    table.insert(reply, unknown[i]); table.insert(reply, unknown[i + 1]); i = i + 2
  else
    table.insert(reply, stale[j]); table.insert(reply, stale[j + 1]); j = j + 2
  end
end
return reply
