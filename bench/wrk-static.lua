-- A static file, one request every 50 ms per connection: the latency a page's CSS sees while
-- searches run (run it next to bench/wrk-search.lua).
--
--   wrk -t1 -c1 -d60s --latency -s bench/wrk-static.lua http://127.0.0.1:8000/static/style.css
function delay()
  return 50
end
