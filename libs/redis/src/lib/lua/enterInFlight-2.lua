-- KEYS: in-flight, waiting; ARGV: fireId, holdMs, waitMs, policy. A fire runs when nothing is in flight
-- and no other fire waits (the waiting one goes first), or it is the one in flight (a redelivery); under
-- buffer_one it takes the free waiting place.
local cur = redis.call('GET', KEYS[1])
local waiting = redis.call('GET', KEYS[2])
if cur == ARGV[1] or (not cur and (not waiting or waiting == ARGV[1])) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if waiting == ARGV[1] then redis.call('DEL', KEYS[2]) end
  return {'run', ARGV[1]}
end
if cur and cur ~= ARGV[1] and ARGV[4] == 'buffer_one' and (not waiting or waiting == ARGV[1]) then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return {'wait', cur}
end
return {'skip', (cur and cur ~= ARGV[1]) and cur or waiting}
