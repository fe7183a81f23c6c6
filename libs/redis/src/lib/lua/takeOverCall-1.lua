-- KEYS: chunk; ARGV: ttlMs, index. Sets "taken over" (the holder can no longer start the call), then
-- returns 2 when the chunk is not open (lost, flushed, never opened: nothing is proven), 1 when the
-- call started, 0 when it had not.
local i = tonumber(ARGV[2])
redis.call('setbit', KEYS[1], 2 * i + 3, 1)
local open = redis.call('getbit', KEYS[1], 0)
local called = redis.call('getbit', KEYS[1], 2 * i + 2)
redis.call('pexpire', KEYS[1], ARGV[1])
if open == 0 then return 2 end
return called
