vcl 4.1;
# Varnish in front of the bench origin, with its built-in VCL otherwise
# (as the cache-tests suite runs it).
backend origin {
    .host = "127.0.0.1";
    .port = "@ORIGIN_PORT@";
}
