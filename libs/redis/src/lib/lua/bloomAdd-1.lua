-- KEYS: the slice's filter; ARGV: expireAtMs, bits m, hashes k, capacity n, packed hashes (8 bytes an
-- item: h1 then h2, 32-bit big-endian). Header (bits 0-127): u32 m at 0, u8 k at 32, u32 capacity at 64,
-- u32 items added at 96; the item bits start at 128. The first writer creates the header with its m, k
-- and n and the absolute expiry; later writers use the header's m and k, so every writer and reader of a
-- slice agrees however it sized it. Bits are set with BITFIELD, a few thousand a command: one command
-- (one AOF entry) per chunk instead of one SETBIT per bit.
local key = KEYS[1]
local m, k
local created = redis.call('exists', key) == 0
if created then
  m = tonumber(ARGV[2])
  k = tonumber(ARGV[3])
  redis.call('bitfield', key, 'SET', 'u32', 0, m, 'SET', 'u8', 32, k, 'SET', 'u32', 64, tonumber(ARGV[4]))
else
  local h = redis.call('bitfield', key, 'GET', 'u32', 0, 'GET', 'u8', 32)
  m = h[1]
  k = h[2]
end
if m == 0 or k == 0 then return redis.error_reply('corrupt bloom filter header at ' .. key) end
local s = ARGV[5]
local items = #s / 8
local args = {}
local function flush()
  if #args > 0 then
    redis.call('bitfield', key, unpack(args))
    args = {}
  end
end
for j = 0, items - 1 do
  local a, b, c, d, e, f, g, h = string.byte(s, 1 + 8 * j, 8 + 8 * j)
  local h1 = ((a * 256 + b) * 256 + c) * 256 + d
  local h2 = ((e * 256 + f) * 256 + g) * 256 + h
  for i = 0, k - 1 do
    local n = #args
    args[n + 1] = 'SET'
    args[n + 2] = 'u1'
    args[n + 3] = 128 + (h1 + i * h2) % m
    args[n + 4] = 1
  end
  if #args >= 4000 then flush() end
end
flush()
redis.call('bitfield', key, 'OVERFLOW', 'SAT', 'INCRBY', 'u32', 96, items)
-- Last: an expiry already past deletes the key at once, and nothing is left behind.
if created then redis.call('pexpireat', key, ARGV[1]) end
return items
