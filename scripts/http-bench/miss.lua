-- wrk script: every request asks for a new URL (a counter in the query), so every request is a miss.
-- thread_id is a global that setup() gives each thread (a local would shadow it: both threads
-- would then ask for the same URLs, and a cache that coalesces concurrent misses would fetch
-- each URL once for two requests).
local counter = 0
local threads = 0
thread_id = 0
setup = function(thread)
    thread:set("thread_id", threads)
    threads = threads + 1
end
request = function()
    counter = counter + 1
    local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
    return wrk.format("GET", wrk.path .. sep .. "n=" .. thread_id .. "-" .. counter)
end
