-- Renews the lease for ARGV leaseMs from now if ARGV token still holds an unexpired lease.
-- KEYS[1] record · ARGV token, leaseMs · Reply 1 renewed · 0 fence lost
local key = KEYS[1]
local lease_ms = tonumber(ARGV[2])
local raw = redis.call('GET', key)
if not raw or not is_in_progress(raw) then return 0 end
local record = read_in_progress(key, raw)
local now = now_ms()
if record.token ~= ARGV[1] or record.leaseUntil <= now then return 0 end
local renewed = now + lease_ms
-- Retention grows with the lease so the record outlives the work it guards.
local expires_at = math.max(record.expiresAt, renewed)
redis.call('SET', key, in_progress_json(record.fence, record.token, record.fingerprint, record.createdAt, expires_at, renewed),
  'PXAT', expires_at)
return 1
