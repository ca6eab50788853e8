-- Shared by every store script. A record is one JSON string whose first member is its state. A
-- fresh claim is written by a plain SET NX from the client, so its times are relative: the key's
-- expiry, set by this server's clock, says when it was claimed (PEXPIRETIME minus ttlMs).
local IN_PROGRESS = '{"state":"in_progress"'

local function now_ms()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

local function is_in_progress(raw)
  return string.sub(raw, 1, #IN_PROGRESS) == IN_PROGRESS
end

-- Decodes an in-progress record, with a fresh claim's relative times turned into this server's clock.
local function read_in_progress(key, raw)
  local record = cjson.decode(raw)
  if record.ttlMs then
    local expires = redis.call('PEXPIRETIME', key)
    if expires < 0 then error('oncely: a fresh claim without an expiry at ' .. key) end
    record.createdAt = expires - record.ttlMs
    record.expiresAt = expires
    record.leaseUntil = record.createdAt + record.leaseMs
  end
  return record
end

local function in_progress_json(fence, token, fingerprint, created_at, expires_at, lease_until)
  return string.format('{"state":"in_progress","fence":%d,"token":%s,"fingerprint":%s,"createdAt":%d,"expiresAt":%d,"leaseUntil":%d}',
    fence, cjson.encode(token), cjson.encode(fingerprint), created_at, expires_at, lease_until)
end

-- How `claim` and `get` answer a record: {'existing', json with absolute times, leaseRemainingMs|-1}.
local function existing_in_progress(r, now)
  return {'existing', in_progress_json(r.fence, r.token, r.fingerprint, r.createdAt, r.expiresAt, r.leaseUntil),
    math.max(0, r.leaseUntil - now)}
end
