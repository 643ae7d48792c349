-- Search load: every query of a list, each sent once per cycle (so no cache answers them all).
--
--   wrk -t2 -c8 -d60s --latency -s bench/wrk-search.lua http://127.0.0.1:8000/ \
--       -- ../shared/data/load-queries.txt 2
--
-- Arguments after --: the query file (one query a line) and the number of wrk threads (-t);
-- thread k sends queries k, k+T, k+2T, ... so the threads together send each query once per
-- cycle. Loopback only: point it at your own server. Hybrid search, default page (20 hits
-- with facets and snippets); any non-2xx answer is counted by wrk as an error.
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
  local path = args[1] or "../shared/data/load-queries.txt"
  local nthreads = tonumber(args[2] or "2")
  queries = {}
  local n = 0
  for line in io.lines(path) do
    if line ~= "" then
      if n % nthreads == id then
        table.insert(queries, "/api/search?q=" .. urlencode(line))
      end
      n = n + 1
    end
  end
  i = 0
end

function request()
  i = i % #queries + 1
  return wrk.format("GET", queries[i])
end
