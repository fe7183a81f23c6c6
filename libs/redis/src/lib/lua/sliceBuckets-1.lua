-- Records the bucket count of a minute on first use (SET NX with an absolute expiry) and returns the
-- count in force, in one atomic step, so concurrent first users all read the same value.
-- KEYS: slice-buckets; ARGV: the count to record (the default, or the migrator's from the minute's
-- fires), expiry (epoch ms).
redis.call('set', KEYS[1], ARGV[1], 'NX', 'PXAT', ARGV[2])
return redis.call('get', KEYS[1])
