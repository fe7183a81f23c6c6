-- Deletes KEYS[1] only while it holds ARGV[1]: a lock's or a marker's late first holder must not
-- delete what another holder took since. Returns 1 when deleted, 0 otherwise.
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
