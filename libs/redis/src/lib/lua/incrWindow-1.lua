-- KEYS: counter; ARGV: windowMs. Counts one more and returns {count, ms left}. The first INCR of a
-- window sets its expiry in the same script, so a crash cannot leave a counter without one.
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
