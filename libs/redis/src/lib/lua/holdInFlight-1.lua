-- KEYS: in-flight; ARGV: fireId, holdMs. Keeps (or puts back) the fire as the one in flight, unless
-- another fire took its place meanwhile. Returns 1 when held, 0 otherwise.
local cur = redis.call('GET', KEYS[1])
if (not cur) or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
