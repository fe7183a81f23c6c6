-- KEYS: chunk; ARGV: ttlMs, indexes. Per index: 1 (called bit set: go ahead) or 0 (taken over: do not call).
-- Bit layout of a chunk: bit 0 "open", then per claim i: bit 2i+2 "called", bit 2i+3 "taken over".
local out = {}
for j = 2, #ARGV do
  local i = tonumber(ARGV[j])
  if redis.call('getbit', KEYS[1], 2 * i + 3) == 1 then out[j - 1] = 0
  else redis.call('setbit', KEYS[1], 2 * i + 2, 1) out[j - 1] = 1 end
end
redis.call('pexpire', KEYS[1], ARGV[1])
return out
