-- Appends a batch's entries to one stream (KEYS[1]) in order, with XADD. Once an entry of an
-- aggregate fails, the later entries of that aggregate are not appended, so a consumer never sees an
-- aggregate's event before an earlier one that is still to be retried.
-- ARGV: n, then n trim arguments (MAXLEN ~ len), then per entry: its aggregate, its field count, its fields.
-- Answers per entry: the entry id, {error} when its XADD failed, or 0 when it was not tried.
local command = { 'XADD', KEYS[1] }
local trim = tonumber(ARGV[1])
for i = 1, trim do command[#command + 1] = ARGV[1 + i] end
command[#command + 1] = '*'
local base = #command
local failed = {}
local replies = {}
local at = 2 + trim
while at <= #ARGV do
  local aggregate = ARGV[at]
  local count = tonumber(ARGV[at + 1])
  if failed[aggregate] then
    replies[#replies + 1] = 0
  else
    local xadd = {}
    for i = 1, base do xadd[i] = command[i] end
    for i = 1, count do xadd[base + i] = ARGV[at + 1 + i] end
    local reply = redis.pcall(unpack(xadd))
    if type(reply) == 'table' and reply.err then
      failed[aggregate] = true
      replies[#replies + 1] = { reply.err }
    else
      replies[#replies + 1] = reply
    end
  end
  at = at + 2 + count
end
return replies
