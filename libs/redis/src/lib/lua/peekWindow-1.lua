-- KEYS: counter. Returns {count, ms left} without counting ({0, 0} when no window is running).
local n = redis.call('GET', KEYS[1])
if not n then return {0, 0} end
return {tonumber(n), redis.call('PTTL', KEYS[1])}
