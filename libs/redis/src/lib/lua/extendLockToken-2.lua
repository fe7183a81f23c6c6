-- KEYS[1] lock, KEYS[2] optional guard; ARGV token, ttl, reclaim flag. 1 held, 2 reclaimed, 0 lost.
-- A free lock is taken again with the same token only when asked to and the guard key (the slice's
-- done marker) does not exist: a slice finished meanwhile must not be worked again.
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if v == false and ARGV[3] == '1' then
  if KEYS[2] ~= nil and redis.call('exists', KEYS[2]) == 1 then return 0 end
  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0
