-- wrk script: each thread cycles through its own 128 of 256 URLs (a number in the query; the
-- threads' sets are disjoint), so the requests in flight at one time name different URLs: no
-- cache can answer several of them with one coalesced revalidation, and each request costs one
-- conditional request to the origin.
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
    return wrk.format("GET", wrk.path .. sep .. "u=" .. (thread_id * 128 + counter % 128))
end
