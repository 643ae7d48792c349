-- wrk -t2 -c8 -d30s --latency -s bench/wrk-search.lua http://127.0.0.1:8000/  (loopback only)
local qs = {"weight+decay", "diffusion+transformer", "robot+grasping", "large+language+model+reasoning", "ti:%22weight+decay%22+cat:cs.LG", "%E6%89%A9%E6%95%A3%E6%A8%A1%E5%9E%8B", "retrieval+augmented+generation", "video+generation", "graph+neural+network", "speech+recognition"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/api/search?q=" .. qs[(i % #qs) + 1])
end
