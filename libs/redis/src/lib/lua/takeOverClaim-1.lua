-- KEYS: a fire's claim; ARGV: the dead holder's token, the taker's token, ttlMs. Moves the claim to the
-- taker only while the dead holder still has it, so two takers cannot both win. 1 when taken, else 0.
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
