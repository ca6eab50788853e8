-- Reads a record with the lease judged by this server's clock; an expired key reads as absent.
-- KEYS[1] record · Reply nil or {'existing', recordJson, leaseRemainingMs|-1}
local key = KEYS[1]
local raw = redis.call('GET', key)
if not raw then return false end
if not is_in_progress(raw) then return {'existing', raw, -1} end
return existing_in_progress(read_in_progress(key, raw), now_ms())
