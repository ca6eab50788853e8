-- Stores the outcome if ARGV token still holds an unexpired lease (compare-and-set on the token).
-- KEYS[1] record · ARGV token, state, responseJson, retentionMs
-- Reply 1 stored · 0 fence lost · 2 already completed by this same token (a retried complete)
local key = KEYS[1]
local token, terminal, response, retention_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if terminal ~= 'succeeded' and terminal ~= 'failed_final' then
  return redis.error_reply('ERR oncely: complete needs succeeded or failed_final, got ' .. tostring(terminal))
end
local raw = redis.call('GET', key)
if not raw then return 0 end
if not is_in_progress(raw) then
  -- Decodes the stored response too, but only a retried complete comes this way.
  if cjson.decode(raw).token == token then return 2 end
  return 0
end
local record = read_in_progress(key, raw)
local now = now_ms()
if record.token ~= token or record.leaseUntil <= now then return 0 end

local expires_at = now + retention_ms
-- The token stays so a retried complete of the same owner can be recognised; the lease is over.
redis.call('SET', key, string.format('{"state":"%s","fence":%d,"token":%s,"fingerprint":%s,"createdAt":%d,"expiresAt":%d,"response":',
  terminal, record.fence, cjson.encode(token), cjson.encode(record.fingerprint), record.createdAt, expires_at) .. response .. '}',
  'PXAT', expires_at)
return 1
