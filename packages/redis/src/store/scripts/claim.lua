-- Claim-or-read in one command, for a record the client's SET NX found in progress (and for any
-- record): claims when the key is absent (an expired key is absent) or in progress with a lapsed
-- lease and the same fingerprint; a record holding this claim's own token is this claim; otherwise
-- answers the record as it stands.
-- KEYS[1] record · ARGV fingerprint, token, leaseMs, retentionMs
-- Reply {'claimed', fence, takeover 0|1} or {'existing', recordJson, leaseRemainingMs|-1}
local key = KEYS[1]
local fingerprint, token = ARGV[1], ARGV[2]
local lease_ms, retention_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
-- Lease expiry is judged by this server's clock, never by the application's.
local now = now_ms()
local raw = redis.call('GET', key)
local fence, created_at = 1, now
if raw then
  if not is_in_progress(raw) then return {'existing', raw, -1} end
  local record = read_in_progress(key, raw)
  -- This very claim, sent again: ioredis resends a command whose connection died before the reply came.
  if record.token == token then return {'claimed', record.fence, record.fence > 1 and 1 or 0} end
  if record.leaseUntil > now or record.fingerprint ~= fingerprint then return existing_in_progress(record, now) end
  fence, created_at = record.fence + 1, record.createdAt
end
-- Retention never ends before the lease, so a record cannot vanish while its owner still holds it.
local expires_at = now + math.max(lease_ms, retention_ms)
redis.call('SET', key, in_progress_json(fence, token, fingerprint, created_at, expires_at, now + lease_ms), 'PXAT', expires_at)
return {'claimed', fence, raw and 1 or 0}
