-- KEYS: the slice's filter; ARGV: overfull factor, packed hashes (as bloomAdd). Returns {0, per item 1
-- (maybe added) or 0 (certainly not)}, or {1} when the filter does not exist (expired, never written,
-- lost with Redis) and {2} when more items were added than its capacity times the factor (its answers
-- would be "maybe" too often to be worth a read): the caller then decides as if it had no filter.
local key = KEYS[1]
if redis.call('exists', key) == 0 then return {1} end
local h = redis.call('bitfield_ro', key, 'GET', 'u32', 0, 'GET', 'u8', 32, 'GET', 'u32', 64, 'GET', 'u32', 96)
local m, k = h[1], h[2]
if m == 0 or k == 0 then return redis.error_reply('corrupt bloom filter header at ' .. key) end
if h[4] > h[3] * tonumber(ARGV[1]) then return {2} end
local s = ARGV[2]
local items = #s / 8
local out = {0}
local args = {}
local owners = {}
local function flush()
  if #args == 0 then return end
  local bits = redis.call('bitfield_ro', key, unpack(args))
  for x = 1, #bits do
    if bits[x] == 0 then out[owners[x]] = 0 end
  end
  args = {}
  owners = {}
end
for j = 0, items - 1 do
  local a, b, c, d, e, f, g, hh = string.byte(s, 1 + 8 * j, 8 + 8 * j)
  local h1 = ((a * 256 + b) * 256 + c) * 256 + d
  local h2 = ((e * 256 + f) * 256 + g) * 256 + hh
  out[j + 2] = 1
  for i = 0, k - 1 do
    local n = #args
    args[n + 1] = 'GET'
    args[n + 2] = 'u1'
    args[n + 3] = 128 + (h1 + i * h2) % m
    owners[#owners + 1] = j + 2
  end
  if #args >= 3000 then flush() end
end
flush()
return out
