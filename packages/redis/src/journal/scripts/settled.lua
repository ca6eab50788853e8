-- Lists settled ids old enough to purge, oldest first.
-- KEYS[1] settled index · ARGV olderThanMs, limit
-- Reply {cutoffMs, id, id, ...}
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local cutoff = string.format('%d', now - tonumber(ARGV[1]))
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, tonumber(ARGV[2]))
table.insert(ids, 1, cutoff)
return ids
