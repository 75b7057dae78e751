-- wrk script: which URL each request asks for, by the mode given after `--`:
--   miss   a new URL per request (a counter in the query): every request is a miss;
--   cycle  each thread cycles through its own 128 of 256 URLs (a number in the query; the
--          threads' sets are disjoint), so the requests in flight at one time name different
--          URLs: no cache can answer several of them with one coalesced revalidation.
-- thread_id is a global that setup() gives each thread (a local would shadow it: both threads
-- would then ask for the same URLs, and a cache that coalesces would fetch once for two requests).
local counter = 0
local threads = 0
local mode = "miss"
thread_id = 0
setup = function(thread)
    thread:set("thread_id", threads)
    threads = threads + 1
end
init = function(args)
    mode = args[1] or "miss"
end
request = function()
    counter = counter + 1
    local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
    if mode == "cycle" then
        return wrk.format("GET", wrk.path .. sep .. "u=" .. (thread_id * 128 + counter % 128))
    end
    return wrk.format("GET", wrk.path .. sep .. "n=" .. thread_id .. "-" .. counter)
end
