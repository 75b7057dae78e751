#!/usr/bin/env bash
# Measures a server framework's HTTPCacheMiddleware in a running app with wrk on 127.0.0.1:
# requests per second and latency of a route whose handler takes 1 ms, without the cache and as a
# cache hit, beside a route that answers at once, alternated in three rounds at 32 and at 1
# connection (docs/benchmarks.md, "Hummingbird" and "Vapor"). Then the framework's key-value
# driver's get hits beside the framework's own in-memory one.
#
#   scripts/server-bench/run.sh hummingbird|vapor [SECONDS-PER-RUN]   (default 10; needs wrk: Debian's wrk)
#
# CONNECTIONS="32 8 1" sets the connection counts to run (default "32 1").
#
# The app is stash-hummingbird-bench (Benchmarks/NIO/stash-hummingbird-bench) or stash-vapor-bench
# (Benchmarks/NIO/stash-vapor-bench): `serve` serves /plain/report, /cached/report and /plain/instant.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
framework="${1:?usage: scripts/server-bench/run.sh hummingbird|vapor [SECONDS]}"
seconds="${2:-10}"
case "$framework" in
    hummingbird) product=stash-hummingbird-bench; driver=persist ;;
    vapor) product=stash-vapor-bench; driver=cache ;;
    *) echo "server-bench: no bench for '$framework' (hummingbird or vapor)" >&2; exit 2 ;;
esac
command -v wrk >/dev/null 2>&1 || { echo "server-bench: wrk is missing (Debian: wrk)" >&2; exit 2; }
(cd "$root" && swift build -c release --scratch-path .build-release --enable-all-traits --product "$product")
bench="$root/.build-release/release/$product"
log="$(mktemp)"
"$bench" serve >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do grep -q "bench serving on" "$log" && break; sleep 0.1; done
port="$(sed -n 's/.*bench serving on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -1)"
[ -n "$port" ] || { echo "server-bench: the app did not start" >&2; cat "$log" >&2; exit 2; }
curl -s -o /dev/null "http://127.0.0.1:$port/cached/report"   # store it
# 32 connections (the 1 ms handler's waits overlap), then 1 connection (they do not).
for connections in ${CONNECTIONS:-32 1}; do
    for pair in 1 2 3; do
        for path in plain/report cached/report plain/instant; do
            echo "=== $framework, $connections connections, pair $pair: /$path"
            wrk -t1 -c"$connections" -d"${seconds}s" --latency "http://127.0.0.1:$port/$path" | grep -E "Requests/sec|  50%|  99%"
        done
    done
done
"$bench" "$driver"
