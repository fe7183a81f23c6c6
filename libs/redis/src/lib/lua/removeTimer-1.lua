-- Removes one timer's members scored in [ARGV[1], ARGV[2]) from one slice; ARGV[3] is the timer's
-- fire id prefix. Returns how many were removed.
local members = redis.call('zrangebyscore', KEYS[1], ARGV[1], '(' .. ARGV[2])
local prefix = ARGV[3]
local n = 0
for _, m in ipairs(members) do
  if string.sub(m, 1, #prefix) == prefix then n = n + redis.call('zrem', KEYS[1], m) end
end
return n
