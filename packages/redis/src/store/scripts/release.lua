-- Deletes the in-progress record if ARGV token still holds an unexpired lease, so a retry may execute.
-- KEYS[1] record · ARGV token · Reply 1 released · 0 fence lost
local key = KEYS[1]
local raw = redis.call('GET', key)
if not raw or not is_in_progress(raw) then return 0 end
local record = read_in_progress(key, raw)
if record.token ~= ARGV[1] or record.leaseUntil <= now_ms() then return 0 end
redis.call('DEL', key)
return 1
