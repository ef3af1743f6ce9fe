end

local out = {}
for i = 1, #KEYS do
  local a = {}
  for j = 1, 7 do
    local v = ARGV[7 * (i - 1) + j]
    if v ~= '' then a[j] = v end
  end
  out[i] = releaseOne({KEYS[i]}, a)
end
return out
