#!/usr/bin/env bash
# Loopback load test of stash-proxy beside nginx's proxy_cache and Varnish, in one run, against
# one origin (nginx serving static files). wrk drives each; every scenario is measured on the
# three caches in turn, RUNS times, and the medians are printed as a Markdown table.
#
#   scripts/http-bench/run.sh [--runs N] [--duration SECONDS] [--connections N] [--no-build]
#                             [--caches "stash-proxy nginx varnish"]
#
# --caches may also name stash-hummingbird: stash-hummingbird-proxy, the same cache as an
# HTTPCacheMiddleware in a Hummingbird app with one forwarding route (scripts/http-conformance).
#
# Scenarios: a fresh 1 KB hit, a fresh 1 MB hit, a miss (a new URL per request, 1 KB, stored),
# and a revalidation (256 stored responses, stale at once, with an ETag, asked for in turn so that
# no two requests in flight name the same URL: each request makes the cache ask the origin, which
# answers 304; see nginx.conf and varnish.vcl for what nginx and Varnish need to do so). The origin logs each status, and the
# table shows, per client request, how many 200s and 304s the origin sent during the run: the
# check that every cache did the work the scenario names.
# Servers listen on 127.0.0.1 on free ports and are stopped on exit. Needs wrk, nginx, varnishd.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/http-bench"
runs=3
duration=10
connections=32
build=1
caches=(stash-proxy nginx varnish)
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --duration) duration="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        --no-build) build=0 ;;
        --caches) read -r -a caches <<<"$2"; shift ;;
        *) echo "usage: $0 [--runs N] [--duration SECONDS] [--connections N] [--no-build] [--caches LIST]" >&2; exit 2 ;;
    esac
    shift
done
for tool in wrk nginx varnishd python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "http-bench: $tool is missing (Debian: wrk, nginx-light, varnish)" >&2; exit 2; }
done

with_stash=0
with_hummingbird=0
for cache in "${caches[@]}"; do
    [ "$cache" = stash-proxy ] && with_stash=1
    [ "$cache" = stash-hummingbird ] && with_hummingbird=1
done
if [ "$build" = 1 ] && [ "$with_stash" = 1 ]; then (cd "$root" && swift build -c release --scratch-path .build-release --enable-all-traits --product stash-proxy); fi
if [ "$build" = 1 ] && [ "$with_hummingbird" = 1 ]; then (cd "$root" && swift build -c release --scratch-path .build-release --enable-all-traits --product stash-hummingbird-proxy); fi
bin_path="$(cd "$root" && swift build -c release --scratch-path .build-release --enable-all-traits --show-bin-path)"

dir="$root/.build-bench/http"
rm -rf "$dir" && mkdir -p "$dir/www/fresh" "$dir/www/revalidate" "$dir/stash-cache" "$dir/hummingbird-cache"
head -c 1024 /dev/urandom > "$dir/www/fresh/1k"
head -c 1048576 /dev/urandom > "$dir/www/fresh/1m"
cp "$dir/www/fresh/1k" "$dir/www/revalidate/1k"

pids=()
stop_all() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_for_port() {
    local i
    for i in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "http-bench: nothing listens on 127.0.0.1:$1" >&2
    return 1
}
render() { # template output
    sed -e "s|@DIR@|$dir|g" -e "s|@ROOT@|$dir/www|g" -e "s|@ORIGIN_PORT@|$origin_port|g" \
        -e "s|@NGINX_PORT@|$nginx_port|g" "$1" > "$2"
}

origin_port="$(free_port)"; nginx_port="$(free_port)"; varnish_port="$(free_port)"; stash_port="$(free_port)"
hummingbird_port="$(free_port)"
render "$here/origin.nginx.conf" "$dir/origin.conf"
render "$here/nginx.conf" "$dir/nginx.conf"
render "$here/varnish.vcl" "$dir/varnish.vcl"

nginx -p "$dir" -c "$dir/origin.conf" -g 'daemon off;' &
pids+=($!)
nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' &
pids+=($!)
varnishd -F -a "127.0.0.1:$varnish_port" -T none -f "$dir/varnish.vcl" -s malloc,1g -n "$dir/varnish" \
    >"$dir/varnish.log" 2>&1 &
pids+=($!)
listening=("$origin_port" "$nginx_port" "$varnish_port")
if [ "$with_stash" = 1 ]; then
    "$bin_path/stash-proxy" --listen "127.0.0.1:$stash_port" --origin "http://127.0.0.1:$origin_port" \
        --directory "$dir/stash-cache" >"$dir/stash-proxy.log" 2>&1 &
    pids+=($!)
    listening+=("$stash_port")
