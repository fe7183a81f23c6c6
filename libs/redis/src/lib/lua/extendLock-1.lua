-- Extends the lease of lock KEYS[1] to ARGV[2] ms only while it holds token ARGV[1] (a lock that
-- expired and was taken by another replica must not be extended by its late first holder).
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
