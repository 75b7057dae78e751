vcl 4.1;
# Varnish in front of the bench origin, with its built-in VCL otherwise
# (as the cache-tests suite runs it).
backend origin {
    .host = "127.0.0.1";
    .port = "@ORIGIN_PORT@";
}

# The revalidation scenario: the built-in VCL makes a max-age=0 response uncacheable (hit-for-miss),
# so every request would be a full 200 fetch without a validator. Kept for an hour past its TTL,
# the response is stored and every request revalidates it (If-None-Match, a 304), as the other
# caches do. The TTL is 1 µs, not 0: Varnish 7.1 stores a zero-TTL object but never revalidates
# it (each request was a full fetch, seen in the origin's log).
sub vcl_backend_response {
    if (bereq.url ~ "^/revalidate/") {
        set beresp.ttl = 0.001ms;
        set beresp.grace = 0s;
        set beresp.keep = 1h;
        return (deliver);
    }
}
