-- wrk script: every request asks for a new URL (a counter in the query), so every request is a miss.
local counter = 0
local thread_id = 0
local threads = 0
setup = function(thread)
    thread:set("thread_id", threads)
    threads = threads + 1
end
request = function()
    counter = counter + 1
    local sep = string.find(wrk.path, "?", 1, true) and "&" or "?"
    return wrk.format("GET", wrk.path .. sep .. "n=" .. thread_id .. "-" .. counter)
end
