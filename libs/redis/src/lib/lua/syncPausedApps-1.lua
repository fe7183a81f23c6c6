-- Makes the hash what MySQL says (ARGV: now, trustMs, then app, pausedAt, resumedAt-or-'' per pause),
-- except for an entry the api wrote less than trustMs ago that is ahead of MySQL (a later pause, or the
-- resume of the same pause): its transaction may still be committing. Returns {written, removed}.
local now, trust = tonumber(ARGV[1]), tonumber(ARGV[2])
local want = {}
for i = 3, #ARGV, 3 do want[ARGV[i]] = {ARGV[i + 1], ARGV[i + 2]} end
local written, removed, seen = 0, 0, {}
local current = redis.call('HGETALL', KEYS[1])
for i = 1, #current, 2 do
  local app = current[i]
  local p, r, w = string.match(current[i + 1], '^(%d+):(%d*):(%d+)$')
  local fresh = w ~= nil and tonumber(w) > now - trust
  local m = want[app]
  seen[app] = true
  if m == nil then
    if not fresh then redis.call('HDEL', KEYS[1], app); removed = removed + 1 end
  elseif p ~= m[1] or r ~= m[2] then
    local ahead = p ~= nil and (tonumber(p) > tonumber(m[1]) or (p == m[1] and r ~= '' and m[2] == ''))
    if not (ahead and fresh) then
      redis.call('HSET', KEYS[1], app, m[1] .. ':' .. m[2] .. ':' .. ARGV[1]); written = written + 1
    end
  end
end
for app, m in pairs(want) do
  if not seen[app] then redis.call('HSET', KEYS[1], app, m[1] .. ':' .. m[2] .. ':' .. ARGV[1]); written = written + 1 end
end
return {written, removed}