fi
if [ "$with_hummingbird" = 1 ]; then
    "$bin_path/stash-hummingbird-proxy" --listen "127.0.0.1:$hummingbird_port" --origin "http://127.0.0.1:$origin_port" \
        --directory "$dir/hummingbird-cache" >"$dir/stash-hummingbird.log" 2>&1 &
    pids+=($!)
    listening+=("$hummingbird_port")
fi
for port in "${listening[@]}"; do wait_for_port "$port"; done

declare -A ports=([stash-proxy]="$stash_port" [stash-hummingbird]="$hummingbird_port" [nginx]="$nginx_port" [varnish]="$varnish_port")
scenarios=(hit-1k hit-1m miss-1k revalidate-1k)
path_of() {
    case "$1" in
        hit-1k) echo /fresh/1k ;;
        hit-1m) echo /fresh/1m ;;
        miss-1k) echo "/fresh/1k?run=$2" ;;
        revalidate-1k) echo /revalidate/1k ;;
    esac
}

# Warm every cache: two requests per URL, so even a cache that stores on the second sight holds it;
# the revalidation URLs by a short wrk run (each of the 256 is asked for many times).
for cache in "${caches[@]}"; do
    for scenario in hit-1k hit-1m; do
        for _ in 1 2; do
            curl -s -o /dev/null "http://127.0.0.1:${ports[$cache]}$(path_of "$scenario")"
        done
    done
    wrk -t2 -c"$connections" -d2s -s "$here/urls.lua" "http://127.0.0.1:${ports[$cache]}$(path_of revalidate-1k)" -- cycle >/dev/null
done

# The origin's access log holds one status per line, written as each request ends.
origin_log="$dir/origin-access.log"
origin_lines() { sleep 0.3; if [ -f "$origin_log" ]; then wc -l < "$origin_log"; else echo 0; fi; }

results="$dir/results.tsv"
: > "$results"
for run in $(seq 1 "$runs"); do
    for scenario in "${scenarios[@]}"; do
        for cache in "${caches[@]}"; do
            url="http://127.0.0.1:${ports[$cache]}$(path_of "$scenario" "$run-$cache")"
            script=()
            case "$scenario" in
                miss-1k) script=(-s "$here/urls.lua" "$url" -- miss) ;;
                revalidate-1k) script=(-s "$here/urls.lua" "$url" -- cycle) ;;
                *) script=("$url") ;;
            esac
            before="$(origin_lines)"
            out="$(wrk -t2 -c"$connections" -d"${duration}s" --latency "${script[@]}")"
            echo "$out" > "$dir/wrk-$scenario-$cache-$run.txt"
            after="$(origin_lines)"
            requests="$(awk '/requests in/ { print $1 }' <<<"$out")"
            read -r origin_200 origin_304 < <(sed -n "$((before + 1)),${after}p" "$origin_log" |
                awk '{ n[$1]++ } END { print n["200"] + 0, n["304"] + 0 }')
            rps="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")"
            p50="$(awk '$1 == "50%" { print $2 }' <<<"$out")"
            p99="$(awk '$1 == "99%" { print $2 }' <<<"$out")"
            errors="$(awk '/Non-2xx or 3xx responses:/ { print $5 } /Socket errors:/ { print "socket-errors" }' <<<"$out" | tr '\n' ' ')"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$cache" "$run" "$rps" "$p50" "$p99" \
                "${errors:-0}" "$requests" "$origin_200" "$origin_304" >> "$results"
            echo "run $run $scenario $cache: $rps req/s, p50 $p50, p99 $p99 ${errors}; $requests requests, origin sent $origin_200 × 200, $origin_304 × 304"
        done
    done
done

python3 - "$results" "$runs" "$duration" "$connections" "${caches[@]}" <<'PY'
import statistics, sys
caches = sys.argv[5:]
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
def ms(text):
    units = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
    for unit in ("us", "ms", "s"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float("nan")
med = {}
for scenario, cache, run, rps, p50, p99, errors, requests, o200, o304 in rows:
    per = lambda n: int(n) / max(1, int(requests))
    med.setdefault((scenario, cache), []).append((float(rps), ms(p50), ms(p99), per(o200), per(o304)))
print(f"\nmedians of {sys.argv[2]} runs, wrk -t2 -c{sys.argv[4]} -d{sys.argv[3]}s on loopback\n")
print("| scenario | cache | requests/s | p50 ms | p99 ms | ÷ nginx (req/s) | origin 200s per request | origin 304s per request |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for scenario in ("hit-1k", "hit-1m", "miss-1k", "revalidate-1k"):
    base = statistics.median(r[0] for r in med[(scenario, "nginx")]) if (scenario, "nginx") in med else float("nan")
    for cache in caches:
        values = med[(scenario, cache)]
        rps, p50, p99, o200, o304 = (statistics.median(v[i] for v in values) for i in range(5))
        print(f"| {scenario} | {cache} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {rps / base:.2f}× | {o200:.2f} | {o304:.2f} |")
PY
